package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ontime-dev/ontime/internal/controller"
)

type controllerOptions struct {
	kubeconfig              string
	workers                 int
	qps                     float32
	burst                   int
	metricsAddress          string
	probeAddress            string
	leaderElect             bool
	leaderElectionNamespace string
	logging                 zap.Options
}

func newControllerCommand() *cobra.Command {
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
	flags.StringVar(&opts.kubeconfig, "kubeconfig", "", "path to a kubeconfig file")
	flags.IntVar(&opts.workers, "workers", 20, "ScheduledJobs reconciled at once")
	// client-go's default (QPS 5, controller-runtime 20) makes a thousand
	// minutely runs queue behind each other for a minute; each run costs
	// about three requests (create, status, history cleanup).
	flags.Float32Var(&opts.qps, "kube-api-qps", 300, "sustained requests per second to the API server")
	flags.IntVar(&opts.burst, "kube-api-burst", 600, "burst of requests to the API server")
	flags.StringVar(&opts.metricsAddress, "metrics-bind-address", ":8080", `address of the Prometheus /metrics endpoint ("0" disables it)`)
	flags.StringVar(&opts.probeAddress, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	flags.BoolVar(&opts.leaderElect, "leader-elect", false, "elect a leader among replicas so that only one reconciles at a time")
	flags.StringVar(&opts.leaderElectionNamespace, "leader-election-namespace", os.Getenv("POD_NAMESPACE"),
		"namespace of the leader election Lease (default: $POD_NAMESPACE, or the pod's own namespace in a cluster)")
	logFlags := flag.NewFlagSet("logging", flag.ContinueOnError)
	opts.logging.BindFlags(logFlags)
	flags.AddGoFlagSet(logFlags)
	return cmd
}

func runController(ctx context.Context, opts controllerOptions) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts.logging)))
	setupLog := ctrl.Log.WithName("setup")

	config, err := restConfig(opts.kubeconfig)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = opts.qps, opts.burst
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:                        controller.Scheme(),
		Metrics:                       metricsserver.Options{BindAddress: opts.metricsAddress},
		HealthProbeBindAddress:        opts.probeAddress,
		LeaderElection:                opts.leaderElect,
		LeaderElectionID:              "ontime-controller.ontime.dev",
		LeaderElectionNamespace:       opts.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
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
	if err := controller.Register(ctx, mgr, clock.RealClock{}, controller.Options{Workers: opts.workers}); err != nil {
		return fmt.Errorf("registering controllers: %w", err)
	}
	setupLog.Info("starting manager", "metrics", opts.metricsAddress, "probes", opts.probeAddress, "leaderElection", opts.leaderElect)
	return mgr.Start(ctx)
}

// restConfig loads the cluster's address and credentials.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		config, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("finding the cluster (set --kubeconfig): %w", err)
		}
		return config, nil
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, badInput("--kubeconfig %q: %v", kubeconfig, err)
	}
	return config, nil
}
