//go:build integration

package scheduledjob

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/spreadledger"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// The suite runs one real kube-apiserver and etcd (envtest) with ontime's
// CRD, through testenv's Harness. Tests call Reconcile directly with a fake
// clock, as Karpenter's ExpectObjectReconciled does, instead of running the
// controller's loop: time only moves when a test steps it. Assertions read
// through the live client; the controller reads through the manager's
// cache, as in production.
var (
	env *suiteEnv
)

// testEarlyStartImage is the wait container's image in this suite.
const testEarlyStartImage = "ontime-test:wait"

// testSpreadNamespace holds the spread groups' ledgers in this suite.
const testSpreadNamespace = "ontime-system"

// testOptions are the options of the suite's controllers.
var testOptions = Options{EarlyStartImage: testEarlyStartImage, SpreadNamespace: testSpreadNamespace}

// newSuiteController is a controller on the suite's reader, clock and event
// recorder that reads and writes through c: another replica, the next
// leader, or one whose requests fail.
func newSuiteController(c client.Client) *Controller {
	return NewController(c, env.Reader, env.Clock, env.Recorder, testOptions)
}

type suiteEnv struct {
	*testenv.Harness
	ctrl *Controller
}

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	// The autoscaler's CapacityBuffer CRD too: the CapacityBuffer strategy
	// creates buffers in it.
	bufferCRD, err := testenv.CapacityBufferCRD()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, err := testenv.StartHarness(testenv.HarnessOptions{
		Options: testenv.Options{CRDDirs: []string{"config/crd/bases", bufferCRD}},
		Scheme:  ontimescheme.New(),
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:       {Label: warmup.PodSelector()},
			&corev1.ConfigMap{}: spreadledger.Cache(testSpreadNamespace),
		}},
		Indexes: func(ctx context.Context, indexer client.FieldIndexer) error {
			// Only the index: reconciles are driven by the tests.
			return Index(ctx, indexer)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer h.Stop()
	env = &suiteEnv{Harness: h}
	buffers, err := warmupobjects.NewBuffers(env.Cached, h.Config, h.Clock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testOptions.WarmUpObjects = warmupobjects.NewExecutor(env.Cached, buffers)
	env.ctrl = newSuiteController(env.Cached)
	if err := env.Live.Create(env.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testSpreadNamespace}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// config/warmup's PriorityClass, which placeholder pods name.
	if err := env.Live.Create(env.Ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DefaultPlaceholderPriorityClass},
		Value: -5, PreemptionPolicy: ptr.To(corev1.PreemptNever)}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// newNamespace gives each test its own namespace.
func newNamespace(t *testing.T) string { return env.NewNamespace(t) }

func create(t *testing.T, obj client.Object) { env.Create(t, obj) }

// reconcileAt sets the clock, waits until the cache has caught up with the
// API server, and reconciles with the suite's controller as its queue
// would (see reconcileWith).
func reconcileAt(t *testing.T, sj *v1alpha1.ScheduledJob, now time.Time) reconcile.Result {
	t.Helper()
	return reconcileWith(t, env.ctrl, sj, now)
}

// reconcileWith sets the clock and reconciles with c once the cache has
// caught up. A reconcile that starts a run leaves its status to the next
// one, which the new Job's watch event triggers: that one follows here,
// once the cache has the Job. It returns the last reconcile's result.
func reconcileWith(t *testing.T, c *Controller, sj *v1alpha1.ScheduledJob, now time.Time) reconcile.Result {
	t.Helper()
	env.Clock.SetTime(now)
	for range 3 {
		waitForCache(t, sj)
		result, err := c.Reconcile(env.Ctx, requestFor(sj))
		if err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		if !statusDeferred(c, sj) {
			return result
		}
	}
	t.Fatalf("%s: every reconcile deferred its status", sj.Name)
	return reconcile.Result{}
}

// statusDeferred reports whether c holds a status for sj that it has not
// written yet.
func statusDeferred(c *Controller, sj *v1alpha1.ScheduledJob) bool {
	return c.known.remembers(client.ObjectKeyFromObject(sj)).deferred != nil
}

// waitForCache waits until the cached ScheduledJob, its namespace's Jobs
// and warm-up pods match the live ones.
func waitForCache(t *testing.T, sj *v1alpha1.ScheduledJob) {
	t.Helper()
	env.WaitForCache(t, sj,
		testenv.Cached{NewList: func() client.ObjectList { return &batchv1.JobList{} }},
		testenv.Cached{NewList: func() client.ObjectList { return &corev1.PodList{} }, Selector: warmup.PodSelector()})
}

func get(t *testing.T, sj *v1alpha1.ScheduledJob) *v1alpha1.ScheduledJob {
	t.Helper()
	fresh := &v1alpha1.ScheduledJob{}
	if err := env.Live.Get(env.Ctx, client.ObjectKeyFromObject(sj), fresh); err != nil {
		t.Fatal(err)
	}
	return fresh
}

func jobs(t *testing.T, namespace string) []batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := env.Live.List(env.Ctx, &list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// drainEvents returns the events recorded so far.
func drainEvents() []string { return env.DrainEvents() }

// finish marks a Job finished the way the Job controller would, a second
// after it started.
func finish(t *testing.T, job *batchv1.Job, succeeded bool, at time.Time) {
	t.Helper()
	finishFrom(t, job, succeeded, at.Add(-time.Second), at)
}

// finishFrom marks a Job started at started and finished at at.
func finishFrom(t *testing.T, job *batchv1.Job, succeeded bool, started, at time.Time) {
	t.Helper()
	start := metav1.NewTime(started)
	done := metav1.NewTime(at)
	job.Status.StartTime = &start
	if succeeded {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &done
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: done},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: done},
		}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: done},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: done},
		}
	}
	if err := env.Live.Status().Update(env.Ctx, job); err != nil {
		t.Fatalf("finishing job %s: %v", job.Name, err)
	}
}

func requestFor(sj *v1alpha1.ScheduledJob) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(sj)}
}

// asStored reads a ScheduledJob as the server stored it, to see which
// fields are present.
func asStored(t *testing.T, sj *v1alpha1.ScheduledJob) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("ScheduledJob"))
	if err := env.Live.Get(env.Ctx, client.ObjectKeyFromObject(sj), u); err != nil {
		t.Fatal(err)
	}
	return u
}
