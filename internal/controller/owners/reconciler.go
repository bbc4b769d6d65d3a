// Package owners is the reconcile loop that ScheduledJobs and plain
// CronJobs annotated warmup.ontime.dev/lead share. As
// Kueue's jobframework does for its kinds of job, it holds the loop, and
// each kind of owner (a Kind) supplies what differs: how it is read and
// decided about, and where its status is written.
//
// One reconcile, for any owner:
//
//  1. read the owner from the cache; one that is gone is forgotten;
//  2. Kind.Decide: gather what deciding reads (its warm-up objects with
//     warmupobjects.Executor.Gather, as every kind does, and the kind's
//     own: Jobs, state), and decide, a pure function of that and now;
//  3. if the plan starts runs (RunStarter, a ScheduledJob's), start them
//     first: a run never waits for warm-up's requests;
//  4. carry out the warm-up changes with the process's one executor
//     (warmupobjects.Executor);
//  5. Decision.Record: write the owner's status, or state, once, with what was
//     decided and done, and emit the events;
//  6. wake up when the plan says, counted from when it was planned, or
//     soon after a refused warm-up.
package owners

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/internal/controller/requeue"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
	"github.com/ontime-dev/ontime/internal/wakeup"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Kind is one kind of owner of warm-up, as the reconciler needs it.
type Kind[O client.Object] interface {
	// New is an empty owner to read one into.
	New() O
	// Forget drops what the kind remembers of an owner that is gone.
	Forget(ctx context.Context, key types.NamespacedName) error
	// Decide reads what deciding about owner needs (its warm-up objects with
	// warmupobjects.Executor.Gather) and decides what to do at now, purely
	// from what it read. A nil Decide, with a nil error, is nothing to do:
	// the owner went or was replaced meanwhile, or cannot be decided about.
	Decide(ctx context.Context, owner O, now time.Time) (Decision, error)
}

// Decision is what a kind decided about one owner, and how to record it.
type Decision interface {
	// WarmUp are the warm-up objects to create and delete.
	WarmUp() warmup.Changes
	// Record writes, once, what was decided and done in the owner's
	// status or state, and emits the events. failed is the first error of
	// starting the runs or of warm-up. The error returned is the
	// reconcile's: nil only when nothing is left to retry.
	Record(ctx context.Context, warm warmup.Applied, failed error) error
	// Wake is when to reconcile again, as a delay from when the plan was
	// made: 0 waits for a change.
	Wake() time.Duration
}

// RunStarter is a Decision that starts runs (a ScheduledJob's): the reconciler
// starts them before anything else.
type RunStarter interface {
	// StartRuns carries out what must not wait: claims, then the runs'
	// Jobs. stop ends the reconcile there, with err; otherwise err (a run
	// that could not start) is the reconcile's once the rest is done.
	StartRuns(ctx context.Context) (stop bool, err error)
}

// Reconciler reconciles the owners of one kind.
type Reconciler[O client.Object] struct {
	kind   Kind[O]
	client client.Reader
	clock  clock.PassiveClock
	warmUp *warmupobjects.Executor
	// reconciled are the owners reconciled since the process started
	// (types.NamespacedName -> struct{}).
	reconciled sync.Map
}

// NewReconciler returns the reconciler of kind's owners, read with c
// (the manager's cache), timed by clk, whose warm-up warmUp carries out.
func NewReconciler[O client.Object](kind Kind[O], c client.Reader, clk clock.PassiveClock, warmUp *warmupobjects.Executor) *Reconciler[O] {
	return &Reconciler[O]{kind: kind, client: c, clock: clk, warmUp: warmUp}
}

// Reconcile brings one owner up to date, in three steps: read it, decide
// once (its kind's Plan reads what it needs and asks the planner), then
// carry the decision out (carryOut: its runs, its warm-up, its record)
// and wake up when the decision says.
func (r *Reconciler[O]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	// 1. Read the owner from the cache; one that is gone is forgotten.
	owner := r.kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, owner); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		r.reconciled.Delete(req.NamespacedName)
		return reconcile.Result{}, r.kind.Forget(ctx, req.NamespacedName)
	}
	// 2. Decide, as of now.
	now := r.clock.Now()
	plan, err := r.kind.Decide(ctx, owner, now)
	if err != nil || plan == nil {
		return reconcile.Result{}, err
	}
	// 3. Carry the decision out.
	result, err := r.carryOut(ctx, plan, now)
	if err == nil {
		r.reconciled.Store(req.NamespacedName, struct{}{})
	}
	return result, err
}

// carryOut carries the plan out: runs, warm-up, then the record. The
// runs come first so that nothing else delays them; the record comes last
// so that it records what the runs and the warm-up came to.
func (r *Reconciler[O]) carryOut(ctx context.Context, plan Decision, now time.Time) (reconcile.Result, error) {
	// 3a. Start the runs (a plan that starts runs may stop here: it
	// records them at the next reconcile, which their Jobs' events queue).
	var runErr error
	if runs, ok := plan.(RunStarter); ok {
		var stop bool
		if stop, runErr = runs.StartRuns(ctx); stop {
			if runErr != nil {
				return reconcile.Result{}, runErr
			}
			return requeue.After(r.remaining(now, plan.Wake())), nil
		}
	}
	// 3b. Warm-up: create and delete placeholder pods and CapacityBuffers.
	wake := r.remaining(now, plan.Wake())
	warm, warmErr := r.warmUp.Execute(ctx, plan.WarmUp())
	if warm.Refused {
		// Tried again soon, not at the backoff: the run starts whatever
		// becomes of its warm-up.
		wake = warmup.RetryAfterRefusal(wake)
	}
	// 3c. Record what was done (the status, or the CronJob's state), then
	// report a failure for a retry, or wake up when the plan said.
	failed := runErr
	if failed == nil {
		failed = warmErr
	}
	if err := plan.Record(ctx, warm, failed); err != nil {
		return reconcile.Result{}, err
	}
	if failed != nil {
		return reconcile.Result{}, failed
	}
	log.FromContext(ctx).V(1).Info("reconciled", "requeueAfter", wake)
	return requeue.After(wake), nil
}

// remaining is what is left of a wake-up delay planned at now once the
// reconcile's requests are done: the wake-up comes at the planned time
// however long they took, and the owners due at one instant come due
// together.
func (r *Reconciler[O]) remaining(now time.Time, wake time.Duration) time.Duration {
	if wake == 0 {
		return 0
	}
	return wakeup.Delay(r.clock.Now(), now.Add(wake))
}

// Reconciled reports whether the owner has been reconciled since the
// process started: the standby of the same replica leaves its runs to the
// leader from then on.
func (r *Reconciler[O]) Reconciled(key types.NamespacedName) bool {
	_, ok := r.reconciled.Load(key)
	return ok
}
