package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/cmd/ontime/app/controllercmd"
)

// CheckStatus is how one check went: ok, a warning that does not fail the
// command, or a failure.
type CheckStatus string

// A check's statuses, as -o json writes them.
const (
	CheckOK   CheckStatus = "OK"
	CheckWarn CheckStatus = "WARN"
	CheckFail CheckStatus = "FAIL"
)

// CheckResult is one line of ontime check: what was found and, when it is
// not OK, what to do.
type CheckResult struct {
	Check  string      `json:"check"`
	Status CheckStatus `json:"status"`
	Detail string      `json:"detail"`
	Fix    string      `json:"fix,omitempty"`
}

// checkOptions are where the installation is.
type checkOptions struct {
	cluster             cli.ClusterFlags
	controllerNamespace string
	webhook             string
	output              cli.Output
	// cliVersion is this binary's version, compared with the controller's
	// image.
	cliVersion string
}

// NewCheckCommand is ontime check, from a binary whose version is
// cliVersion.
func NewCheckCommand(cliVersion string) *cobra.Command {
	opts := checkOptions{cliVersion: cliVersion}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check that ontime is installed and working in the cluster",
		Long: `Check an installation of ontime, after installing it or in any trouble:
the ScheduledJob API is served; the controller's pods are ready (if not,
why: an image the nodes cannot pull, a crash, no node); the admission
webhook answers (a dry-run create of a ScheduledJob in the namespace; while
a controller pod is ready, a refused connection is retried for 15 s, the
time a new Service can take to be routed); a controller leads (its Lease is held and renewed) and its
version against this CLI's; what you may do with ScheduledJobs in the
namespace; and what warm-up finds in the cluster (the placeholders'
PriorityClass, the CapacityBuffer API). Each line says OK, WARN or FAIL, and
what to do when it is not OK. The exit code is 1 when a check fails.`,
		Example: `  ontime check
  ontime check -n reports -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.output.Check(); err != nil {
				return err
			}
			return runCheck(cmd.Context(), cmd.OutOrStdout(), opts)
		},
	}
	opts.cluster.Bind(cmd, "", "namespace of the dry-run ScheduledJob and the RBAC check (default: the context's)")
	cmd.Flags().StringVar(&opts.controllerNamespace, "controller-namespace", "ontime-system", "namespace ontime's controller runs in (its Lease and Deployment)")
	cmd.Flags().StringVar(&opts.webhook, "webhook-configuration", "ontime-validating-webhook-configuration", "the ValidatingWebhookConfiguration ontime installs")
	opts.output.Bind(cmd, "text", "json", "yaml")
	return cmd
}

// errChecksFailed makes the exit code 1 once the results are printed.
var errChecksFailed = errors.New("a check failed")

func runCheck(ctx context.Context, out io.Writer, opts checkOptions) error {
	c, namespace, err := opts.cluster.Client()
	if err != nil {
		return err
	}
	config, err := opts.cluster.RestConfig()
	if err != nil {
		return err
	}
	discoveryClient, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return err
	}
	checker := checker{client: c, discovery: discoveryClient, namespace: namespace, opts: opts, now: cli.Now()}
	results := checker.run(ctx)
	if err := printChecks(out, results, &opts.output); err != nil {
		return err
	}
	for _, r := range results {
		if r.Status == CheckFail {
			return fmt.Errorf("%w: %s: %s", errChecksFailed, r.Check, r.Detail)
		}
	}
	return nil
}

func printChecks(out io.Writer, results []CheckResult, output *cli.Output) error {
	if output.Structured() {
		return output.Write(out, results)
	}
	table := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, r := range results {
		fmt.Fprintf(table, "%s\t%s\t%s\n", r.Status, r.Check, r.Detail)
		if r.Fix != "" {
			fmt.Fprintf(table, "\t\tfix: %s\n", r.Fix)
		}
	}
	return table.Flush()
}

// checker runs the checks against one cluster.
type checker struct {
	client    client.Client
	discovery discovery.DiscoveryInterface
	namespace string
	opts      checkOptions
	now       time.Time
}

func (k checker) run(ctx context.Context) []CheckResult {
	api := k.api()
	results := []CheckResult{api}
	if api.Status == CheckFail {
		// Nothing else can be checked without the API.
		return results
	}
	controller := k.controller(ctx)
	// With no controller pod ready, a refused connection is no Service
	// being routed: nothing is worth waiting for.
	routing := controller.Status != CheckFail
	return append(results, controller, k.webhook(ctx, routing), k.leader(ctx), k.rbac(ctx), k.warmUp(ctx))
}

// api: the ScheduledJob API this CLI speaks is served.
func (k checker) api() CheckResult {
	gv := v1alpha1.GroupVersion.String()
	resources, err := k.discovery.ServerResourcesForGroupVersion(gv)
	switch {
	case apierrors.IsNotFound(err):
		return CheckResult{Check: "api", Status: CheckFail, Detail: gv + " is not served: the ScheduledJob CRD is not installed",
			Fix: "install ontime (docs/install.md), or kubectl apply -f the CRD of its chart or install.yaml"}
	case err != nil:
		return CheckResult{Check: "api", Status: CheckFail, Detail: "cannot reach the API server: " + err.Error(), Fix: "check --kubeconfig and --context"}
	}
	served := map[string]bool{}
	for _, r := range resources.APIResources {
		served[r.Name] = true
	}
	if !served["scheduledjobs"] {
		return CheckResult{Check: "api", Status: CheckFail, Detail: gv + " serves no scheduledjobs", Fix: "reinstall the CRD of this version"}
	}
	// Kinds added after ScheduledJobs: an upgrade that did not apply their
	// CRDs (Helm never upgrades them) runs ScheduledJobs without them.
	var missing []string
	for _, kind := range []struct{ resource, name string }{
		{"backfills", "Backfills"}, {"concurrencygroups", "ConcurrencyGroups"}, {"clusterconcurrencygroups", "ClusterConcurrencyGroups"},
	} {
		if !served[kind.resource] {
			missing = append(missing, kind.name)
		}
	}
	if len(missing) > 0 {
		return CheckResult{Check: "api", Status: CheckWarn, Detail: "ScheduledJobs are served (" + gv + "), " + strings.Join(missing, ", ") + " are not: the CRDs were not upgraded",
			Fix: "apply the chart's CRDs (docs/install.md, Upgrading), then restart the controller"}
	}
	return CheckResult{Check: "api", Status: CheckOK, Detail: "ScheduledJobs, Backfills and concurrency groups are served (" + gv + ")"}
}

// webhook: the admission webhook answers a dry-run create through its
// Service.
func (k checker) webhook(ctx context.Context, retryRefused bool) CheckResult {
	result := CheckResult{Check: "webhook"}
	configuration := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	err := k.client.Get(ctx, client.ObjectKey{Name: k.opts.webhook}, configuration)
	registered := err == nil
	if apierrors.IsNotFound(err) {
		result.Status, result.Detail = CheckWarn, "no ValidatingWebhookConfiguration "+k.opts.webhook+": specs are checked only by the controller, which reports a bad one in status"
		result.Fix = "install with the chart or install.yaml, which register the webhook"
		return result
	}
	grace := time.Duration(0)
	if retryRefused {
		grace = routingGrace
	}
	if err := k.dryRunCreate(ctx, grace); err != nil {
		result.Status, result.Detail = CheckFail, "a dry-run create of a ScheduledJob in "+k.namespace+" failed: "+err.Error()
		result.Fix = webhookFix(err, k.opts.controllerNamespace)
		return result
	}
	result.Status, result.Detail = CheckOK, "a dry-run create of a ScheduledJob in "+k.namespace+" was admitted"
	if registered {
		result.Detail += " by " + k.opts.webhook
	} else {
		result.Detail += " (the webhook configuration could not be read: " + err.Error() + ")"
	}
	return result
}

// webhookFix says what to do about a dry-run create that failed.
func webhookFix(err error, controllerNamespace string) string {
	switch webhookCallFailure(err) {
	case notAWebhookCall:
		return "see the error: the API server or your RBAC refused the create"
	case callTimedOut:
		return "the API server's call to the webhook timed out: its control plane cannot reach the controller's pods on the webhook's port " +
			"(the chart's webhook.port, 9443 by default). On a GKE private cluster, add a firewall rule from the control plane's range to the nodes on that port; " +
			"where the control plane is outside the pod network (EKS with Calico or Cilium), install with hostNetwork: true; docs/install.md, Private clusters"
	default:
		return "kubectl -n " + controllerNamespace + " get pods,endpoints: the controller serves the webhook; with failurePolicy Fail, no ScheduledJob can be written while it does not answer"
	}
}

// webhookFailure is why the API server could not call a webhook.
type webhookFailure int

const (
	// notAWebhookCall: the error is not a failed call to a webhook (RBAC,
	// validation, the API server itself unreachable).
	notAWebhookCall webhookFailure = iota
	// callRefused: nothing listens behind the webhook's Service yet.
	callRefused
	// callTimedOut: the call got no answer in time (dropped packets, a
	// silent listener): a control plane that cannot reach the pods (a
	// private cluster's firewall, a CNI the control plane is not part of),
	// which no restart of the controller mends.
	callTimedOut
	// callFailed: any other failure of the call (no endpoints, TLS).
	callFailed
)

// webhookCallFailure tells the failures of a webhook call apart. The API
// server reports a webhook it could not call (failurePolicy Fail) as an
// InternalError (apierrors.IsInternalError, the type this relies on)
// whose only detail is the text of its own client's error, prefixed
// "failed calling webhook" (k8s.io/apiserver's ErrCallingWebhook): no
// reason, cause or code says which failure it was, so inside that type
// the text is read, and nowhere else. An error of this client's own
// connection is told apart by type (a net.Error, not a Status).
func webhookCallFailure(err error) webhookFailure {
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "failed calling webhook") {
		return notAWebhookCall
	}
	message := err.Error()
	switch {
	case strings.Contains(message, "connect: connection refused"):
		return callRefused
	case slices.ContainsFunc(timeoutWords, func(words string) bool { return strings.Contains(message, words) }):
		return callTimedOut
	default:
		return callFailed
	}
}

// timeoutWords are the API server's words for a webhook call that got no
// answer in time.
var timeoutWords = []string{"context deadline exceeded", "i/o timeout", "Client.Timeout exceeded", "TLS handshake timeout"}

// routingGrace is how long the webhook check retries a refused connection
// while a controller pod is ready: right after an install the pods are
// ready before the node's kube-proxy routes the webhook's Service to them
// (any webhook's first moments). Other errors are not retried.
const routingGrace = 15 * time.Second

// dryRunCreate creates a ScheduledJob in dry-run, through the webhook,
// retrying a call to it refused for grace, once a second. Each create runs
// under ctx, not the poll's context: the grace bounds the retries, not the
// last create (with no grace, the one create would start expired).
func (k checker) dryRunCreate(ctx context.Context, grace time.Duration) error {
	var err error
	_ = wait.PollUntilContextTimeout(ctx, time.Second, grace, true, func(context.Context) (bool, error) {
		err = k.client.Create(ctx, checkSample(k.namespace), client.DryRunAll)
		return webhookCallFailure(err) != callRefused, nil
	})
	return err
}

// checkSample is a ScheduledJob every rule admits; a generated name, so
// that no ScheduledJob of the namespace can make the dry run conflict.
func checkSample(namespace string) *v1alpha1.ScheduledJob {
	return &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: "ontime-check-"},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "0 0 1 1 *", Suspend: ptr.To(true),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "check", Image: "registry.k8s.io/pause:3.10"}},
			}}}}},
	}
}

// leader: a controller holds the Lease and renews it; its version.
func (k checker) leader(ctx context.Context) CheckResult {
	result := CheckResult{Check: "leader"}
	lease := &coordinationv1.Lease{}
	err := k.client.Get(ctx, client.ObjectKey{Namespace: k.opts.controllerNamespace, Name: controllercmd.LeaderElectionID}, lease)
	switch {
	case apierrors.IsNotFound(err):
		result.Status, result.Detail = CheckFail, "no Lease "+controllercmd.LeaderElectionID+" in "+k.opts.controllerNamespace+": no controller with leader election (as installed) has run there"
		result.Fix = "kubectl -n " + k.opts.controllerNamespace + " get deploy,pods; or --controller-namespace if ontime runs elsewhere"
		return result
	case err != nil:
		result.Status, result.Detail = CheckWarn, "cannot read the Lease: "+err.Error()
		return result
	}
	holder, renewed := "", time.Time{}
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	if lease.Spec.RenewTime != nil {
		renewed = lease.Spec.RenewTime.Time
	}
	duration := 15 * time.Second
	if lease.Spec.LeaseDurationSeconds != nil {
		duration = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	}
	age := k.now.Sub(renewed).Round(time.Second)
	if holder == "" || age > duration {
		result.Status = CheckFail
		result.Detail = fmt.Sprintf("the Lease is not held: last renewed %s ago by %q (lease %s); no run starts until a controller leads", age, holder, duration)
		result.Fix = "kubectl -n " + k.opts.controllerNamespace + " get pods; kubectl -n " + k.opts.controllerNamespace + " logs deploy/ontime-controller"
		return result
	}
	result.Status, result.Detail = CheckOK, fmt.Sprintf("%s leads, renewed %s ago (lease %s)", podOf(holder), age, duration)
	return k.version(ctx, podOf(holder), result)
}

// podOf is the pod name in a leader-election identity (pod_uuid).
func podOf(identity string) string {
	pod, _, _ := strings.Cut(identity, "_")
	return pod
}

// version adds the leader's image to a passing leader check, and warns
// when it is not this CLI's version.
func (k checker) version(ctx context.Context, podName string, result CheckResult) CheckResult {
	pod := &corev1.Pod{}
	if err := k.client.Get(ctx, client.ObjectKey{Namespace: k.opts.controllerNamespace, Name: podName}, pod); err != nil || len(pod.Spec.Containers) == 0 {
		return result
	}
	image := pod.Spec.Containers[0].Image
	result.Detail += "; image " + image + ", CLI " + k.opts.cliVersion
	if !strings.HasSuffix(image, ":"+k.opts.cliVersion) && !strings.Contains(image, ":"+k.opts.cliVersion+"@") {
		result.Status = CheckWarn
		result.Fix = "use the CLI of the controller's version (ontime version), or upgrade one of them"
	}
	return result
}

// rbac: what the caller may do with ScheduledJobs in the namespace.
func (k checker) rbac(ctx context.Context) CheckResult {
	var allowed, denied []string
	for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: k.namespace, Verb: verb, Group: v1alpha1.GroupVersion.Group, Resource: "scheduledjobs"}}}
		if err := k.client.Create(ctx, review); err != nil {
			return CheckResult{Check: "rbac", Status: CheckWarn, Detail: "cannot review access: " + err.Error()}
		}
		if review.Status.Allowed {
			allowed = append(allowed, verb)
		} else {
			denied = append(denied, verb)
		}
	}
	detail := "in " + k.namespace + " you may " + orNothing(allowed) + " ScheduledJobs"
	if len(denied) > 0 {
		detail += ", not " + strings.Join(denied, ", ")
	}
	if len(allowed) == 0 {
		return CheckResult{Check: "rbac", Status: CheckWarn, Detail: detail,
			Fix: "bind Kubernetes' view or edit ClusterRole in " + k.namespace + " (ontime-view and ontime-edit aggregate into them)"}
	}
	return CheckResult{Check: "rbac", Status: CheckOK, Detail: detail}
}

func orNothing(verbs []string) string {
	if len(verbs) == 0 {
		return "do nothing with"
	}
	return strings.Join(verbs, ", ")
}

// capacityBufferGroup is the API group of SIG Autoscaling's CapacityBuffer
// (internal/warmup's BufferGroup, which the CLI does not import).
const capacityBufferGroup = "autoscaling.x-k8s.io"

// warmUp: the placeholders' PriorityClass, and the CapacityBuffer API.
func (k checker) warmUp(ctx context.Context) CheckResult {
	result := CheckResult{Check: "warm-up", Status: CheckOK}
	class := &schedulingv1.PriorityClass{}
	switch err := k.client.Get(ctx, client.ObjectKey{Name: v1alpha1.DefaultPlaceholderPriorityClass}, class); {
	case apierrors.IsNotFound(err):
		result.Status = CheckWarn
		result.Detail = "no PriorityClass " + v1alpha1.DefaultPlaceholderPriorityClass + ": Placeholder warm-up that names none is refused"
		result.Fix = "install it (the chart and install.yaml do), or set --placeholder-priority-class"
	case err != nil:
		result.Detail = "PriorityClass not readable (" + err.Error() + ")"
	default:
		result.Detail = fmt.Sprintf("PriorityClass %s (value %d)", class.Name, class.Value)
	}
	buffers := "CapacityBuffer API not served: CapacityBuffer warm-up runs without it"
	if groups, err := k.discovery.ServerGroups(); err == nil {
		for _, group := range groups.Groups {
			if group.Name == capacityBufferGroup {
				buffers = "CapacityBuffer API " + group.PreferredVersion.GroupVersion
			}
		}
	}
	result.Detail += "; " + buffers
	return result
}
