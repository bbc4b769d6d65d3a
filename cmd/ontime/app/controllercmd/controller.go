// Package controllercmd is ontime controller, the operator as its
// Deployment runs it: flags, leader election, the manager with every
// controller, the admission webhook's server, health probes.
package controllercmd

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/internal/controller"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/scheme"
	ontimewebhook "github.com/ontime-dev/ontime/internal/webhook"
)

type controllerOptions struct {
	cluster                 cli.ClusterFlags
	workers                 int
	qps                     float32
	burst                   int
	metricsAddress          string
	metricsSecure           bool
	probeAddress            string
	pprofAddress            string
	leaderElect             bool
	leaderElectionNamespace string
	spreadNamespace         string
	// namespaces, scheduledJobSelector and jobCache make the cache's scope.
	namespaces           []string
	scheduledJobSelector string
	jobCache             string
	cronJobWarmUp        bool
	// leaseDuration, renewDeadline and retryPeriod tune leader election.
	leaseDuration, renewDeadline, retryPeriod time.Duration
	// standbyGrace is how late a run may be before a replica that does
	// not lead starts it.
	standbyGrace                      time.Duration
	earlyStartImage, placeholderImage string
	placeholderPriorityClass          string
	logging                           zap.Options
	webhook                           webhookOptions
}

type webhookOptions struct {
	enabled       bool
	port          int
	certDir       string
	rotateCerts   bool
	namespace     string
	secret        string
	service       string
	dnsName       string
	configuration string
	// mutatingConfiguration is the Job webhook's configuration.
	mutatingConfiguration string
	writeCertFiles        bool
	crowdThreshold        int
	drain                 time.Duration
}

// NewCommand is `ontime controller`: the operator itself, as its Deployment
// runs it. version is the binary's (its default image's tag).
func NewCommand(version string) *cobra.Command {
	opts := controllerOptions{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the ontime operator against a Kubernetes cluster",
		Long: `Run the ontime operator: a controller-runtime manager with Prometheus
metrics, health and readiness probes and optional leader election.

It finds the cluster from --kubeconfig, then $KUBECONFIG, then the in-cluster
service account, then ~/.kube/config.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runController(cmd.Context(), opts)
		},
	}
	flags := cmd.Flags()
	opts.cluster.Bind(cmd, "", "")
	flags.IntVar(&opts.workers, "workers", 20, "ScheduledJobs reconciled at once")
	// client-go's default (QPS 5, controller-runtime 20) makes a thousand
	// minutely runs queue behind each other for a minute; each run costs
	// about three requests (create, status, history cleanup).
	flags.Float32Var(&opts.qps, "kube-api-qps", 300, "sustained requests per second to the API server")
	flags.IntVar(&opts.burst, "kube-api-burst", 600, "burst of requests to the API server")
	flags.StringVar(&opts.metricsAddress, "metrics-bind-address", ":8443", `address of the Prometheus /metrics endpoint ("0" disables it)`)
	flags.BoolVar(&opts.metricsSecure, "metrics-secure", true,
		"serve /metrics over HTTPS only to callers the API server authenticates and authorizes to get /metrics (false: plain HTTP to anyone who reaches the port)")
	flags.StringVar(&opts.probeAddress, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	flags.StringVar(&opts.pprofAddress, "pprof-bind-address", "", "address of Go's /debug/pprof endpoints, for profiling (off when empty)")
	flags.BoolVar(&opts.leaderElect, "leader-elect", false, "elect a leader among replicas so that only one reconciles at a time")
	flags.StringVar(&opts.leaderElectionNamespace, "leader-election-namespace", os.Getenv("POD_NAMESPACE"),
		"namespace of the leader election Lease (default: $POD_NAMESPACE, or the pod's own namespace in a cluster)")
	// kube-controller-manager's flag names and defaults. A replica killed
	// without releasing the Lease is replaced only once it expires, so the
	// lease duration bounds how late runs get when a leader dies.
	flags.DurationVar(&opts.leaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"how long a standby waits after the leader's last renewal before taking over")
	flags.DurationVar(&opts.renewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"how long the leader keeps trying to renew before it stops leading (less than the lease duration)")
	flags.DurationVar(&opts.retryPeriod, "leader-elect-retry-period", 2*time.Second, "how often replicas try to acquire or renew the Lease")
	flags.DurationVar(&opts.standbyGrace, "standby-grace", controller.DefaultStandbyGrace,
		"with --leader-elect, a replica that does not lead starts a run the leader has not started this long after its time (0: only the leader acts, and a dead leader delays runs until its Lease expires)")
	flags.StringVar(&opts.earlyStartImage, "early-start-image", defaultImage(version),
		"image whose /ontime-wait holds the pods of EarlyStart warm-up runs until their scheduled time: ontime's image of the same release")
	flags.StringVar(&opts.placeholderImage, "placeholder-image", v1alpha1.DefaultPlaceholderImage,
		"image of placeholder pods whose owner names none (every annotated CronJob's): a mirror of the pause image where nodes cannot pull registry.k8s.io")
	flags.StringVar(&opts.placeholderPriorityClass, "placeholder-priority-class", v1alpha1.DefaultPlaceholderPriorityClass,
		"PriorityClass of placeholder pods whose owner names none (every annotated CronJob's): one the cluster's policies allow, below the runs' pods' priority")
	flags.StringSliceVar(&opts.namespaces, "namespaces", nil,
		"watch only these namespaces' ScheduledJobs (comma-separated; default all), to shard a cluster between controllers")
	flags.StringVar(&opts.scheduledJobSelector, "scheduledjob-selector", "",
		"watch only the ScheduledJobs with these labels (a label selector such as shard=a), to shard a cluster between controllers")
	flags.StringVar(&opts.jobCache, "job-cache", jobCacheAll,
		`Jobs to cache: "all" in the watched namespaces, or "owned", only those ontime created (needs --cronjob-warmup=false)`)
	flags.BoolVar(&opts.cronJobWarmUp, "cronjob-warmup", true,
		"run the warm-up controller of batch/v1 CronJobs annotated warmup.ontime.dev/lead (it caches every CronJob and Job)")
	w := &opts.webhook
	flags.StringVar(&opts.spreadNamespace, "spread-namespace", defaultNamespace(),
		"namespace of the ConfigMaps (ontime-spread-<group>) that hold Balanced spread groups' placements; it must exist")
	flags.BoolVar(&w.enabled, "webhook", true, "serve the admission webhooks: validating ScheduledJobs, Backfills and concurrency groups, and making a group-annotated CronJob's Jobs members of its group")
	flags.IntVar(&w.port, "webhook-port", 9443, "port of the admission webhook")
	flags.DurationVar(&w.drain, "webhook-drain", ontimewebhook.DefaultDrain,
		"how long a stopping controller keeps serving the webhook, closing each connection after its request, before it closes the rest")
	flags.IntVar(&w.crowdThreshold, "crowded-minute-threshold", ontimewebhook.DefaultCrowdThreshold,
		"warn at admission, proposing H, when a ScheduledJob's schedule starts in a minute with this many other ScheduledJobs and CronJobs (0: never)")
	flags.StringVar(&w.certDir, "webhook-cert-dir", filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs"), "directory of the webhook's tls.crt and tls.key")
	flags.BoolVar(&w.rotateCerts, "webhook-cert-rotation", true, "create and rotate the webhook certificate (turn off when cert-manager or another tool writes it)")
	flags.StringVar(&w.namespace, "webhook-namespace", defaultNamespace(), "namespace of the webhook's Service and certificate Secret")
	flags.StringVar(&w.secret, "webhook-secret", "ontime-webhook-server-cert", "Secret that holds the webhook's CA and certificate")
	flags.StringVar(&w.service, "webhook-service", "ontime-webhook-service", "Service the API server calls the webhook through")
	flags.StringVar(&w.dnsName, "webhook-dns-name", "", "name in the webhook certificate (default: <service>.<namespace>.svc)")
	flags.StringVar(&w.configuration, "webhook-configuration", "ontime-validating-webhook-configuration", "ValidatingWebhookConfiguration to inject the CA bundle into")
	flags.StringVar(&w.mutatingConfiguration, "mutating-webhook-configuration", "ontime-mutating-webhook-configuration",
		"MutatingWebhookConfiguration (the concurrency groups' Job webhook) to inject the CA bundle into")
	flags.BoolVar(&w.writeCertFiles, "webhook-write-cert-files", false,
		"copy the certificate Secret into --webhook-cert-dir (an emptyDir in the chart's pods), as a Secret volume would but within seconds of its rotation; also for a controller running outside the cluster (make dev)")
	logFlags := flag.NewFlagSet("logging", flag.ContinueOnError)
	opts.logging.BindFlags(logFlags)
	flags.AddGoFlagSet(logFlags)
	return cmd
}

func runController(ctx context.Context, opts controllerOptions) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts.logging)))
	setupLog := ctrl.Log.WithName("setup")

	scope, err := opts.scope()
	if err != nil {
		return err
	}
	registration := controller.Options{Workers: opts.workers, EarlyStartImage: opts.earlyStartImage, PlaceholderImage: opts.placeholderImage,
		PlaceholderPriorityClass: opts.placeholderPriorityClass,
		SpreadNamespace:          opts.spreadNamespace, CronJobWarmUp: opts.cronJobWarmUp, StandbyGrace: opts.standbyGrace}
	if err := registration.Validate(scope); err != nil {
		return cli.BadInput("%v", err)
	}
	if opts.leaderElect {
		// One answer to where the Lease is, for the manager and the standby.
		lease, err := opts.leaderLease()
		if err != nil {
			return err
		}
		opts.leaderElectionNamespace = lease.Namespace
		if opts.standbyGrace > 0 {
			registration.LeaderLease = &lease
		}
	}
	config, err := restConfig(&opts.cluster)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = opts.qps, opts.burst
	// Every request of the process goes through it: the caches' watches
	// too, whose failures say the cache may be behind.
	registration.Unanswered = recovery.NewUnanswered(clock.RealClock{})
	config.Wrap(registration.Unanswered.Wrap)
	if err := waitForAPI(ctx, config, opts.probeAddress); err != nil {
		return err
	}
	if err := releaseStaleLease(ctx, config, opts, setupLog); err != nil {
		return err
	}
	webhookServer := ontimewebhook.NewDrainingServer(webhook.NewServer(webhook.Options{Port: opts.webhook.port, CertDir: opts.webhook.certDir}),
		opts.webhook.drain, clock.RealClock{})
	// The webhook drains after the manager has stopped (and released the Lease).
	defer webhookServer.Wait()
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:                        scheme.New(),
		Cache:                         controller.CacheOptions(scope),
		NewCache:                      recovery.NewCache,
		WebhookServer:                 webhookServer,
		Metrics:                       controller.MetricsServer(opts.metricsAddress, opts.metricsSecure),
		HealthProbeBindAddress:        opts.probeAddress,
		PprofBindAddress:              opts.pprofAddress,
		LeaderElection:                opts.leaderElect,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       opts.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &opts.leaseDuration,
		RenewDeadline:                 &opts.renewDeadline,
		RetryPeriod:                   &opts.retryPeriod,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	if opts.webhook.enabled {
		if err := serveWebhook(mgr, opts.webhook, registration.Defaults()); err != nil {
			return err
		}
	}
	if err := controller.Register(ctx, mgr, clock.RealClock{}, registration); err != nil {
		return fmt.Errorf("registering controllers: %w", err)
	}
	setupLog.Info("starting manager", "metrics", opts.metricsAddress, "metricsSecure", opts.metricsSecure, "probes", opts.probeAddress, "leaderElection", opts.leaderElect,
		"namespaces", opts.namespaces, "scheduledJobSelector", opts.scheduledJobSelector, "jobCache", opts.jobCache, "cronJobWarmUp", opts.cronJobWarmUp)
	return mgr.Start(ctx)
}

// releaseStaleLease releases the leader election Lease if its holder has
// stopped leading (every replica was down longer than a lease duration),
// so that a replica leads at once: the runs due during the outage start
// when the first replica is back, not a lease duration later.
func releaseStaleLease(ctx context.Context, config *rest.Config, opts controllerOptions, log logr.Logger) error {
	if !opts.leaderElect {
		return nil
	}
	c, err := client.New(config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	key, err := opts.leaderLease()
	if err != nil {
		return err
	}
	released, since, err := recovery.ReleaseStaleLease(ctx, c, key, time.Now())
	if err != nil {
		return fmt.Errorf("reading the leader election Lease %s: %w", key, err)
	}
	if released {
		log.Info("released the leader election Lease: its holder last renewed it longer ago than its duration and the clock-skew bound", "lease", key,
			"renewedAgo", since.Round(time.Millisecond).String(), "maxClockSkew", recovery.MaxClockSkew.String())
	}
	return nil
}

// waitForAPI returns once the API server answers. Building the manager
// reads the API's discovery, and a process that exits when it cannot is
// restarted by its kubelet with a growing CrashLoopBackOff (10 s, 20 s,
// 40 s, …), which keeps the replica down long after a short outage (seen in
// make chaos: a leader that lost its Lease in a 45 s outage exited, and
// each restart failed at once). Meanwhile the probe address answers
// /healthz, so that the liveness probe does not restart it either, and
// /readyz with 503.
func waitForAPI(ctx context.Context, config *rest.Config, probeAddress string) error {
	probe, err := recovery.ReadyzProbe(config)
	if err != nil {
		return err
	}
	if probe(ctx) == nil {
		return nil
	}
	if probeAddress != "" && probeAddress != "0" {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "waiting for the API server", http.StatusServiceUnavailable)
		})
		server := &http.Server{Addr: probeAddress, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = server.ListenAndServe() }()
		defer func() { _ = server.Shutdown(context.Background()) }()
	}
	return recovery.WaitForAPI(ctx, probe, recovery.ProbeEvery)
}

// Values of --job-cache.
const (
	jobCacheAll   = "all"
	jobCacheOwned = "owned"
)

// scope is what this controller watches, from the flags.
func (opts controllerOptions) scope() (controller.Scope, error) {
	scope := controller.Scope{SpreadNamespace: opts.spreadNamespace, Namespaces: opts.namespaces}
	for _, namespace := range opts.namespaces {
		if problems := validation.IsDNS1123Label(namespace); len(problems) > 0 {
			return scope, cli.BadInput("--namespaces: %q is not a namespace name: %s", namespace, strings.Join(problems, "; "))
		}
	}
	if opts.scheduledJobSelector != "" {
		selector, err := labels.Parse(opts.scheduledJobSelector)
		if err != nil {
			return scope, cli.BadInput("--scheduledjob-selector %q: %v", opts.scheduledJobSelector, err)
		}
		scope.ScheduledJobSelector = selector
	}
	switch opts.jobCache {
	case jobCacheAll:
	case jobCacheOwned:
		scope.OwnedJobsOnly = true
	default:
		return scope, cli.BadInput("--job-cache %q: want %q or %q", opts.jobCache, jobCacheAll, jobCacheOwned)
	}
	return scope, nil
}

// restConfig loads the cluster's address and credentials.
// In a pod, with no flag naming a kubeconfig or context, that is the
// pod's service account (controller-runtime's order); otherwise kubectl's
// loading rules with kubectl's flags (--kubeconfig, --context, --server,
// --as, …).
func restConfig(cluster *cli.ClusterFlags) (*rest.Config, error) {
	if !cluster.Named() {
		config, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("finding the cluster (set --kubeconfig): %w", err)
		}
		return config, nil
	}
	return cluster.RestConfig()
}

// serveWebhook starts the admission webhook once its certificate is in
// place; until then /readyz fails, so no traffic reaches a replica that
// cannot serve it.
func serveWebhook(mgr ctrl.Manager, opts webhookOptions, defaults v1alpha1.ControllerDefaults) error {
	certsReady := make(chan struct{})
	if opts.rotateCerts {
		dnsName := opts.dnsName
		if dnsName == "" {
			dnsName = opts.service + "." + opts.namespace + ".svc"
		}
		secret := types.NamespacedName{Namespace: opts.namespace, Name: opts.secret}
		ready, err := ontimewebhook.RotateCerts(mgr, ontimewebhook.CertOptions{
			Dir:           opts.certDir,
			Secret:        secret,
			DNSName:       dnsName,
			Configuration: opts.configuration,

			MutatingConfiguration: opts.mutatingConfiguration,
		})
		if err != nil {
			return fmt.Errorf("setting up webhook certificates: %w", err)
		}
		if opts.writeCertFiles {
			if err := mgr.Add(&ontimewebhook.CertFileWriter{Reader: mgr.GetAPIReader(), Secret: secret, Dir: opts.certDir}); err != nil {
				return err
			}
		}
		go func() { <-ready; close(certsReady) }()
	} else {
		close(certsReady)
	}
	var serving atomic.Bool
	go func() {
		<-certsReady
		// GetWebhookServer adds the server to the manager, which starts it.
		if err := ontimewebhook.NewValidator(mgr.GetClient(), opts.crowdThreshold).WithDefaults(defaults).Register(mgr); err != nil {
			ctrl.Log.Error(err, "registering the ScheduledJob webhook")
			return
		}
		if err := ontimewebhook.NewBackfillValidator(mgr.GetAPIReader()).Register(mgr); err != nil {
			ctrl.Log.Error(err, "registering the Backfill webhook")
			return
		}
		if err := ontimewebhook.RegisterGroupValidators(mgr); err != nil {
			ctrl.Log.Error(err, "registering the concurrency groups' webhook")
			return
		}
		if err := ontimewebhook.RegisterCronJobValidator(mgr); err != nil {
			ctrl.Log.Error(err, "registering the CronJob webhook")
			return
		}
		ontimewebhook.RegisterJobGroupMutator(mgr)
		serving.Store(true)
	}()
	return mgr.AddReadyzCheck("webhook", func(req *http.Request) error {
		if !serving.Load() {
			return fmt.Errorf("webhook certificate not ready")
		}
		return mgr.GetWebhookServer().StartedChecker()(req)
	})
}

// defaultImage is this version's ontime image, never :latest: a build
// without a version (go build) names ontime:dev, which no registry has, and
// the Deployment (chart, install.yaml) always sets the flag.
func defaultImage(version string) string {
	return "ghcr.io/ontime-dev/ontime:" + version
}

// defaultNamespace is the pod's namespace in a cluster, else ontime-system.
func defaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "ontime-system"
}

// LeaderElectionID names the Lease the replicas elect their leader with
// (ontime check reads it).
const LeaderElectionID = "ontime-controller.ontime.dev"

// inClusterNamespace holds a pod's namespace, where the Lease is when
// --leader-election-namespace is not set.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leaderLease is the Lease leader election uses, which the standby
// watches: in --leader-election-namespace, or the pod's own namespace.
func (opts controllerOptions) leaderLease() (types.NamespacedName, error) {
	namespace := opts.leaderElectionNamespace
	if namespace == "" {
		data, err := os.ReadFile(inClusterNamespace)
		if err != nil {
			return types.NamespacedName{}, cli.BadInput("--leader-elect needs --leader-election-namespace outside a cluster (%v)", err)
		}
		namespace = strings.TrimSpace(string(data))
	}
	return types.NamespacedName{Namespace: namespace, Name: LeaderElectionID}, nil
}
