package owners

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// loopCase is one case of TestReconcileCarriesOutInOrder.
type loopCase struct {
	name       string
	noOwner    bool
	plan       *fakeDecision
	runs       *runningDecision
	refuse     bool
	wantSteps  []string
	wantPods   []string
	wantWake   time.Duration
	wantErr    error
	wantFailed error
	reconciled bool
}

// The owner in these tests is a ConfigMap: the loop knows nothing of the
// kinds it reconciles.
var key = types.NamespacedName{Namespace: "ns", Name: "owner"}

// fakeKind records, in steps, what the loop asked of it and of its plan.
type fakeKind struct {
	steps   *[]string
	plan    *fakeDecision // nil: nothing to do
	planErr error
}

func (fakeKind) New() *corev1.ConfigMap { return &corev1.ConfigMap{} }

func (k fakeKind) Forget(_ context.Context, forgotten types.NamespacedName) error {
	*k.steps = append(*k.steps, "forget "+forgotten.Name)
	return nil
}

func (k fakeKind) Decide(_ context.Context, owner *corev1.ConfigMap, _ time.Time) (Decision, error) {
	*k.steps = append(*k.steps, "plan "+owner.Name)
	if k.plan == nil {
		return nil, k.planErr
	}
	k.plan.steps = k.steps
	return k.plan, k.planErr
}

type fakeDecision struct {
	steps   *[]string
	changes warmup.Changes
	wake    time.Duration
	// recordErr is what Record returns; failed, what it was given.
	recordErr error
	failed    error
	refused   bool
}

func (p *fakeDecision) WarmUp() warmup.Changes { return p.changes }
func (p *fakeDecision) Wake() time.Duration    { return p.wake }
func (p *fakeDecision) Record(_ context.Context, warm warmup.Applied, failed error) error {
	*p.steps = append(*p.steps, "record")
	p.failed, p.refused = failed, warm.Refused
	if p.recordErr != nil {
		return p.recordErr
	}
	return failed
}

// runningDecision is a plan that starts runs.
type runningDecision struct {
	*fakeDecision
	stop   bool
	runErr error
}

func (p *runningDecision) StartRuns(context.Context) (bool, error) {
	*p.steps = append(*p.steps, "start runs")
	return p.stop, p.runErr
}

// runningKind plans a runningDecision.
type runningKind struct {
	fakeKind
	plan *runningDecision
}

func (k runningKind) Decide(ctx context.Context, owner *corev1.ConfigMap, now time.Time) (Decision, error) {
	k.fakeKind.plan = k.plan.fakeDecision
	if _, err := k.fakeKind.Decide(ctx, owner, now); err != nil {
		return nil, err
	}
	return k.plan, nil
}

func placeholder(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

var errRun = errors.New("creating the run's job: boom")

func TestReconcileCarriesOutInOrder(t *testing.T) {
	refusal := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("exceeded quota"))
	tests := []loopCase{{
		name:      "the owner is gone: forgotten",
		noOwner:   true,
		wantSteps: []string{"forget owner"},
	}, {
		name:      "nothing to do",
		wantSteps: []string{"plan owner"},
	}, {
		name:       "warm-up, then the record, then the wake-up",
		plan:       &fakeDecision{changes: warmup.Changes{CreatePods: []*corev1.Pod{placeholder("p1")}}, wake: time.Minute},
		wantSteps:  []string{"plan owner", "create p1", "record"},
		wantPods:   []string{"p1"},
		wantWake:   time.Minute,
		reconciled: true,
	}, {
		name:       "runs before warm-up",
		runs:       &runningDecision{fakeDecision: &fakeDecision{changes: warmup.Changes{CreatePods: []*corev1.Pod{placeholder("p1")}}, wake: time.Minute}},
		wantSteps:  []string{"plan owner", "start runs", "create p1", "record"},
		wantPods:   []string{"p1"},
		wantWake:   time.Minute,
		reconciled: true,
	}, {
		name:       "runs that stop the reconcile: no warm-up, no record",
		runs:       &runningDecision{fakeDecision: &fakeDecision{changes: warmup.Changes{CreatePods: []*corev1.Pod{placeholder("p1")}}, wake: time.Second}, stop: true},
		wantSteps:  []string{"plan owner", "start runs"},
		wantWake:   time.Second,
		reconciled: true,
	}, {
		name:      "a claim that failed stops it with its error",
		runs:      &runningDecision{fakeDecision: &fakeDecision{changes: warmup.Changes{CreatePods: []*corev1.Pod{placeholder("p1")}}}, stop: true, runErr: errRun},
		wantSteps: []string{"plan owner", "start runs"},
		wantErr:   errRun,
	}, {
		name:       "a run that failed: warm-up and the record still, then its error",
		runs:       &runningDecision{fakeDecision: &fakeDecision{changes: warmup.Changes{CreatePods: []*corev1.Pod{placeholder("p1")}}, wake: time.Minute}, runErr: errRun},
		wantSteps:  []string{"plan owner", "start runs", "create p1", "record"},
		wantPods:   []string{"p1"},
		wantErr:    errRun,
		wantFailed: errRun,
	}, {
		name:       "refused warm-up: recorded, and tried again at RefusedRetry",
		plan:       &fakeDecision{changes: warmup.Changes{CreatePods: []*corev1.Pod{placeholder("p1")}}, wake: time.Hour},
		refuse:     true,
		wantSteps:  []string{"plan owner", "create p1", "record"},
		wantWake:   warmup.RefusedRetry,
		reconciled: true,
	}, {
		name:      "a record that failed is the reconcile's error",
		plan:      &fakeDecision{wake: time.Minute, recordErr: apierrors.NewConflict(schema.GroupResource{Resource: "scheduledjobs"}, "owner", errors.New("changed"))},
		wantSteps: []string{"plan owner", "record"},
		wantErr:   apierrors.NewConflict(schema.GroupResource{Resource: "scheduledjobs"}, "owner", errors.New("changed")),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = corev1.AddToScheme(scheme)
			builder := fake.NewClientBuilder().WithScheme(scheme)
			if !tt.noOwner {
				builder = builder.WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
			}
			var steps []string
			builder = builder.WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				steps = append(steps, "create "+obj.GetName())
				if tt.refuse {
					return refusal
				}
				return c.Create(ctx, obj, opts...)
			}})
			c := builder.Build()
			var kind Kind[*corev1.ConfigMap] = fakeKind{steps: &steps, plan: tt.plan}
			plan := tt.plan
			if tt.runs != nil {
				kind, plan = runningKind{fakeKind: fakeKind{steps: &steps}, plan: tt.runs}, tt.runs.fakeDecision
			}
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC))
			r := NewReconciler(kind, c, clk, warmupobjects.NewExecutor(c, nil))

			result, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key})
			tt.check(t, r, c, steps, plan, result, err)
		})
	}
}

// The wake-up is counted from when the plan was made: a reconcile whose
// requests took long still wakes at the planned time.
func TestWakeIsCountedFromThePlan(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC))
	r := &Reconciler[*corev1.ConfigMap]{clock: clk}
	planned := clk.Now()
	clk.SetTime(planned.Add(300 * time.Millisecond))
	for _, tt := range []struct{ wake, want time.Duration }{
		{0, 0},
		{time.Second, 700 * time.Millisecond},
		{100 * time.Millisecond, time.Millisecond}, // due already: at once, not never
	} {
		if got := r.remaining(planned, tt.wake); got != tt.want {
			t.Errorf("remaining(%v) = %v, want %v", tt.wake, got, tt.want)
		}
	}
}

// A reconcile that failed is not counted as reconciled, and an owner
// deleted is forgotten: the standby goes back to watching over it.
func TestReconciledIsForgottenWithTheOwner(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(owner).Build()
	var steps []string
	clk := clocktesting.NewFakePassiveClock(time.Now())
	r := NewReconciler[*corev1.ConfigMap](fakeKind{steps: &steps, plan: &fakeDecision{}}, c, clk, warmupobjects.NewExecutor(c, nil))
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); err != nil || !r.Reconciled(key) {
		t.Fatalf("first reconcile: err %v, reconciled %v", err, r.Reconciled(key))
	}
	if err := c.Delete(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); err != nil || r.Reconciled(key) {
		t.Fatalf("after the delete: err %v, reconciled %v", err, r.Reconciled(key))
	}
	if want := []string{"plan owner", "record", "forget owner"}; !slices.Equal(steps, want) {
		t.Errorf("steps %q, want %q", steps, want)
	}
}

// check compares what a reconcile did with what the case wants.
func (tt loopCase) check(t *testing.T, r *Reconciler[*corev1.ConfigMap], c client.Client, steps []string, plan *fakeDecision, result reconcile.Result, err error) {
	t.Helper()
	if !slices.Equal(steps, tt.wantSteps) {
		t.Errorf("steps %q, want %q", steps, tt.wantSteps)
	}
	if (err == nil) != (tt.wantErr == nil) || (err != nil && err.Error() != tt.wantErr.Error()) {
		t.Errorf("error %v, want %v", err, tt.wantErr)
	}
	if result.RequeueAfter != tt.wantWake {
		t.Errorf("RequeueAfter %v, want %v", result.RequeueAfter, tt.wantWake)
	}
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pod := range pods.Items {
		names = append(names, pod.Name)
	}
	if !slices.Equal(names, tt.wantPods) {
		t.Errorf("pods %q, want %q", names, tt.wantPods)
	}
	if plan != nil && !errors.Is(plan.failed, tt.wantFailed) {
		t.Errorf("Record was given failed=%v, want %v", plan.failed, tt.wantFailed)
	}
	if plan != nil && tt.refuse && !plan.refused {
		t.Error("Record was not told the warm-up was refused")
	}
	if r.Reconciled(key) != tt.reconciled {
		t.Errorf("Reconciled = %v, want %v", r.Reconciled(key), tt.reconciled)
	}
}
