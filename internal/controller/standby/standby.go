// Package standby starts, on every replica, the scheduled runs that the
// leader has not started a moment after their time. A leader that dies
// keeps the leader election Lease until it expires (15 s) and the next one
// then takes it; without a standby every run due meanwhile would wait.
//
// The standby is narrow on purpose. Cluster says all it does: it reads
// ScheduledJobs and their Jobs, plans each with the leader's planner, once
// per reconcile, and of the plan carries out only the scheduled run's Job,
// the one object it creates (a Forbid run is first claimed in status, the
// one write it makes). It deletes nothing, writes no other status, handles
// no trigger, warms nothing up, and places nothing in a spread group: the
// leader does all of that, from the Jobs that exist, once there is one.
//
// Why the leader and any number of standbys start each run at most once,
// and never two Forbid runs side by side, is stated in
// internal/planner/failover.go and docs/reliability.md: the standby starts
// a run only within planner.StandbyWindow of its time, no run's Job is
// deleted before that window has closed, and a Forbid run is claimed with
// a status write conditional on the version it was planned from.
package standby

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/requeue"
	"github.com/ontime-dev/ontime/internal/planner"
)

// DefaultGrace is how long after a run's time the standby starts it if
// the leader has not: long enough that a live leader's Job, created within
// milliseconds, is in the standby's cache by then (so a live leader costs
// the standby no request), short enough that a run whose leader died is at
// most that late.
const DefaultGrace = 500 * time.Millisecond

// Leader is the leader controller of the standby's own replica.
type Leader interface {
	// Reconciled reports whether it has reconciled the ScheduledJob since
	// it started: once the replica leads, the standby acts on a
	// ScheduledJob only until then.
	Reconciled(key types.NamespacedName) bool
}

// Standby is the standby of one replica.
type Standby struct {
	cluster  Cluster
	clock    clock.PassiveClock
	recorder record.EventRecorder
	grace    time.Duration
	// leading is closed once the replica leads; leader is its controller.
	leading <-chan struct{}
	leader  Leader
	// memory is what the standby remembers between reconciles.
	memory memory
	// judgements keep each ScheduledJob's spec judged once per generation
	// and placement.
	judgements planner.Judgements
}

// memory is what the standby remembers between reconciles, all of it
// learned again after a restart: the Lease's watch tells the Lease's
// state at once, and a ScheduledJob whose status or Jobs the cache lags
// is read live again after the next refused claim.
//
// Locking: mu guards every field; each method holds it for its whole
// body and calls nothing outside the type.
type memory struct {
	mu sync.Mutex
	// leaseReleased is whether the leader election Lease names no holder
	// (a leader stopped gracefully released it): nothing else will start
	// the runs, so the standby starts them without its grace.
	leaseReleased bool
	// lastJobCreated is when the replica's cache last showed a run's Job
	// created by someone else, by the standby's clock (zero: never).
	lastJobCreated time.Time
	// leaseRenewed is when the replica's Lease watch last showed the
	// holder renewing the Lease, by the standby's clock (zero: never).
	leaseRenewed time.Time
	// readLive are the ScheduledJobs whose claim was refused: the cache
	// is behind, and the next reconcile plans from a live read.
	readLive map[types.NamespacedName]bool
	// created are the Jobs the standby created itself, by namespace and
	// name, until its cache shows them: the expectations of its own
	// creates. (Keyed by name alone, a leader's Job of the same name in
	// another namespace would be taken for the standby's own.)
	created map[types.NamespacedName]bool
	// failureReported is, by ScheduledJob, the run (its Job's name) whose
	// failed create was reported: the retries of the same run, every
	// backoff step of an API outage, are logged, not sent as events again.
	failureReported map[types.NamespacedName]string
}

// leaderBusyFor is how long after it last saw a run's Job created the
// standby leaves due runs to the leader: a live leader starting a minute's
// burst of runs keeps creating Jobs, and the standby, whose cache shows
// them a little late, would otherwise try to create the last ones too
// (answered AlreadyExists). It only saves requests: a standby that acts
// beside a live leader starts nothing twice.
const leaderBusyFor = 250 * time.Millisecond

// leaderRenewsWithin: a live leader renews the Lease every
// --leader-elect-retry-period (2 s by default). The Jobs a standby sees
// created while the holder has not renewed for longer are another
// replica's standby's, the holder being dead: waiting for them would only
// make both standbys pause in turn, each seeing the other's Jobs.
const leaderRenewsWithin = 5 * time.Second

// JobCreated tells the standby its cache shows a run's Job just created;
// one it created itself says nothing of the leader.
func (s *Standby) JobCreated(job types.NamespacedName) { s.memory.jobCreated(job, s.clock.Now()) }

// New returns the standby of a replica whose leader controller is leader,
// leading once leading is closed (manager.Elected()).
func New(cluster Cluster, clk clock.PassiveClock, recorder record.EventRecorder, grace time.Duration, leading <-chan struct{}, leader Leader) *Standby {
	return &Standby{cluster: cluster, clock: clk, recorder: recorder, grace: grace, leading: leading, leader: leader}
}

// Name identifies the standby in logs and metrics.
func (s *Standby) Name() string { return "scheduledjob.standby" }

// Reconcile starts the ScheduledJob's due run if the leader has not.
func (s *Standby) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if s.handedOver(req.NamespacedName) {
		return reconcile.Result{}, nil
	}
	live := s.memory.takeReadLive(req.NamespacedName)
	sj, err := s.cluster.ScheduledJob(ctx, req.NamespacedName, live)
	if apierrors.IsNotFound(err) {
		s.memory.forgetReported(req.NamespacedName) // nothing left to report
		s.judgements.Forget(req.NamespacedName)
	}
	if err != nil || sj.DecodeError != "" {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	now := s.clock.Now()
	plan, err := s.plan(ctx, sj, now, false)
	if err == nil && plan.FailuresUncounted {
		plan, err = s.plan(ctx, sj, now, true)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	run := plan.Create
	next := requeue.After(s.after(plan.RequeueAfter))
	switch {
	case run == nil || !now.Before(plan.StandbyUntil):
		return next, nil // nothing due, or too late: the leader's
	case now.Before(run.Scheduled.Add(s.currentGrace())):
		return requeue.After(run.Scheduled.Add(s.currentGrace()).Sub(now)), nil
	case s.leaderBusy(now):
		return requeue.After(leaderBusyFor), nil
	}
	if run.Claim {
		if err := s.cluster.Claim(ctx, sj, planner.Claiming(sj, run)); err != nil {
			if apierrors.IsConflict(err) {
				s.memory.readLiveNext(req.NamespacedName)
			}
			return reconcile.Result{}, err
		}
	}
	return next, s.start(ctx, sj, plan)
}

// plan plans from the ScheduledJob's Jobs, from the cache or listed live.
// The standby writes no count of failures, but counts them from Jobs that
// are one read, to start no run that a streak of failures has stopped
// (spec.suspendAfterFailures) while the leader's suspension is still to be
// written; from Jobs that are not, it starts none (Plan.FailuresUncounted)
// and lists them live.
func (s *Standby) plan(ctx context.Context, sj *v1alpha1.ScheduledJob, now time.Time, live bool) (planner.Plan, error) {
	jobs, oneRead, err := s.cluster.Jobs(ctx, sj, live)
	if err != nil {
		return planner.Plan{}, err
	}
	placement := sj.RecordedPlacement()
	return planner.Decide(planner.Input{ScheduledJob: sj, Jobs: jobs, Now: now, Placement: placement, CountFailures: oneRead,
		Judged: s.judgements.Of(sj, placement, now)}), nil
}

// start creates the run's Job, if its window has not closed meanwhile,
// and reports it. AlreadyExists is the leader's (or another standby's)
// Job: nothing to do.
func (s *Standby) start(ctx context.Context, sj *v1alpha1.ScheduledJob, plan planner.Plan) error {
	if !s.clock.Now().Before(plan.StandbyUntil) {
		return nil
	}
	job := plan.Create.Job.DeepCopy()
	key := client.ObjectKeyFromObject(sj)
	jobKey := client.ObjectKeyFromObject(job)
	s.memory.creating(jobKey)
	switch creation, err := s.cluster.CreateJob(ctx, job); creation {
	case jobcontrol.Created:
		s.memory.forgetReported(key)
		jobcontrol.Emit(s.recorder, sj, plan.ResultEvents(planner.Created(plan.Create, job)))
	case jobcontrol.Refused:
		if s.memory.createRefused(key, jobKey) {
			jobcontrol.Emit(s.recorder, sj, plan.ResultEvents(planner.CreateFailed(plan.Create, err)))
		}
		return err
	default:
		// The leader's Job, another standby's, or a name taken: the
		// leader reports it.
		s.memory.notCreated(key, jobKey)
	}
	return nil
}

// after is when to look again: the grace after what the plan says.
func (s *Standby) after(requeueAfter time.Duration) time.Duration {
	if requeueAfter == 0 {
		return 0
	}
	return requeueAfter + s.currentGrace()
}

// leaderBusy reports whether the standby saw a run's Job created within
// leaderBusyFor, while a holder of the Lease renews it.
func (s *Standby) leaderBusy(now time.Time) bool { return s.memory.leaderBusy(now) }

// currentGrace is how long after a run's time the standby starts it.
func (s *Standby) currentGrace() time.Duration {
	if s.memory.released() {
		return 0
	}
	return s.grace
}

// handedOver reports whether the replica leads and its leader controller
// has reconciled the ScheduledJob: the leader starts its runs from then on.
// Until the new leader has gone through every ScheduledJob once (it writes
// each one's status), the standby goes on starting their runs.
func (s *Standby) handedOver(key types.NamespacedName) bool {
	select {
	case <-s.leading:
		return s.leader.Reconciled(key)
	default:
		return false
	}
}

// jobCreated records that the cache shows the Job just created: the
// end of the standby's own expectation, or a Job of someone else's, the
// leader's sign of life.
func (m *memory) jobCreated(job types.NamespacedName, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.created[job] {
		delete(m.created, job)
		return
	}
	m.lastJobCreated = now
}

// leaseRenewedAt records that the Lease's holder renewed it at now.
func (m *memory) leaseRenewedAt(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.leaseRenewed = now
}

// leaseChanged records whether the Lease is released, and returns whether
// it was before.
func (m *memory) leaseChanged(released bool) (wasReleased bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	wasReleased, m.leaseReleased = m.leaseReleased, released
	return wasReleased
}

// released reports whether the Lease names no holder.
func (m *memory) released() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaseReleased
}

// leaderBusy reports whether a run's Job of someone else's was seen
// created within leaderBusyFor, while a holder of the Lease renews it.
func (m *memory) leaderBusy(now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.leaseReleased && within(now, m.lastJobCreated, leaderBusyFor) && within(now, m.leaseRenewed, leaderRenewsWithin)
}

// within reports whether at (zero for never) is less than d before now.
func within(now, at time.Time, d time.Duration) bool {
	return !at.IsZero() && now.Sub(at) < d
}

// readLiveNext has the next reconcile of key read it live.
func (m *memory) readLiveNext(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.readLive == nil {
		m.readLive = map[types.NamespacedName]bool{}
	}
	m.readLive[key] = true
}

// takeReadLive reports whether this reconcile of key reads it live, and
// forgets it.
func (m *memory) takeReadLive(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	live := m.readLive[key]
	delete(m.readLive, key)
	return live
}

// creating expects the Job, which the standby is about to create.
func (m *memory) creating(job types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.created == nil {
		m.created = map[types.NamespacedName]bool{}
	}
	m.created[job] = true
}

// createRefused forgets the expectation of the Job, which the API
// server refused, and reports whether the refusal of this run is new to
// report (not a retry of the run reported last for key).
func (m *memory) createRefused(key, job types.NamespacedName) (report bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.created, job)
	if m.failureReported == nil {
		m.failureReported = map[types.NamespacedName]string{}
	}
	reported, ok := m.failureReported[key]
	m.failureReported[key] = job.Name
	return !ok || reported != job.Name
}

// notCreated forgets the expectation of the Job, which someone else
// created, and the failure reported for key.
func (m *memory) notCreated(key, job types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.created, job)
	delete(m.failureReported, key)
}

// forgetReported forgets the failure reported for key: its run started,
// or it is gone.
func (m *memory) forgetReported(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.failureReported, key)
}
