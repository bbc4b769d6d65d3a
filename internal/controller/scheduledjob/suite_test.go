package scheduledjob

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// The suite runs one real kube-apiserver and etcd (envtest) with ontime's
// CRD. Tests call Reconcile directly with a fake clock, as Karpenter's
// ExpectObjectReconciled does, instead of running the controller's loop:
// time only moves when a test steps it. Assertions read through the live
// client; the controller reads through the manager's cache, as in
// production.
var (
	env *suiteEnv
)

// testEarlyStartImage is the wait container's image in this suite.
const testEarlyStartImage = "ontime-test:wait"

type suiteEnv struct {
	ctx      context.Context
	live     client.Client // reads from the API server
	cached   client.Client
	reader   client.Reader
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
	ctrl     *Controller
}

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	testEnv, config, err := testenv.Start("config/crd/bases")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = testEnv.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	mgr, err := ctrl.NewManager(config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: warmup.PodSelector()}}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	live, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env = &suiteEnv{ctx: ctx, live: live, cached: mgr.GetClient(), reader: mgr.GetAPIReader(),
		clock: clocktesting.NewFakeClock(time.Now()), recorder: record.NewFakeRecorder(1000)}
	env.ctrl = NewController(env.cached, env.reader, env.clock, env.recorder, testEarlyStartImage)
	// Register only the index; reconciles are driven by the tests.
	if err := mgr.GetFieldIndexer().IndexField(ctx, &batchv1.Job{}, jobOwnerKey, indexJobOwner); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		fmt.Fprintln(os.Stderr, "cache did not sync")
		return 1
	}
	return m.Run()
}

// newNamespace gives each test its own namespace.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sj-"}}
	if err := env.live.Create(env.ctx, ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func newScheduledJob(namespace, name, schedule string) *v1alpha1.ScheduledJob {
	return &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1alpha1.ScheduledJobSpec{
			Schedule: schedule,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				}}},
			},
		},
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.live.Create(env.ctx, obj); err != nil {
		t.Fatal(err)
	}
}

// reconcileAt sets the clock, waits until the cache has caught up with the
// API server, and reconciles.
func reconcileAt(t *testing.T, sj *v1alpha1.ScheduledJob, now time.Time) reconcile.Result {
	t.Helper()
	env.clock.SetTime(now)
	waitForCache(t, sj)
	result, err := env.ctrl.Reconcile(env.ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(sj)})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return result
}

// waitForCache waits until the cached ScheduledJob and Jobs match the live
// ones.
func waitForCache(t *testing.T, sj *v1alpha1.ScheduledJob) {
	t.Helper()
	key := client.ObjectKeyFromObject(sj)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var live, cached v1alpha1.ScheduledJob
		liveErr := env.live.Get(env.ctx, key, &live)
		cachedErr := env.cached.Get(env.ctx, key, &cached)
		if apierrors.IsNotFound(liveErr) && apierrors.IsNotFound(cachedErr) {
			return
		}
		if liveErr == nil && cachedErr == nil && live.ResourceVersion == cached.ResourceVersion && jobsInSync(sj.Namespace) {
			return
		}
		time.Sleep(10 * time.Millisecond) // waiting for the informer, not for the clock
	}
	t.Fatalf("cache did not catch up with %s", key)
}

func jobsInSync(namespace string) bool {
	var live, cached batchv1.JobList
	if env.live.List(env.ctx, &live, client.InNamespace(namespace)) != nil || env.cached.List(env.ctx, &cached, client.InNamespace(namespace)) != nil {
		return false
	}
	versions := map[types.UID]string{}
	for _, j := range live.Items {
		versions[j.UID] = j.ResourceVersion
	}
	if len(cached.Items) != len(live.Items) {
		return false
	}
	for _, j := range cached.Items {
		if versions[j.UID] != j.ResourceVersion {
			return false
		}
	}
	return true
}

func get(t *testing.T, sj *v1alpha1.ScheduledJob) *v1alpha1.ScheduledJob {
	t.Helper()
	fresh := &v1alpha1.ScheduledJob{}
	if err := env.live.Get(env.ctx, client.ObjectKeyFromObject(sj), fresh); err != nil {
		t.Fatal(err)
	}
	return fresh
}

func jobs(t *testing.T, namespace string) []batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := env.live.List(env.ctx, &list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// drainEvents returns the events recorded so far.
func drainEvents() []string {
	var events []string
	for {
		select {
		case e := <-env.recorder.Events:
			events = append(events, e)
		default:
			return events
		}
	}
}

// finish marks a Job finished the way the Job controller would.
func finish(t *testing.T, job *batchv1.Job, succeeded bool, at time.Time) {
	t.Helper()
	start := metav1.NewTime(at.Add(-time.Second))
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
	if err := env.live.Status().Update(env.ctx, job); err != nil {
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
	if err := env.live.Get(env.ctx, client.ObjectKeyFromObject(sj), u); err != nil {
		t.Fatal(err)
	}
	return u
}
