package scheduledjob

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/owners"
	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// kind is the ScheduledJob as an owner the one reconciler of warm-up's
// owners (owners.Reconciler) reconciles.
type kind struct{ *Controller }

func (kind) New() *v1alpha1.ScheduledJob { return &v1alpha1.ScheduledJob{} }

// Forget drops what the controller knew of a deleted ScheduledJob, and its
// place in its spread group's ledger.
func (k kind) Forget(ctx context.Context, key types.NamespacedName) error {
	k.known.forget(key)
	k.undecodable.forget(key)
	return k.ledgers.ForgetDeleted(ctx, key)
}

// Plan gathers and plans. Its steps keep the invariants of
// docs/reliability.md ("Exactly once"): a run is started only from a
// status confirmed with the API server since this controller started (a
// second plan, after confirm), and a Job reported missing is judged from
// the API server's Jobs, not a cache behind (a third). An undecodable
// ScheduledJob is reported and left alone: no plan.
func (k kind) Plan(ctx context.Context, cached *v1alpha1.ScheduledJob, now time.Time) (owners.Plan, error) {
	key := client.ObjectKeyFromObject(cached)
	if cached.DecodeError != "" {
		k.undecodable.report(ctx, k.Controller, cached)
		return nil, nil
	}
	k.undecodable.forget(key)
	p, err := k.plan(ctx, cached, now, false)
	if err == nil && needsConfirmation(p.plan) && !k.known.isConfirmed(key) {
		p, err = k.confirm(ctx, cached, now)
	}
	if err == nil && p.sj != nil && p.plan.Reports(v1alpha1.ReasonMissingJob) {
		// A Job reported missing is one the API server does not have; what
		// replaced it, if anything, must not be judged from a cache behind.
		p, err = k.plan(ctx, cached, now, true)
	}
	if err != nil || p.sj == nil {
		return nil, err
	}
	return &runPlan{c: k.Controller, key: key, planned: p}, nil
}

// runPlan is a ScheduledJob's plan as the loop carries it out
// (carryout.go): its runs first (StartRuns), then warm-up, then Record.
type runPlan struct {
	c   *Controller
	key types.NamespacedName
	planned
	// results are what became of the claims and runs.
	results []planner.Result
	// deferred is set when the runs were started and the status left to
	// the next reconcile (deferStatus).
	deferred bool
}

func (p *runPlan) WarmUp() warmup.Changes { return p.plan.WarmUp }

// Wake is the plan's requeue, bounded by statusDeferral when the status
// was deferred.
func (p *runPlan) Wake() time.Duration {
	if p.deferred && (p.plan.RequeueAfter == 0 || p.plan.RequeueAfter > statusDeferral) {
		return statusDeferral
	}
	return p.plan.RequeueAfter
}
