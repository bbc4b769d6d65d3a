package planner

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// The status's writers. Each field of ScheduledJobStatus, and each
// condition, is set by one function, here (readiness.write: Ready and
// nextScheduleTime) or in capacity.go (CapacityReady); the steps that decide
// return values, and Decide and Finish hand them to these.
// TestOneWriterPerStatusField fails when another function assigns a field.

// setObserved records which spec the status describes: its generation,
// the schedule in effect and the spread placement.
func setObserved(status *v1alpha1.ScheduledJobStatus, generation int64, effective string, placement *v1alpha1.SpreadStatus) {
	status.ObservedGeneration = generation
	status.EffectiveSchedule = effective
	status.Spread = placement
}

// setActive sets status.active, and activeCount with it.
func setActive(status *v1alpha1.ScheduledJobStatus, refs []corev1.ObjectReference) {
	status.Active = refs
	status.ActiveCount = int32(len(refs))
}

// setLastScheduleTime sets status.lastScheduleTime.
func setLastScheduleTime(status *v1alpha1.ScheduledJobStatus, t *metav1.Time) {
	status.LastScheduleTime = t
}

// setLastSuccessfulTime sets status.lastSuccessfulTime.
func setLastSuccessfulTime(status *v1alpha1.ScheduledJobStatus, t *metav1.Time) {
	status.LastSuccessfulTime = t
}

// setFailures sets status.failures (nil without spec.suspendAfterFailures).
func setFailures(status *v1alpha1.ScheduledJobStatus, streak *v1alpha1.FailureStreak) {
	status.Failures = streak
}

// setCatchUp records the catch-up a run begins (spec.catchUp).
func setCatchUp(status *v1alpha1.ScheduledJobStatus, c *v1alpha1.CatchUpStatus) {
	status.CatchUp = c.DeepCopy()
}

// recordMissed moves status.lastMissedTime forward to at, never back; a
// zero at changes nothing.
func recordMissed(status *v1alpha1.ScheduledJobStatus, at time.Time) {
	if !at.IsZero() {
		status.LastMissedTime = later(status.LastMissedTime, at)
	}
}

// setWarmUp records the warm-up: its state and when the next one begins
// (zero: none is coming).
func setWarmUp(status *v1alpha1.ScheduledJobStatus, state *v1alpha1.WarmUpStatus, nextStart time.Time) {
	status.WarmUp = state
	status.NextWarmUpTime = nil
	if !nextStart.IsZero() {
		status.NextWarmUpTime = timeAt(nextStart)
	}
}

// setLastRunStart records the latest run whose start was measured, first
// among the recent ones.
func setLastRunStart(status *v1alpha1.ScheduledJobStatus, start *v1alpha1.RunStart) {
	status.LastRunStart = start
	status.RecentRunStarts = warmup.RecordRunStart(status.RecentRunStarts, *start)
}

// setWaiting writes a concurrency group member's Waiting condition: True,
// naming them, while some of its active runs wait for room in the group
// (their Jobs suspended); absent when it is not a member.
func setWaiting(status *v1alpha1.ScheduledJobStatus, sj *v1alpha1.ScheduledJob, active []*batchv1.Job, now time.Time) {
	group := sj.Spec.ConcurrencyGroup
	if group == nil {
		meta.RemoveStatusCondition(&status.Conditions, v1alpha1.ConditionWaiting)
		return
	}
	var waiting []string
	for _, job := range active {
		if suspendedJob(job) && job.Labels[group.Label()] != "" {
			waiting = append(waiting, job.Name)
		}
	}
	kind := cmp.Or(group.Kind, v1alpha1.KindConcurrencyGroup)
	if len(waiting) == 0 {
		setCondition(status, sj.Generation, now, v1alpha1.ConditionWaiting, metav1.ConditionFalse, v1alpha1.ReasonNotWaiting,
			fmt.Sprintf("no run waits for room in %s %s", kind, group.Name))
		return
	}
	setCondition(status, sj.Generation, now, v1alpha1.ConditionWaiting, metav1.ConditionTrue, v1alpha1.ReasonWaitingForGroup,
		fmt.Sprintf("%s wait for room in %s %s (kubectl get %s %s)", strings.Join(waiting, ", "), kind, group.Name, strings.ToLower(kind), group.Name))
}

// setCondition sets a condition and reports whether its status, reason or
// message changed. Only the writers of Ready, CapacityReady and Waiting
// call it.
func setCondition(status *v1alpha1.ScheduledJobStatus, generation int64, now time.Time, conditionType string, conditionStatus metav1.ConditionStatus, reason, message string) bool {
	old := meta.FindStatusCondition(status.Conditions, conditionType)
	changed := old == nil || old.Status != conditionStatus || old.Reason != reason || old.Message != message
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               conditionType,
		Status:             conditionStatus,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now),
	})
	return changed
}

// Edits of status.active, which setActive stores.

// withJob lists a run's Job in place of its claim, or adds it.
func withJob(active []corev1.ObjectReference, job *batchv1.Job) []corev1.ObjectReference {
	for i, ref := range active {
		switch {
		case ref.UID == job.UID:
			return active
		case isClaim(ref) && ref.Name == job.Name:
			edited := slices.Clone(active)
			edited[i] = refOf(job)
			return edited
		}
	}
	return append(slices.Clone(active), refOf(job))
}

// withoutJob drops a Job that is gone.
func withoutJob(active []corev1.ObjectReference, job *batchv1.Job) []corev1.ObjectReference {
	return slices.DeleteFunc(slices.Clone(active), func(ref corev1.ObjectReference) bool { return ref.UID == job.UID })
}

// withClaim adds the claim of a run whose Job is not created yet.
func withClaim(active []corev1.ObjectReference, job *batchv1.Job) []corev1.ObjectReference {
	if claimed(active, job.Name) {
		return active
	}
	return append(slices.Clone(active), claimRef(job, job.Name))
}

// withoutClaims drops the claims of the named Jobs.
func withoutClaims(active []corev1.ObjectReference, names ...string) []corev1.ObjectReference {
	return slices.DeleteFunc(slices.Clone(active), func(ref corev1.ObjectReference) bool { return isClaim(ref) && slices.Contains(names, ref.Name) })
}

// The Ready condition and status.nextScheduleTime have one writer,
// readiness.write, which Finish calls once. The steps that decide them
// return a readiness instead of writing status, and Finish lets an
// action's result override the decision (a run whose Job name is taken, a
// run that did not start), in one stated order, so that no result depends
// on the order of calls: cert-manager's trigger controller works the same
// way (its policy chain returns a reason and message; one condition is
// written from them).

// readiness is what the Ready condition and status.nextScheduleTime say.
type readiness struct {
	// next is the next run status announces; nil for none.
	next    *time.Time
	ready   bool
	reason  string
	message string
}

// readyReason is the reason of status's Ready condition ("" without one).
func readyReason(status *v1alpha1.ScheduledJobStatus) string {
	if ready := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady); ready != nil {
		return ready.Reason
	}
	return ""
}

// notReady is a readiness that announces no run.
func notReady(reason, message string) readiness {
	return readiness{reason: reason, message: message}
}

// scheduled is a readiness that announces the run at next.
func scheduled(next time.Time, message string) readiness {
	return readiness{next: &next, ready: true, reason: v1alpha1.ReasonScheduled, message: message}
}

// changes reports whether writing r would change the status, reason or
// message of status's Ready condition: an event that reports the condition
// is emitted only then, not on every reconcile.
func (r readiness) changes(status *v1alpha1.ScheduledJobStatus) bool {
	old := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady)
	return old == nil || old.Status != r.conditionStatus() || old.Reason != r.reason || old.Message != r.message
}

func (r readiness) conditionStatus() metav1.ConditionStatus {
	if r.ready {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// retrying is r once a scheduled run did not start (its create failed, or
// a Replace deletion before it did): status announces that run, not the
// one after it. The returned error retries the reconcile, and a new leader
// may be the one that retries; had the status written meanwhile announced
// the following run, notBeforeAnnounced would take the failed run for one
// the schedule never had, and it would be lost without a trace (a create
// refused while etcd restarts must be retried by whichever leader comes
// next).
func (r readiness) retrying(run *Run) readiness {
	next := r.next
	if next == nil || run.Scheduled.Before(*next) {
		next = &run.Scheduled
	}
	return readiness{next: next, ready: true, reason: v1alpha1.ReasonScheduled,
		message: "the run at " + run.Scheduled.UTC().Format(time.RFC3339) + " did not start and is retried"}
}

// starting is r while a claimed run's Job is being created: status
// announces that run until its Job exists, so that whoever creates it
// (the claimer, or the next leader if the claimer died) finds it due.
func (r readiness) starting(run *Run) readiness {
	next := r.next
	if next == nil || run.Scheduled.Before(*next) {
		next = &run.Scheduled
	}
	return readiness{next: next, ready: true, reason: v1alpha1.ReasonScheduled,
		message: "the run at " + run.Scheduled.UTC().Format(time.RFC3339) + " is starting"}
}

// write records r in status: the one place that sets the Ready condition
// and status.nextScheduleTime.
func (r readiness) write(status *v1alpha1.ScheduledJobStatus, generation int64, now time.Time) {
	status.NextScheduleTime = nil
	if r.next != nil {
		status.NextScheduleTime = timeAt(*r.next)
	}
	setCondition(status, generation, now, v1alpha1.ConditionReady, r.conditionStatus(), r.reason, r.message)
}

// Outcome is what a reconcile ends with: the status to write, the events
// to emit and the runs that did not start, by reason, for the metric.
type Outcome struct {
	Status v1alpha1.ScheduledJobStatus
	Events []Event
	Missed map[MissReason]int
	// WarmUp is the warm-up strategy, or "none", for the metrics' labels.
	WarmUp string
	// Started is set when a run's start was first seen: scheduled time to
	// its first container running, and where that time went.
	Started *v1alpha1.RunStart
	// CapacityReadyAfter is set when a warm-up's capacity became ready:
	// how long after the warm-up began. WarmUpLate is set when a run
	// started before its capacity was ready.
	CapacityReadyAfter *time.Duration
	WarmUpLate         bool
	// SuspendedAfterFailures is set when a failure streak suspended the
	// ScheduledJob (spec.suspendAfterFailures).
	SuspendedAfterFailures bool
	// DeadlineAtRisk is set when the latest run was first reported at
	// risk of missing spec.deadline; DeadlinesMissed counts the runs
	// reported past it.
	DeadlineAtRisk  bool
	DeadlinesMissed int
	// ObjectiveRuns and ObjectiveLate are how many runs were counted
	// against spec.startObjective, and how many of them late
	// (status.startObjective).
	ObjectiveRuns, ObjectiveLate int
}

// Result is what became of one action of a Plan. The reconciler reports one
// per action it attempted, in the order it attempted them.
type Result struct {
	kind resultKind
	job  *batchv1.Job
	run  *Run
	// warmUp is what became of the warm-up changes.
	warmUp warmup.Applied
	err    error
}

type resultKind int

const (
	deleted resultKind = iota
	alreadyGone
	deleteFailed
	created
	alreadyCreated
	nameTaken
	createFailed
	warmUpApplied
	claimedRun
)

// Deleted reports that the Job was deleted.
func Deleted(job *batchv1.Job) Result { return Result{kind: deleted, job: job} }

// AlreadyGone reports that the Job to delete did not exist any more.
func AlreadyGone(job *batchv1.Job) Result { return Result{kind: alreadyGone, job: job} }

// DeleteFailed reports that deleting the Job failed with err.
func DeleteFailed(job *batchv1.Job, err error) Result {
	return Result{kind: deleteFailed, job: job, err: err}
}

// Created reports that the run's Job was created; job is the API server's
// answer, with its UID.
func Created(run *Run, job *batchv1.Job) Result { return Result{kind: created, run: run, job: job} }

// StartedScheduledRun reports whether the result is a scheduled run (not one
// triggered by hand) whose Job was just created.
func (r Result) StartedScheduledRun() bool { return r.kind == created && !r.run.Triggered() }

// AlreadyCreated reports that the run's Job existed and is this
// ScheduledJob's (a crash between creating it and writing status); job is
// the existing Job.
func AlreadyCreated(run *Run, job *batchv1.Job) Result {
	return Result{kind: alreadyCreated, run: run, job: job}
}

// NameTaken reports that a Job with the run's name exists and is not this
// ScheduledJob's, so the run cannot start.
func NameTaken(run *Run) Result { return Result{kind: nameTaken, run: run} }

// CreateFailed reports that creating the run's Job failed with err; it is
// retried.
func CreateFailed(run *Run, err error) Result { return Result{kind: createFailed, run: run, err: err} }

// Claimed reports that the run was claimed: a status listing it in
// status.active was written before its Job is created.
func Claimed(run *Run) Result { return Result{kind: claimedRun, run: run} }

// Claims are the results of claiming every run of the plan that needs a
// claim.
func (p Plan) Claims() []Result {
	var results []Result
	for _, run := range []*Run{p.Create, p.Early, p.Trigger} {
		if run != nil && run.Claim {
			results = append(results, Claimed(run))
		}
	}
	return results
}

// WarmUpApplied reports what became of the plan's warm-up changes
// (Plan.WarmUp), carried out by the one warm-up executor.
func WarmUpApplied(applied warmup.Applied) Result {
	return Result{kind: warmUpApplied, warmUp: applied}
}

// Finish returns the outcome of the plan once its actions have the given
// results: the one place that says how an executed action changes status
// and what it reports.
func (p Plan) Finish(results ...Result) Outcome {
	out := p.beforeActions
	out.Status = *p.beforeActions.Status.DeepCopy()
	out.Events = slices.Clone(p.beforeActions.Events)
	out.Missed = maps.Clone(p.beforeActions.Missed)
	if out.Missed == nil {
		out.Missed = map[MissReason]int{}
	}
	ready, capacity := p.readiness, p.capacity
	for _, r := range results {
		out.Events = append(out.Events, r.events()...)
		if r.kind == warmUpApplied {
			for _, failure := range r.warmUp.Failed {
				capacity = warmUpFailed(failure)
			}
			continue
		}
		if conflict := p.apply(&out, r); conflict != nil {
			ready = *conflict
		}
	}
	// A run that is retried outranks a conflict: it is the next run.
	for _, run := range []*Run{p.Create, p.Early} {
		switch {
		case run == nil || settled(run, results):
		case slices.ContainsFunc(results, func(r Result) bool { return r.run == run && r.kind == claimedRun }):
			ready = ready.starting(run)
		default:
			ready = ready.retrying(run)
		}
	}
	ready.write(&out.Status, p.generation, p.now)
	capacity.write(&out.Status, p.generation, p.now)
	p.countObjective(&out)
	return out
}

// Reports reports whether the plan, before any action, emits an event with
// the reason.
func (p Plan) Reports(reason string) bool {
	return slices.ContainsFunc(p.beforeActions.Events, func(e Event) bool { return e.Reason == reason })
}

// ResultEvents returns only the events the results report (SuccessfulCreate,
// SuccessfulDelete, FailedCreate, …), not those the plan decided before
// acting, except the MissSchedule of the runs a created run skipped: what
// a standby, which writes no status and leaves the rest to the leader, has
// to say, or a leader whose status write failed after the create.
func (p Plan) ResultEvents(results ...Result) []Event {
	var events []Event
	for _, r := range results {
		if r.kind == created && !r.run.Skipped.IsZero() {
			events = append(events, missScheduleEvent(r.run.Skipped))
		}
	}
	for _, r := range results {
		events = append(events, r.events()...)
	}
	return events
}

// events are what one result reports, in Finish's order.
func (r Result) events() []Event {
	switch r.kind {
	case deleted:
		return []Event{successfulDeleteEvent(r.job)}
	case deleteFailed:
		return []Event{failedDeleteEvent(r.err)}
	case created:
		events := []Event{successfulCreateEvent(r.job)}
		if r.run.Triggered() {
			events = append(events, triggeredEvent(r.job))
		}
		if r.run.BeginsCatchUp {
			events = append(events, catchUpEvent(r.run.CatchUp))
		}
		return events
	case nameTaken:
		return []Event{jobNameConflictEvent(conflictMessage(r.run))}
	case createFailed:
		return []Event{failedCreateEvent(r.err)}
	case warmUpApplied:
		events := make([]Event, 0, len(r.warmUp.Failed))
		for _, failure := range r.warmUp.Failed {
			events = append(events, failure.Event())
		}
		return events
	}
	return nil
}

// settled reports whether the results say what became of run: its Job was
// created or found, or its name was taken (a missed run). A run whose
// create failed, or was never tried because a Replace deletion failed
// first, is not.
func settled(run *Run, results []Result) bool {
	return slices.ContainsFunc(results, func(r Result) bool {
		return r.run == run && (r.kind == created || r.kind == alreadyCreated || r.kind == nameTaken)
	})
}

// apply adds one result's effects on status to out (its events are
// Result.events). A run whose Job name is taken returns the readiness
// that reports it.
func (p Plan) apply(out *Outcome, r Result) *readiness {
	status := &out.Status
	switch r.kind {
	case deleted, alreadyGone:
		setActive(status, withoutJob(status.Active, r.job))
	case created, alreadyCreated:
		addActive(status, r.job, r.run, p.now)
	case claimedRun:
		setActive(status, withClaim(status.Active, r.run.Job))
	case nameTaken:
		setActive(status, withoutClaims(status.Active, r.run.Job.Name))
		out.Missed[MissConflict]++
		conflict := p.conflict(status, r.run)
		return &conflict
	}
	return nil
}

// addActive lists a run's Job in status.active; a scheduled run whose time
// has come also moves lastScheduleTime.
func addActive(status *v1alpha1.ScheduledJobStatus, job *batchv1.Job, run *Run, now time.Time) {
	// A run created early (EarlyStart) moves lastScheduleTime at its time.
	if !run.Triggered() && !run.Scheduled.After(now) {
		setLastScheduleTime(status, later(status.LastScheduleTime, run.Scheduled))
	}
	if run.CatchUp != nil {
		setCatchUp(status, run.CatchUp)
	}
	setActive(status, withJob(status.Active, job))
}

// conflict records a run that could not start because a Job of its name
// exists and is not this ScheduledJob's. Upstream stops there without a
// requeue and stalls until something else changes; here the run counts as
// missed, Ready says why, and the next run is announced as planned (its
// Job name differs).
func (p Plan) conflict(status *v1alpha1.ScheduledJobStatus, run *Run) readiness {
	recordMissed(status, run.Scheduled)
	conflict := notReady(v1alpha1.ReasonJobNameConflict, conflictMessage(run))
	conflict.next = p.readiness.next
	return conflict
}

// conflictMessage says which run's Job name is taken.
func conflictMessage(run *Run) string {
	return "job " + run.Job.Name + " already exists and is not controlled by this ScheduledJob; the run scheduled at " +
		run.Scheduled.UTC().Format(time.RFC3339) + " did not start"
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}
