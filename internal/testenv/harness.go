package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Harness is what a controller's integration tests share: a real
// kube-apiserver and etcd, a manager whose cache the controller reads as in
// production, a live client for assertions, a fake clock and an event
// recorder. Tests call Reconcile themselves, as Karpenter's
// ExpectObjectReconciled does, instead of running the controller's loop:
// time only moves when a test steps it.
type Harness struct {
	Ctx context.Context
	// Live reads from the API server; Cached is the manager's client.
	Live, Cached client.Client
	// Reader reads from the API server, as mgr.GetAPIReader does.
	Reader client.Reader
	// Config reaches the API server, for a test that starts its own
	// manager.
	Config   *rest.Config
	Clock    *clocktesting.FakeClock
	Recorder *record.FakeRecorder
	env      *envtest.Environment
	cancel   context.CancelFunc
}

// HarnessOptions say what the harness starts.
type HarnessOptions struct {
	Options
	Scheme *runtime.Scheme
	// Cache configures the manager's cache, as the controllers' manager.
	Cache cache.Options
	// Indexes registers the field indexes the controllers use.
	Indexes func(ctx context.Context, indexer client.FieldIndexer) error
}

// StartHarness starts the API server and the manager's cache.
func StartHarness(opts HarnessOptions) (*Harness, error) {
	env, config, err := StartWith(opts.Options)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Harness{Ctx: ctx, env: env, cancel: cancel, Config: config, Clock: clocktesting.NewFakeClock(time.Now()), Recorder: record.NewFakeRecorder(1000)}
	mgr, err := ctrl.NewManager(config, ctrl.Options{Scheme: opts.Scheme, Cache: opts.Cache, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err == nil && opts.Indexes != nil {
		err = opts.Indexes(ctx, mgr.GetFieldIndexer())
	}
	if err == nil {
		h.Live, err = client.New(config, client.Options{Scheme: opts.Scheme})
	}
	if err != nil {
		h.Stop()
		return nil, err
	}
	h.Cached, h.Reader = mgr.GetClient(), mgr.GetAPIReader()
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		h.Stop()
		return nil, fmt.Errorf("the manager's cache did not sync")
	}
	return h, nil
}

// Stop stops the manager and the API server.
func (h *Harness) Stop() {
	h.cancel()
	_ = h.env.Stop()
}

// NewNamespace gives a test its own namespace.
func (h *Harness) NewNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	h.Create(t, ns)
	return ns.Name
}

// Create creates obj through the live client.
func (h *Harness) Create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := h.Live.Create(h.Ctx, obj); err != nil {
		t.Fatal(err)
	}
}

// Complete marks the Job ns/name Complete, as the Job controller does when
// its pods succeed (started and completed now, with the conditions the API
// server requires of a finished Job), and waits for the cache to see it.
func (h *Harness) Complete(t testing.TB, ns, name string, now time.Time) {
	t.Helper()
	job := &batchv1.Job{}
	if err := h.Live.Get(h.Ctx, client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(now)
	job.Status.StartTime, job.Status.CompletionTime = &at, &at
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: at},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: at}}
	if err := h.Live.Status().Update(h.Ctx, job); err != nil {
		t.Fatal(err)
	}
	h.WaitForCache(t, job)
}

// DrainEvents returns the events recorded so far.
func (h *Harness) DrainEvents() []string {
	var events []string
	for {
		select {
		case e := <-h.Recorder.Events:
			events = append(events, e)
		default:
			return events
		}
	}
}

// Cached is a kind of object the cache holds in a namespace: NewList makes
// an empty list of it; Selector, when set, says which of them the cache
// holds.
type Cached struct {
	NewList  func() client.ObjectList
	Selector labels.Selector
}

// WaitForCache waits until the cached obj, and the cached objects of each
// kind in its namespace, are the API server's, at the same
// resourceVersions.
func (h *Harness) WaitForCache(t testing.TB, obj client.Object, kinds ...Cached) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	Eventually(t, 10*time.Second, "the cache to catch up with "+key.String(), func() bool {
		live, cached := obj.DeepCopyObject().(client.Object), obj.DeepCopyObject().(client.Object)
		liveErr, cachedErr := h.Live.Get(h.Ctx, key, live), h.Cached.Get(h.Ctx, key, cached)
		objectSynced := (apierrors.IsNotFound(liveErr) && apierrors.IsNotFound(cachedErr)) ||
			(liveErr == nil && cachedErr == nil && live.GetResourceVersion() == cached.GetResourceVersion())
		return objectSynced && h.listsSynced(key.Namespace, kinds)
	})
}

func (h *Harness) listsSynced(namespace string, kinds []Cached) bool {
	for _, kind := range kinds {
		live, cached := kind.NewList(), kind.NewList()
		opts := []client.ListOption{client.InNamespace(namespace)}
		if kind.Selector != nil {
			opts = append(opts, client.MatchingLabelsSelector{Selector: kind.Selector})
		}
		if h.Live.List(h.Ctx, live, opts...) != nil || h.Cached.List(h.Ctx, cached, client.InNamespace(namespace)) != nil || !sameVersions(live, cached) {
			return false
		}
	}
	return true
}

func sameVersions(a, b client.ObjectList) bool {
	aItems, errA := meta.ExtractList(a)
	bItems, errB := meta.ExtractList(b)
	if errA != nil || errB != nil || len(aItems) != len(bItems) {
		return false
	}
	versions := map[types.UID]string{}
	for _, item := range aItems {
		o := item.(client.Object)
		versions[o.GetUID()] = o.GetResourceVersion()
	}
	for _, item := range bItems {
		if o := item.(client.Object); versions[o.GetUID()] != o.GetResourceVersion() {
			return false
		}
	}
	return true
}

// AddUser adds a user of the API server, in groups, and returns a config
// that authenticates as it (with no permission until a test grants one).
func (h *Harness) AddUser(name string, groups ...string) (*rest.Config, error) {
	user, err := h.env.ControlPlane.AddUser(envtest.User{Name: name, Groups: groups}, h.Config)
	if err != nil {
		return nil, err
	}
	return user.Config(), nil
}
