// Package planner decides what a ScheduledJob's controller does, as a pure
// function of the ScheduledJob, its Jobs and the current time, like the
// CronJob controller's syncCronJob(now). The reconciler gathers the input,
// carries out the plan's actions and hands their results back to Finish,
// which says what status to write and which events to emit; nothing here
// does I/O or reads a clock.
//
// Decide is a chain of steps, one per feature, in a stated order
// (decide.go): judge (what the spec means and what the webhook's rules
// find wrong with it; a controller keeps it per generation in Judgements),
// observeJobs (what the Jobs say), decideFailures (suspendAfterFailures),
// scheduleOf (the schedule in effect: v1alpha1.ScheduledJob.Meaning, with
// a Balanced spread's placement as the values of its H fields), the
// history limits, decideRuns (the run due, if any, under spec.catchUp the
// oldest run owed, catchup.go; the next run and the readiness; an early
// one), decideWarmUp (warm-up before the next run, decided by
// internal/warmup from the runs around now), decideTrigger (a run asked
// for by hand), Replace's older runs, the run start measured,
// startObjective and spec.deadline. Each returns its own result from the
// input and the results before it; decision.plan assembles them. Finish
// writes the readiness, the Ready condition and status.nextScheduleTime,
// once the actions' results are known.
package planner

import (
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Input is everything the planner looks at.
type Input struct {
	ScheduledJob *v1alpha1.ScheduledJob
	// Jobs are the Jobs the ScheduledJob controls (by controller owner
	// UID). The gatherer adds any listed in status.active that its cache
	// lacked but a live read found, so a status.active entry missing here
	// is gone.
	Jobs []*batchv1.Job
	// Deleted are the Jobs this controller deleted itself (the Jobs a
	// Replace run replaced): gone from status.active, not missing.
	Deleted map[types.UID]bool
	// WarmUpPods are the ScheduledJob's warm-up pods: its placeholders and
	// the pods of its EarlyStart Jobs (label ontime.dev/owner-uid).
	WarmUpPods []*corev1.Pod
	// WarmUpBuffers are its CapacityBuffers, and BufferAPI what the
	// cluster serves of their API; read only for the CapacityBuffer
	// strategy, or while status.warmUp says the last warm-up used it.
	WarmUpBuffers []warmup.Buffer
	BufferAPI     warmup.BufferAPI
	// LeadPeers are the other ScheduledJobs with lead Auto whose pods
	// land on the same nodes (warmup.LeadPool), read only when this one
	// has lead Auto: the newest provisioning time any of them measured
	// sets the next lead.
	LeadPeers []warmup.Peer
	// RunPods are the pods of the Job RunToMeasure named, if any, and
	// RunNode the node warmup.NodeToRead named among them, if read.
	RunPods []*corev1.Pod
	RunNode *corev1.Node
	// Placement is where a Balanced spread placed the ScheduledJob in its
	// group, for its current schedule; nil under Hash.
	Placement *v1alpha1.SpreadStatus
	// EarlyStartImage is the image of EarlyStart's wait container.
	EarlyStartImage string
	// CountFailures lets the plan count the runs that failed in a row
	// (spec.suspendAfterFailures) from Jobs: they are one read, as of one
	// moment (the cache, or one list from the API server), with no Job
	// read by name ahead of the rest.
	CountFailures bool
	// Group is the concurrency group the ScheduledJob joins
	// (spec.concurrencyGroup), read when it has warm-up or a deadline:
	// warm-up is placed before the group's predicted start of each run,
	// and prepares no run the group refuses; a deadline's prediction
	// starts a run there. Zero when not read, or the group is not there.
	Group warmup.Group
	// Defaults are the controller's defaults (--placeholder-image).
	Defaults v1alpha1.ControllerDefaults
	// Judged is the spec's Judgement with Placement, kept by the
	// controller from one generation to the next (Judgements.Of); nil:
	// Decide judges the spec itself.
	Judged *Judgement
	Now    time.Time
}

// Plan is what the reconciler must do. The runs come first: the Replace
// deletions, then the scheduled, early and triggered runs' Jobs (a failed
// deletion stops there: its run is not created). Then the history
// deletions, the placeholder pods (deletions before creations) and the
// trigger annotation's removal. The reconciler reports each action's result
// to Finish, in the order it attempted them, writes the status Finish
// returns, emits its events and requeues. (A reconcile that started a
// scheduled run may leave everything after the runs to the next reconcile:
// see the ScheduledJob controller's deferStatus.)
type Plan struct {
	// Deletes are Jobs to delete with background propagation: history
	// cleanup, and the active Jobs a Replace run replaces.
	Deletes []Deletion
	// Create is the scheduled run's Job, if one is due.
	Create *Run
	// Early is the next run's Job, created lead early (EarlyStart).
	Early *Run
	// Trigger is a run asked for with the trigger annotation.
	Trigger *Run
	// StandbyUntil is, with Create, when the standby stops trying to
	// start that run (StandbyWindow).
	StandbyUntil time.Time
	// ConsumeTrigger removes the trigger annotation (handled or refused).
	ConsumeTrigger bool
	// SuspendAfterFailures sets spec.suspend: spec.suspendAfterFailures
	// runs failed in a row (status.failures). The status is written after
	// it, and no run is planned meanwhile.
	SuspendAfterFailures bool
	// FailuresUncounted says that spec.suspendAfterFailures counts runs
	// but the Jobs were not one read (Input.CountFailures false): nothing
	// was counted, no scheduled run is planned, and the plan is to be made
	// again from one read (or in uncountedRecheck).
	FailuresUncounted bool
	// Held is the due run that the active limit (Forbid, maxActive) holds
	// back until an active run finishes (zero: none). It starts on that
	// Job's update, which a cache behind the API server may not show in
	// time.
	Held time.Time
	// WarmUp are the placeholder pods and CapacityBuffers to create and
	// delete.
	WarmUp warmup.Changes
	// RequeueAfter is when to look again without an event: at the next
	// run (plus NTP padding) or warm-up, or 0 to wait for a change to the
	// object.
	RequeueAfter time.Duration

	// beforeActions is the status, events and missed runs before any action;
	// Finish adds the actions' effects.
	beforeActions Outcome
	// readiness is what Ready and nextScheduleTime say before any action,
	// and capacity what CapacityReady says; Finish writes them, with what
	// the actions' results change.
	readiness readiness
	capacity  capacity
	// objective is what Finish counts against spec.startObjective, with
	// the actions' missed runs.
	objective objectiveInput
	// now and generation stamp the conditions Finish sets.
	now        time.Time
	generation int64
}

// Deletion is one Job to delete.
type Deletion struct {
	Job    *batchv1.Job
	Reason DeleteReason
}

// DeleteReason says why a Job is deleted.
type DeleteReason string

const (
	// DeleteForHistoryLimit deletes a finished Job beyond the history limits.
	DeleteForHistoryLimit DeleteReason = "HistoryLimit"
	// DeleteForReplace deletes an active Job that a Replace run replaces.
	DeleteForReplace DeleteReason = "Replace"
)

// Run is a Job to create and the time it is scheduled for.
type Run struct {
	Job       *batchv1.Job
	Scheduled time.Time
	// Claim says the run must be claimed (Plan.Claimed) before its Job is
	// created: a run under an active limit (Forbid, maxActive) not
	// claimed yet.
	Claim bool
	// Skipped is the latest earlier run this one starts in place of
	// (zero if none): whoever creates the Job reports it (ResultEvents),
	// as the leader that later finds the Job only records it.
	Skipped time.Time
	// CatchingUp says the run starts late by design: a catch-up
	// (spec.catchUp) starts it while a later run is already due.
	CatchingUp bool
	// CatchUp is the catch-up's record when this run changes it: whoever
	// creates the Job writes it to status.catchUp, and reports it if the
	// run begins the catch-up (BeginsCatchUp).
	CatchUp       *v1alpha1.CatchUpStatus
	BeginsCatchUp bool
}

// Triggered reports whether the run was asked for by hand.
func (r *Run) Triggered() bool { return v1alpha1.IsTriggered(r.Job) }

// MissReason labels ontime_missed_runs_total.
type MissReason string

const (
	// MissDeadline is a run later than startingDeadlineSeconds.
	MissDeadline MissReason = "deadline"
	// MissSkipped is a run in whose place a later one started after an outage (only
	// the most recent missed run starts, as with a CronJob).
	MissSkipped MissReason = "skipped"
	// MissConflict is a run whose Job name is taken by a Job that is not ours.
	MissConflict MissReason = "conflict"
)

// nextScheduleDelta pads requeues past the scheduled time. The CronJob
// controller pads by 100 ms ("NTP skew"), which makes every run 100 ms
// late. Here the wake-up cannot come early: the work queue's timers run on
// the monotonic clock, which NTP slews at the same rate as the wall clock
// the delay was computed from, and the reconciler subtracts the time its
// own requests took. Only a step of the wall clock can make it early; that
// reconcile then finds nothing due and requeues for the rest. A
// millisecond covers rounding.
const nextScheduleDelta = time.Millisecond

// runsDecision is what Decide decided about scheduled runs.
type runsDecision struct {
	create, early *Run
	readiness     readiness
	// replace are active Jobs a Replace run replaces.
	replace []*batchv1.Job
	events  []Event
	wake    []time.Time
	missed  map[MissReason]int
	// runs is what warm-up needs to know; it stays empty unless runs are
	// being scheduled, and warm-up then removes every placeholder.
	runs timeline
	// droppedClaims are the claims of runs that can no longer start, to
	// remove from status.active; lastMissed is the latest run found missed.
	droppedClaims []string
	lastMissed    time.Time
	// held is the due run the active limit holds back.
	held time.Time
}

// decideRuns decides about the scheduled runs: none while the ScheduledJob
// is being deleted, its spec cannot run, or it is suspended (its readiness
// says which); otherwise the due run, the next one, and an early one
// (EarlyStart), and the runs found missed. status is the status the Jobs
// were observed into.
func decideRuns(in Input, spec specSchedule, invalid field.ErrorList, observed observation, status v1alpha1.ScheduledJobStatus) runsDecision {
	sj := in.ScheduledJob
	d := runsDecision{missed: map[MissReason]int{}}
	switch {
	case sj.DeletionTimestamp != nil:
		d.readiness = notReady(v1alpha1.ReasonTerminating, "the ScheduledJob is being deleted; no new runs start")
	case spec.problem != nil:
		d.readiness = notReady(spec.problem.condition, spec.problem.message)
		if d.readiness.changes(&sj.Status) || specChanged(sj) {
			d.events = append(d.events, spec.problem.event)
		}
	case len(invalid) > 0:
		d.readiness = notReady(v1alpha1.ReasonInvalidSpec, "no run starts until the spec is fixed: "+message(invalid))
		if d.readiness.changes(&sj.Status) || specChanged(sj) {
			d.events = append(d.events, invalidSpecEvent(d.readiness.message))
		}
	case status.Failures != nil && status.Failures.Suspended:
		d.readiness = notReady(v1alpha1.ReasonSuspendedAfterFailures, suspendedAfterFailuresMessage(status.Failures))
	case specSuspended(sj):
		d.readiness = notReady(v1alpha1.ReasonSuspended, "spec.suspend is true; no new runs start")
	default:
		s := scheduling{sj: sj, sched: spec.schedule, loc: spec.loc, now: in.Now, jobs: in.Jobs, active: observed.active, claims: observed.claims}
		s.decideScheduled(&d, in, status)
	}
	return d
}

// decideScheduled decides about the runs of a ScheduledJob whose runs are
// being scheduled: the claims no longer good, the runs others skipped, the
// due run, the next, and an early one.
func (s scheduling) decideScheduled(d *runsDecision, in Input, status v1alpha1.ScheduledJobStatus) {
	sj := s.sj
	stale := s.dropStaleClaims(d.missed, &d.events, &d.wake)
	s.claims, d.droppedClaims = stale.kept, stale.dropped
	skipped := s.skippedByOthers(handledUntil(sj, sj.Status.LastScheduleTime, sj.Status.LastMissedTime), status.LastScheduleTime, d.missed)
	d.lastMissed = latest(stale.lastMissed, skipped)
	due := s.decideDueRun(handledUntil(sj, status.LastScheduleTime, later(status.LastMissedTime, d.lastMissed)))
	d.lastMissed = latest(d.lastMissed, due.record(d.missed))
	d.create, d.replace, d.events = due.create, due.replace, append(d.events, due.events...)
	d.held = due.blocked
	next := s.announce(due.blocked, status.LastScheduleTime)
	if !due.catchUpNext.IsZero() && due.blocked.IsZero() {
		next = s.announceCatchUp(due.catchUpNext)
	}
	d.readiness, d.wake = next.readiness, append(d.wake, next.wake...)
	if next.eventIfChanged != nil && next.readiness.changes(&sj.Status) {
		d.events = append(d.events, *next.eventIfChanged)
	}
	if due.catchUpNext.IsZero() {
		// No run starts early while older ones are owed.
		d.early = s.decideEarlyStart(d.create, in.EarlyStartImage, in.LeadPeers)
	}
	d.runs = s.timeline(d.create, d.early)
}

// specChanged reports whether the spec changed since the controller last
// wrote status, so that a warning about it is emitted once per change, not
// on every reconcile.
func specChanged(sj *v1alpha1.ScheduledJob) bool {
	return sj.Status.ObservedGeneration != sj.Generation
}

// replacedByNewer are, under concurrencyPolicy Replace, the active Jobs a
// newer run replaces outside a scheduled run's start: when a run asked
// for by hand starts (all of them), or later, every one older than the
// newest active Job. A Job whose run the standby may still be starting is
// replaced only once that is over (its historyFence: failover.go), and
// replaceAt says when.
func replacedByNewer(sj *v1alpha1.ScheduledJob, sched schedule, active []*batchv1.Job, triggered bool, planned []Deletion, now time.Time) (deletes []Deletion, replaceAt []time.Time) {
	// A Job created early for a run still to come (EarlyStart) replaces
	// the others at its run's time (replacedByEarlyRun), not before.
	active = slices.DeleteFunc(slices.Clone(active), func(job *batchv1.Job) bool {
		at, ok := v1alpha1.ScheduledTime(job)
		return ok && at.After(now) && !v1alpha1.IsTriggered(job)
	})
	if sj.Spec.ConcurrencyPolicy != v1alpha1.ReplaceConcurrent || len(active) == 0 {
		return nil, nil
	}
	newest := active[0]
	for _, job := range active {
		if job.CreationTimestamp.After(newest.CreationTimestamp.Time) {
			newest = job
		}
	}
	for _, job := range active {
		if (!triggered && job == newest) || isRequestedRun(sj, job) || slices.ContainsFunc(planned, func(d Deletion) bool { return d.Job.UID == job.UID }) {
			continue
		}
		if fence := historyFence(sched, job); fence.After(now) {
			replaceAt = append(replaceAt, fence)
			continue
		}
		deletes = append(deletes, Deletion{Job: job, Reason: DeleteForReplace})
	}
	return deletes, replaceAt
}

// replacements are the deletions a Replace run of sj needs: every active
// Job but the run asked for by an annotation not removed yet
// (isRequestedRun), which is replaced once it is (replacedByNewer).
func replacements(sj *v1alpha1.ScheduledJob, active []*batchv1.Job) []Deletion {
	deletes := make([]Deletion, 0, len(active))
	for _, job := range active {
		if !isRequestedRun(sj, job) {
			deletes = append(deletes, Deletion{Job: job, Reason: DeleteForReplace})
		}
	}
	return deletes
}

// refOf returns the status.active reference of a Job.
func refOf(job *batchv1.Job) corev1.ObjectReference {
	return corev1.ObjectReference{
		Kind:            "Job",
		APIVersion:      "batch/v1",
		Namespace:       job.Namespace,
		Name:            job.Name,
		UID:             job.UID,
		ResourceVersion: job.ResourceVersion,
	}
}

func later(current *metav1.Time, t time.Time) *metav1.Time {
	if current == nil || t.After(current.Time) {
		return &metav1.Time{Time: t}
	}
	return current
}

func timeAt(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// observation is what a ScheduledJob's Jobs say, so that status survives a
// crash between creating a Job and writing status.
type observation struct {
	// active and finished are the Jobs, sorted by name.
	active, finished []*batchv1.Job
	// activeRefs is status.active rebuilt: the active Jobs and the claims
	// whose Jobs do not exist yet.
	activeRefs []corev1.ObjectReference
	// claims are the claimed runs whose Jobs do not exist (yet), by Job
	// name.
	claims []string
	// missed are the Jobs whose runs waited in their concurrency group
	// past their starting deadline and were marked missed: they never
	// ran, are not active, and go at once (history keeps none);
	// lastMissed is the latest of their scheduled times.
	missed       []*batchv1.Job
	lastMissed   time.Time
	lastSchedule *metav1.Time
	lastSuccess  *metav1.Time
	events       []Event
}

// record writes what the Jobs say into status.
func (o observation) record(status *v1alpha1.ScheduledJobStatus) {
	setActive(status, o.activeRefs)
	setLastScheduleTime(status, o.lastSchedule)
	setLastSuccessfulTime(status, o.lastSuccess)
}

// observeJobs rebuilds active, lastScheduleTime and lastSuccessfulTime from
// the Jobs and the status last written, and sees which Jobs finished or went
// missing. A Job created early for a run still to come (EarlyStart) is
// active, but does not move lastScheduleTime before its time.
func observeJobs(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, deleted map[types.UID]bool, now time.Time) observation {
	recorded := map[string]corev1.ObjectReference{}
	claims := map[string]bool{}
	for _, ref := range sj.Status.Active {
		if isClaim(ref) {
			claims[ref.Name] = true
		} else {
			recorded[string(ref.UID)] = ref
		}
	}
	jobs = slices.Clone(jobs)
	slices.SortFunc(jobs, func(a, b *batchv1.Job) int { return strings.Compare(a.Name, b.Name) })

	o := observation{lastSchedule: sj.Status.LastScheduleTime, lastSuccess: sj.Status.LastSuccessfulTime}
	present := map[string]bool{}
	for _, job := range jobs {
		present[string(job.UID)] = true
		if scheduled, ok := v1alpha1.ScheduledTime(job); ok && !v1alpha1.IsTriggered(job) && (!scheduled.After(now) || !createdEarly(job)) {
			o.lastSchedule = later(o.lastSchedule, scheduled)
		}
		ref, wasActive := recorded[string(job.UID)]
		if claims[job.Name] {
			// The claimed run's Job: it was active from its claim on.
			delete(claims, job.Name)
			wasActive = true
		}
		if at, missed := v1alpha1.MissedInGroup(job); missed && suspendedJob(job) {
			o.missed = append(o.missed, job)
			o.lastMissed = latest(o.lastMissed, at)
			continue
		}
		condition, done := v1alpha1.JobFinished(job)
		if !done {
			o.observeActive(job, ref, wasActive)
			continue
		}
		if wasActive {
			o.events = append(o.events, sawCompletedJobEvent(job, condition))
		}
		o.finished = append(o.finished, job)
		if condition == batchv1.JobComplete && job.Status.CompletionTime != nil {
			o.lastSuccess = later(o.lastSuccess, job.Status.CompletionTime.Time)
		}
	}
	o.observeGone(sj, jobs, present, claims, deleted, now)
	return o
}

// observeGone looks at the entries of status.active without a Job: claims
// whose Job does not exist yet stay active; a Job gone that this
// controller did not delete, nor a later run replaced, is reported
// missing.
func (o *observation) observeGone(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, present, claims map[string]bool, deleted map[types.UID]bool, now time.Time) {
	for _, ref := range sj.Status.Active {
		switch {
		case isClaim(ref) && claims[ref.Name]:
			o.claims = append(o.claims, ref.Name)
			o.activeRefs = append(o.activeRefs, ref)
		case !isClaim(ref) && !present[string(ref.UID)] && !deleted[ref.UID] && !replacedByLaterRun(sj, ref, jobs, now):
			o.events = append(o.events, missingJobEvent(ref.Name))
		}
	}
}

// replacedByLaterRun reports whether a Job status.active names, gone,
// was replaced: under concurrencyPolicy Replace a later run's Job exists,
// or a later scheduled run came due by now. A leader that replaced it may
// have died before writing the status without it, or, since it deletes
// before it creates, before creating the later run's Job (an API outage
// between the two, and the later run's deadline passed meanwhile). A Job
// deleted by hand once a later run came due is one Replace would have
// deleted: it is not reported either.
func replacedByLaterRun(sj *v1alpha1.ScheduledJob, ref corev1.ObjectReference, jobs []*batchv1.Job, now time.Time) bool {
	if sj.Spec.ConcurrencyPolicy != v1alpha1.ReplaceConcurrent {
		return false
	}
	gone, scheduled := claimMinute(sj, ref.Name)
	for _, job := range jobs {
		at, ok := v1alpha1.ScheduledTime(job)
		if job.Name != ref.Name && (!scheduled || (ok && at.After(gone))) {
			return true
		}
	}
	return scheduled && laterRunCameDue(sj, gone, now)
}

// laterRunCameDue reports whether sj's schedule has a run after at that
// came due by now. It reads the schedule as the status last recorded it
// (its last scheduled time, its spread placement); asked only for a Job
// gone under Replace without a later one, it costs a normal reconcile
// nothing.
func laterRunCameDue(sj *v1alpha1.ScheduledJob, at, now time.Time) bool {
	meaning, problem := meaningOf(sj, sj.RecordedPlacement())
	if problem != nil {
		return false
	}
	runs := meaning.RunsSince(sj.CreationTimestamp.Time, timeOf(sj.Status.LastScheduleTime))
	if runs == nil {
		return false
	}
	next := runs.Next(at)
	return !next.IsZero() && !next.After(now)
}

// observeActive adds an unfinished Job. ref is its status.active entry, if
// it was listed there.
func (o *observation) observeActive(job *batchv1.Job, ref corev1.ObjectReference, wasActive bool) {
	if !wasActive && job.Annotations[v1alpha1.ScheduledTimestampAnnotation] == "" {
		// Jobs this controller creates always carry the scheduled time; this
		// one was made by someone else with a controller reference to us. It
		// counts as active all the same.
		o.events = append(o.events, unexpectedJobEvent(job.Name))
	}
	// Keep a reference as it was recorded, as upstream does: its
	// resourceVersion would otherwise change with every update of the Job
	// (pod counts, conditions) and force a status write. A claim gets the
	// Job's reference.
	if !wasActive || isClaim(ref) {
		ref = refOf(job)
	}
	o.activeRefs = append(o.activeRefs, ref)
	o.active = append(o.active, job)
}

// suspendedJob reports whether a Job is suspended (a run waiting in its
// concurrency group).
func suspendedJob(job *batchv1.Job) bool {
	return job.Spec.Suspend != nil && *job.Spec.Suspend
}

// createdEarly reports whether a Job was created ahead of its run by
// EarlyStart warm-up: its pods wait for their release time.
func createdEarly(job *batchv1.Job) bool {
	return job.Spec.Template.Annotations[v1alpha1.ReleaseAtAnnotation] != ""
}

// historyDeletions are the oldest finished Jobs beyond the history limits,
// successful and failed separately, oldest start time first (Jobs that
// never started count as newest; ties go by name), as the CronJob
// controller deletes them. Jobs already being deleted are neither counted
// nor deleted again (upstream would emit FailedDelete for them). A Job
// whose deletion could let its run start again is kept, and wake says when
// to look again: a run's Job before its historyFence, and a trigger's Job
// while the trigger annotation still asks for it (its request is recorded
// as handled by the annotation's removal). A run status.failures has not
// counted yet is kept until it is.
func historyDeletions(sj *v1alpha1.ScheduledJob, sched schedule, finished, missed []*batchv1.Job, streak *v1alpha1.FailureStreak, now time.Time) (deletions []Deletion, wake []time.Time) {
	var succeeded, failed []*batchv1.Job
	for _, job := range finished {
		if job.DeletionTimestamp != nil {
			continue
		}
		if condition, _ := v1alpha1.JobFinished(job); condition == batchv1.JobComplete {
			succeeded = append(succeeded, job)
		} else {
			failed = append(failed, job)
		}
	}
	beyond := append(oldestBeyond(succeeded, sj.Spec.SuccessfulJobsHistoryLimit), oldestBeyond(failed, sj.Spec.FailedJobsHistoryLimit)...)
	for _, job := range missed {
		if job.DeletionTimestamp == nil {
			// A missed run never ran: no history limit keeps its Job.
			beyond = append(beyond, Deletion{Job: job, Reason: DeleteForHistoryLimit})
		}
	}
	for _, deletion := range beyond {
		job := deletion.Job
		if awaitsCount(job, streak) {
			continue // counted first (spec.suspendAfterFailures), then deleted after the status that counts it
		}
		if fence := historyFence(sched, job); fence.After(now) {
			wake = append(wake, fence)
			continue
		}
		if isRequestedRun(sj, job) {
			continue
		}
		deletions = append(deletions, deletion)
	}
	return deletions, wake
}

func oldestBeyond(jobs []*batchv1.Job, limit *int32) []Deletion {
	if limit == nil || len(jobs) <= int(*limit) {
		return nil
	}
	slices.SortFunc(jobs, byStartTime)
	var deletes []Deletion
	for _, job := range jobs[:len(jobs)-int(*limit)] {
		deletes = append(deletes, Deletion{Job: job, Reason: DeleteForHistoryLimit})
	}
	return deletes
}

// byStartTime orders Jobs by status.startTime, nil last, then by name.
func byStartTime(a, b *batchv1.Job) int {
	switch {
	case a.Status.StartTime == nil && b.Status.StartTime == nil:
		return strings.Compare(a.Name, b.Name)
	case a.Status.StartTime == nil:
		return 1
	case b.Status.StartTime == nil:
		return -1
	case !a.Status.StartTime.Equal(b.Status.StartTime):
		return a.Status.StartTime.Compare(b.Status.StartTime.Time)
	}
	return strings.Compare(a.Name, b.Name)
}
