package scheduledjob

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/owners"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// kind is the ScheduledJob kind of owners.Reconciler: how a ScheduledJob
// is read, planned and recorded.
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
// docs/reliability.md ("Exactly once"): a run an active limit (Forbid,
// maxActive) holds back is judged
// from the API server's copies of the Jobs holding it while the cache may
// be behind after an outage; a run is started only from a status confirmed
// with the API server since this controller started (a plan again, after
// confirm); and a Job reported missing is judged from the API server's
// Jobs, not a cache behind. An undecodable ScheduledJob is reported and
// left alone: no plan.
func (k kind) Plan(ctx context.Context, cached *v1alpha1.ScheduledJob, now time.Time) (owners.Plan, error) {
	key := client.ObjectKeyFromObject(cached)
	if cached.DecodeError != "" {
		k.undecodable.report(ctx, k.Controller, cached)
		return nil, nil
	}
	k.undecodable.forget(key)
	behind := k.cacheMayBeBehind(now)
	p, read, err := k.planReadingLive(ctx, cached, now, behind)
	if err == nil && needsConfirmation(p.plan) && !k.known.isConfirmed(key) {
		p, err = k.confirm(ctx, cached, now, read)
	}
	if err == nil && p.sj != nil && p.plan.Reports(v1alpha1.ReasonMissingJob) {
		// A Job reported missing is one the API server does not have; what
		// replaced it, if anything, must not be judged from a cache behind.
		p, err = k.plan(ctx, cached, now, liveJobs)
	}
	if err != nil || p.sj == nil {
		return nil, err
	}
	return &runPlan{c: k.Controller, key: key, planned: p, recheckHeld: !p.plan.Held.IsZero() && behind}, nil
}

// planReadingLive plans from the cache, then again from the API server's
// Jobs where the cache would mislead the plan: a limit holds a due run back
// for Jobs the cache shows running, and the cache may be behind after an
// outage (whether they have finished is asked of the API server, one GET
// each); or Jobs read ahead of the cache may hold failures that stop the
// ScheduledJob (counted from one list of the API server's Jobs).
func (k kind) planReadingLive(ctx context.Context, cached *v1alpha1.ScheduledJob, now time.Time, behind bool) (planned, jobsRead, error) {
	read := cachedJobs
	p, err := k.plan(ctx, cached, now, read)
	for err == nil && p.sj != nil {
		switch {
		case read == cachedJobs && !p.plan.Held.IsZero() && behind:
			read = liveActiveJobs
		case read != liveJobs && p.plan.FailuresUncounted:
			read = liveJobs
		default:
			return p, read, nil
		}
		p, err = k.plan(ctx, cached, now, read)
	}
	return p, read, err
}

// heldRecheck is how often a run a limit holds back is looked at again
// while the cache may be behind (cacheMayBeBehind): the update of the Job
// it waits for may not reach the cache before the run's minute is over.
const heldRecheck = time.Second

// cacheMayBeBehind reports whether the API server failed to answer this
// process recently enough that a cache's watch may not have caught up yet
// (recovery.CacheCatchUp).
func (c *Controller) cacheMayBeBehind(now time.Time) bool {
	return c.unanswered.Within(now, recovery.CacheCatchUp)
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
	// recheckHeld looks again at a held run soon: the cache may not show
	// the Job it waits for finishing.
	recheckHeld bool
}

func (p *runPlan) WarmUp() warmup.Changes { return p.plan.WarmUp }

// Wake is the plan's requeue, bounded by statusDeferral when the status
// was deferred, and by heldRecheck when a held run is looked at again.
func (p *runPlan) Wake() time.Duration {
	wake := p.plan.RequeueAfter
	if p.deferred {
		wake = atMost(wake, statusDeferral)
	}
	if p.recheckHeld {
		wake = atMost(wake, heldRecheck)
	}
	return wake
}

// atMost bounds a wake-up delay (0: none) by bound.
func atMost(wake, bound time.Duration) time.Duration {
	if wake == 0 || wake > bound {
		return bound
	}
	return wake
}
