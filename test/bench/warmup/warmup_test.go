//go:build bench

// Package warmup measures warm-up against a real node autoscaler:
// Karpenter's kwok provider, whose nodes register a provisioning delay D
// after it launches them. For each variant it starts a fresh kwok cluster
// and creates N owners with one run at the same time T, each run's pod
// needing a node of its own; then it reports how late the runs started
// (scheduled time to the first container running, as observed through a
// watch), two floors (when the run's pods existed, and when they could
// first have been bound: existing, and their node seen Ready), how many nodes
// were launched, the node time held before each run
// started (the cost), and the placeholders left behind.
//
// It is a Go test behind the build tag bench, on the shared test framework
// (test/framework): each variant runs in a subtest whose cleanups stop the
// controller and Karpenter and delete the cluster, also when it fails.
//
//	make bench-warmup                             # N = 20 and 100, D = 60s, lead 90s
//	go test -tags bench -timeout 0 -v ./test/bench/warmup -args -n 20 -delay 60s -lead 90s -variants Placeholder,none
//
// Variants: Placeholder, EarlyStart and CapacityBuffer (ScheduledJobs with
// spec.warmUp), CronJob+Placeholder and CronJob+CapacityBuffer (batch/v1
// CronJobs annotated warmup.ontime.dev/lead, and strategy),
// none (ScheduledJobs without warm-up), CronJob (batch/v1 CronJobs, run by
// kube-controller-manager). The run's pods start as soon as they are placed
// (kwok's simulated kubelet delays are set to 0), so that what is measured
// is placement: the autoscaler, the scheduler and the controllers.
package warmup

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/test/framework"
)

const (
	cluster   = "ontime-bench-warmup"
	namespace = "bench"
	// runTime is how long each run's pod runs.
	runTime = 30 * time.Second
)

// config is one benchmark's settings.
type config struct {
	n     int
	delay time.Duration // the autoscaler's provisioning delay, D
	lead  time.Duration
	// unlimited lifts the control plane's client rate limits (kwokctl's
	// --disable-qps-limits): kube-controller-manager's 20 QPS paces the Job
	// controller's pod creation, kube-scheduler's 50 QPS its preemptions
	// and bindings.
	unlimited bool
}

var (
	sizes     = flag.String("n", "20,100", "comma-separated numbers of owners, each with one run")
	delay     = flag.Duration("delay", 60*time.Second, "Karpenter's provisioning delay (KWOKNodeClass nodeRegistrationDelay)")
	lead      = flag.Duration("lead", 90*time.Second, "warm-up lead")
	variants  = flag.String("variants", "Placeholder,EarlyStart,CapacityBuffer,CronJob+Placeholder,CronJob+CapacityBuffer,none,CronJob", "comma-separated variants")
	unlimited = flag.Bool("disable-qps-limits", false, "lift kube-controller-manager's and kube-scheduler's client rate limits (20 and 50 QPS by default)")
)

func TestBenchWarmUp(t *testing.T) {
	var rows []string
	for _, n := range framework.ParseSizes(t, *sizes) {
		for _, variant := range strings.Split(*variants, ",") {
			variant = strings.TrimSpace(variant)
			t.Run(fmt.Sprintf("N=%d/%s", n, variant), func(t *testing.T) {
				rows = append(rows, measure(t, variant, config{n: n, delay: *delay, lead: *lead, unlimited: *unlimited}))
			})
		}
	}
	limits := "default client rate limits (kube-controller-manager 20 QPS, kube-scheduler 50)"
	if *unlimited {
		limits = "client rate limits lifted (kwokctl --disable-qps-limits)"
	}
	fmt.Printf("Provisioning delay D = %s, lead = %s, control plane with %s; each run's pod needs a node of its own.\n\n", *delay, *lead, limits)
	fmt.Println("| N | variant | runs started | lateness p50 | p99 | max | run pods created p99 | could be bound p99 | nodes launched per run | node-minutes before the run, per run | placeholders or buffers left |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Println(strings.Join(rows, "\n"))
}

// measure runs one variant in a fresh cluster and returns its table row.
func measure(t *testing.T, variant string, cfg config) string {
	framework.Progress("N=%d %s: starting a fresh cluster and Karpenter (D = %s)", cfg.n, variant, cfg.delay)
	var env []string
	if cfg.unlimited {
		env = []string{"ONTIME_KWOKCTL_FLAGS=--disable-qps-limits"}
	}
	cl := framework.StartCluster(t, cluster, framework.ClusterOptions{Nodes: 1, Env: env})
	kubeconfig := cl.Kubeconfig
	cl.Kubectl(t, "apply", "--server-side", "-k", "config/dev")
	cl.StartKarpenter(t, cfg.delay)
	framework.StartBenchController(t, cl, framework.BuildOntime(t, cl.Work))

	c := framework.NewClient(t, kubeconfig)
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	// The run, at a whole minute after the lead and time to create them all.
	run := time.Now().UTC().Add(cfg.lead + 30*time.Second + time.Duration(cfg.n)*100*time.Millisecond).Truncate(time.Minute).Add(time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := startWatching(ctx, t, kubeconfig)
	createOwners(t, c, variant, cfg, run)
	end := run.Add(cfg.delay + runTime + 90*time.Second)
	framework.Progress("N=%d %s: created; the runs are at %s, warm-up from %s; results at %s", cfg.n, variant,
		run.Format(time.TimeOnly), run.Add(-cfg.lead).Format(time.TimeOnly), end.Format(time.TimeOnly))
	time.Sleep(time.Until(end))
	return w.row(variant, cfg, run, leftPlaceholders(t, c))
}

// owner is one variant's object with one run at `run`.
func owner(variant string, i int, cfg config, run time.Time) (client.Object, error) {
	name := fmt.Sprintf("run-%03d", i)
	schedule := fmt.Sprintf("%d %d * * *", run.Minute(), run.Hour())
	meta := metav1.ObjectMeta{Namespace: namespace, Name: name}
	switch variant {
	case "CronJob", "CronJob+Placeholder", "CronJob+CapacityBuffer":
		if strategy, warm := strings.CutPrefix(variant, "CronJob+"); warm {
			meta.Annotations = map[string]string{v1alpha1.WarmUpLeadAnnotation: cfg.lead.String(), v1alpha1.WarmUpStrategyAnnotation: strategy}
		}
		return &batchv1.CronJob{ObjectMeta: meta, Spec: batchv1.CronJobSpec{Schedule: schedule, JobTemplate: framework.NodePoolRun(runTime)}}, nil
	}
	sj := &v1alpha1.ScheduledJob{ObjectMeta: meta, Spec: v1alpha1.ScheduledJobSpec{Schedule: schedule, JobTemplate: framework.NodePoolRun(runTime)}}
	switch variant {
	case "Placeholder", "EarlyStart", "CapacityBuffer":
		sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(cfg.lead), Strategy: v1alpha1.WarmUpStrategy(variant)}
	case "none":
	default:
		return nil, fmt.Errorf("unknown variant %q", variant)
	}
	return sj, nil
}

// createOwners creates the variant's N owners, 20 at a time.
func createOwners(t *testing.T, c client.Client, variant string, cfg config, run time.Time) {
	framework.Parallel(cfg.n, func(i int) {
		obj, err := owner(variant, i, cfg, run)
		if err == nil {
			err = c.Create(context.Background(), obj)
		}
		if err != nil {
			t.Errorf("creating %s %d: %v", variant, i, err)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
}

// leftPlaceholders counts placeholder pods and CapacityBuffers that still
// exist.
func leftPlaceholders(t *testing.T, c client.Client) int {
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.WarmUpLabel: v1alpha1.WarmUpPlaceholderPod}); err != nil {
		t.Fatal(err)
	}
	buffers := &unstructured.UnstructuredList{}
	buffers.SetAPIVersion("autoscaling.x-k8s.io/v1beta1")
	buffers.SetKind("CapacityBufferList")
	if err := c.List(context.Background(), buffers, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	return len(pods.Items) + len(buffers.Items)
}

// watcher records, from watches, when each run's pod was first seen, when
// it was first seen running and on which node, and when each NodeClaim
// came and went.
type watcher struct {
	mu sync.Mutex
	// created, started and nodeOf are by run pod name.
	created, started map[string]time.Time
	nodeOf           map[string]string
	claims           map[string]*claim // by NodeClaim name
	// nodeReady is when each node was first seen Ready.
	nodeReady map[string]time.Time
}

type claim struct {
	created, deleted time.Time
	node             string
}

func startWatching(ctx context.Context, t *testing.T, kubeconfig string) *watcher {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{created: map[string]time.Time{}, started: map[string]time.Time{}, nodeOf: map[string]string{}, claims: map[string]*claim{},
		nodeReady: map[string]time.Time{}}
	go w.watchPods(ctx, c)
	go w.watchClaims(ctx, c)
	go w.watchNodes(ctx, c)
	return w
}

// watchPods follows the run pods (those of Jobs), watching again when a
// watch ends.
func (w *watcher) watchPods(ctx context.Context, c client.WithWatch) {
	for ctx.Err() == nil {
		events, err := c.Watch(ctx, &corev1.PodList{}, client.InNamespace(namespace), client.HasLabels{batchv1.JobNameLabel})
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for e := range events.ResultChan() {
			pod, ok := e.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			w.mu.Lock()
			if _, seen := w.created[pod.Name]; !seen {
				w.created[pod.Name] = time.Now()
			}
			if _, seen := w.started[pod.Name]; !seen && running(pod) {
				w.started[pod.Name], w.nodeOf[pod.Name] = time.Now(), pod.Spec.NodeName
			}
			w.mu.Unlock()
		}
	}
}

// running reports whether one of the pod's containers has started.
func running(pod *corev1.Pod) bool {
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Running != nil || s.State.Terminated != nil {
			return true
		}
	}
	return false
}

// watchClaims follows Karpenter's NodeClaims: created, deleted, node.
func (w *watcher) watchClaims(ctx context.Context, c client.WithWatch) {
	for ctx.Err() == nil {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("karpenter.sh/v1")
		list.SetKind("NodeClaimList")
		events, err := c.Watch(ctx, list)
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for e := range events.ResultChan() {
			obj, ok := e.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			w.mu.Lock()
			cl := w.claims[obj.GetName()]
			if cl == nil {
				cl = &claim{created: obj.GetCreationTimestamp().Time}
				w.claims[obj.GetName()] = cl
			}
			if node, _, _ := unstructured.NestedString(obj.Object, "status", "nodeName"); node != "" {
				cl.node = node
			}

			if e.Type == watch.Deleted && cl.deleted.IsZero() {
				cl.deleted = time.Now()
			}
			w.mu.Unlock()
		}
	}
}

// watchNodes records when each node was first seen Ready (sub-second,
// unlike the condition's own timestamp, and the node's: Karpenter's
// NodeClaim reports Ready up to a second after the scheduler may bind).
func (w *watcher) watchNodes(ctx context.Context, c client.WithWatch) {
	for ctx.Err() == nil {
		events, err := c.Watch(ctx, &corev1.NodeList{})
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for e := range events.ResultChan() {
			node, ok := e.Object.(*corev1.Node)
			if !ok || !nodeReady(node) {
				continue
			}
			w.mu.Lock()
			if _, seen := w.nodeReady[node.Name]; !seen {
				w.nodeReady[node.Name] = time.Now()
			}
			w.mu.Unlock()
		}
	}
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// row reports a variant: lateness of each run's start, nodes launched,
// and the node time held before runs started. A node's time before its
// run is from its NodeClaim's creation to the run's start; a node no run
// ever used counts in full (until deleted, or now).
func (w *watcher) row(variant string, cfg config, run time.Time, left int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var lateness []time.Duration
	firstRunOn := map[string]time.Time{} // node -> first run start on it
	for pod, at := range w.started {
		lateness = append(lateness, max(at.Sub(run), 0))
		if node := w.nodeOf[pod]; firstRunOn[node].IsZero() || at.Before(firstRunOn[node]) {
			firstRunOn[node] = at
		}
	}
	slices.Sort(lateness)
	var created []time.Duration
	for _, at := range w.created {
		created = append(created, at.Sub(run))
	}
	slices.Sort(created)
	bindable := w.bindable(run)
	var held time.Duration
	for _, cl := range w.claims {
		until := firstRunOn[cl.node]
		if until.IsZero() {
			until = cl.deleted
			if until.IsZero() {
				until = time.Now()
			}
		}
		held += max(until.Sub(cl.created), 0)
	}
	perRun := held.Minutes() / float64(cfg.n)
	return fmt.Sprintf("| %d | %s | %d / %d | %s | %s | %s | %s | %s | %.2f | %.2f | %d |", cfg.n, variant, len(lateness), cfg.n,
		framework.Percentile(lateness, 50), framework.Percentile(lateness, 99), framework.Percentile(lateness, 100),
		framework.Percentile(created, 99), framework.Percentile(bindable, 99), float64(len(w.claims))/float64(cfg.n), perRun, left)
}

// bindable is, for each run pod that started, when it could first have
// been bound, after the run's time: once it existed and the node it ran on
// was seen Ready. A placeholder on that node does not count against it:
// preempting it is part of what is measured.
func (w *watcher) bindable(run time.Time) []time.Duration {
	var bindable []time.Duration
	for pod, node := range w.nodeOf {
		at := w.created[pod]
		if ready := w.nodeReady[node]; ready.After(at) {
			at = ready
		}
		bindable = append(bindable, max(at.Sub(run), 0))
	}
	slices.Sort(bindable)
	return bindable
}
