package planner

import (
	"cmp"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/wakeup"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Decide builds the plan as a chain of steps, one per feature, in this
// order. Each step is a function of the input and of the results of the
// steps before it, and returns its own result; Decide keeps each result
// once, and no step changes another's (cert-manager's policy chain is the
// model: small functions in a stated order, one place that assembles
// them). plan assembles the Plan from the results.
func Decide(in Input) Plan {
	var d decision
	d.judged, d.in = judge(in)
	d.observed = observeJobs(d.in.ScheduledJob, d.in.Jobs, d.in.Deleted, d.in.Now)
	d.failures = decideFailures(d.in, d.observed.claims)
	d.seen = d.statusSeen()
	d.schedule = scheduleOf(d.in.ScheduledJob, d.judged, timeOf(d.seen.LastScheduleTime))
	d.history = d.pickHistory()
	d.recorded = d.statusRecorded()
	d.runs = d.decideRuns()
	d.warm = d.decideWarmUp()
	d.trigger = d.decideTrigger()
	d.replaced = d.replaceOlder()
	d.measured = d.measureStart()
	d.objective = d.countObjective()
	d.deadline = d.watchDeadline()
	return d.plan()
}

// decision holds the results of Decide's steps, each set once, in the
// order of the steps.
type decision struct {
	// in is the input as planned: its ScheduledJob without spec.warmUp
	// when the warm-up breaks a rule (runs start without it).
	in     Input
	judged *Judgement
	// observed is what the Jobs say; failures the streak of failed runs.
	observed observation
	failures failuresDecision
	// seen is the status as the Jobs and the failures say; schedule the
	// schedule in effect (it counts from seen's lastScheduleTime).
	seen     v1alpha1.ScheduledJobStatus
	schedule specSchedule
	history  historyDecision
	// recorded is seen with the runs found missed and the generation and
	// schedule observed: what the runs are decided from.
	recorded  v1alpha1.ScheduledJobStatus
	runs      runsDecision
	warm      warmDecision
	trigger   triggerDecision
	replaced  replacedDecision
	measured  measuredStart
	objective objectiveDecision
	deadline  deadlineDecision
}

// judge is the spec's Judgement (the one the controller kept, or a new
// one), and the input as planned: without spec.warmUp when the warm-up
// breaks a rule, so that its objects go and runs start on time.
func judge(in Input) (*Judgement, Input) {
	judged := in.Judged
	if judged == nil {
		judgement := Judge(in.ScheduledJob, in.Placement, in.Now)
		judged = &judgement
	}
	if len(judged.invalid.warmUp) > 0 {
		in.ScheduledJob = in.ScheduledJob.DeepCopy()
		in.ScheduledJob.Spec.WarmUp = nil
	}
	return judged, in
}

// statusSeen is the stored status with what the Jobs say (active,
// lastScheduleTime, lastSuccessfulTime), the wait for a concurrency group
// and the failure streak.
func (d decision) statusSeen() v1alpha1.ScheduledJobStatus {
	sj := d.in.ScheduledJob
	status := *sj.Status.DeepCopy()
	d.observed.record(&status)
	setWaiting(&status, sj, d.observed.active, d.in.Now)
	setFailures(&status, d.failures.streak)
	return status
}

// historyDecision is what the history limits delete, and when to look
// again for the Jobs the standby's window keeps for now.
type historyDecision struct {
	deletes []Deletion
	wake    []time.Time
}

func (d decision) pickHistory() historyDecision {
	deletes, wake := historyDeletions(d.in.ScheduledJob, d.schedule.schedule, d.observed.finished, d.observed.missed, d.failures.streak, d.in.Now)
	return historyDecision{deletes: deletes, wake: wake}
}

// statusRecorded is seen with the latest run the Jobs show missed, and the
// generation, effective schedule and placement observed.
func (d decision) statusRecorded() v1alpha1.ScheduledJobStatus {
	status := *d.seen.DeepCopy()
	recordMissed(&status, d.observed.lastMissed)
	setObserved(&status, d.in.ScheduledJob.Generation, d.schedule.effective, d.in.Placement)
	return status
}

// decideRuns decides the scheduled runs from the recorded status. While
// failures cannot be counted from one read of the Jobs
// (Plan.FailuresUncounted), no scheduled or early run starts, and the plan
// is made again in uncountedRecheck.
func (d decision) decideRuns() runsDecision {
	runs := decideRuns(d.in, d.schedule, d.judged.invalid.spec, d.observed, d.recorded)
	if d.failures.uncounted {
		runs.create, runs.early = nil, nil
		runs.wake = append(slices.Clone(runs.wake), d.in.Now.Add(uncountedRecheck))
	}
	return runs
}

// decideWarmUp decides warm-up before the runs decided, and says in
// CapacityReady when the spec's warm-up breaks a rule (with an event when
// that changes).
func (d decision) decideWarmUp() warmDecision {
	sj := d.in.ScheduledJob
	warm := decideWarmUp(sj, d.in, d.runs.runs)
	if invalid := d.judged.invalid.warmUp; len(invalid) > 0 {
		warm.capacity = invalidWarmUp(invalid)
		if warm.capacity.changes(&sj.Status) {
			warm.Events = slices.Concat([]Event{newEvent(corev1.EventTypeWarning, v1alpha1.ReasonInvalidWarmUp, warm.capacity.message)}, warm.Events)
		}
	}
	return warm
}

// decideTrigger handles a run asked for by hand, after the scheduled and
// early runs decided.
func (d decision) decideTrigger() triggerDecision {
	return decideTrigger(d.in.ScheduledJob, d.in.Jobs, d.observed, d.schedule, d.in.Now, d.runs.create != nil || d.runs.early != nil)
}

// replacedDecision is what Replace deletes outside a scheduled run's
// start, and when to look again for what it cannot delete yet.
type replacedDecision struct {
	deletes []Deletion
	wake    []time.Time
}

func (d decision) replaceOlder() replacedDecision {
	deletes, wake := replacedByNewer(d.in.ScheduledJob, d.schedule.schedule, d.observed.active, d.trigger.replace, d.deletesBeforeReplace(), d.in.Now)
	return replacedDecision{deletes: deletes, wake: wake}
}

// deletesBeforeReplace are the history's deletions and the scheduled
// run's replacements, in that order.
func (d decision) deletesBeforeReplace() []Deletion {
	return append(slices.Clone(d.history.deletes), replacements(d.in.ScheduledJob, d.runs.replace)...)
}

// measuredStart is the run whose start is measured, if any, and its start
// when first seen.
type measuredStart struct {
	run     *batchv1.Job
	started *v1alpha1.RunStart
}

func (d decision) measureStart() measuredStart {
	m := measuredStart{run: RunToMeasure(d.in.ScheduledJob, d.in.Jobs, d.in.Now)}
	if start, ok := warmup.MeasureStart(m.run, d.in.RunPods, d.in.RunNode); ok {
		m.started = start
	}
	return m
}

// objectiveDecision is what spec.startObjective counts, and when to look
// again.
type objectiveDecision struct {
	input objectiveInput
	wake  time.Time
}

func (d decision) countObjective() objectiveDecision {
	input, wake := decideObjective(d.in.ScheduledJob, d.in, d.measured.run, d.measured.started)
	return objectiveDecision{input: input, wake: wake}
}

// watchDeadline watches the runs against spec.deadline, from the run
// starts with the one just measured.
func (d decision) watchDeadline() deadlineDecision {
	starts := d.recorded.RecentRunStarts
	if d.measured.started != nil {
		starts = warmup.RecordRunStart(starts, *d.measured.started)
	}
	return decideDeadline(d.in, d.schedule, d.runs.runs, d.runs.held, starts)
}

// plan assembles the steps' results: the actions in the order the
// reconciler carries them out, and the status and events before any of
// them.
func (d decision) plan() Plan {
	sj, now := d.in.ScheduledJob, d.in.Now
	plan := Plan{now: now, generation: sj.Generation,
		SuspendAfterFailures: d.failures.suspend, FailuresUncounted: d.failures.uncounted,
		Create: d.runs.create, Early: d.runs.early, Held: d.runs.held, readiness: d.runs.readiness,
		Deletes:   append(d.deletesBeforeReplace(), d.replaced.deletes...),
		Trigger:   d.trigger.run,
		WarmUp:    d.warm.Changes,
		capacity:  d.warm.capacity,
		objective: d.objective.input,
	}
	plan.ConsumeTrigger = d.trigger.consume
	if plan.Create != nil {
		plan.StandbyUntil = standbyUntil(d.schedule.schedule, plan.Create.Scheduled)
	}
	plan.beforeActions = Outcome{Status: d.status(), Events: d.events(plan), Missed: d.runs.missed, WarmUp: d.warm.strategy,
		CapacityReadyAfter: d.warm.ReadyAfter, WarmUpLate: d.warm.Late, SuspendedAfterFailures: d.failures.suspending,
		Started: d.measured.started, DeadlineAtRisk: d.deadline.atRisk, DeadlinesMissed: d.deadline.missed}
	wake := slices.Concat(d.runs.wake, d.history.wake, d.warm.Wake, d.trigger.wake, d.replaced.wake,
		[]time.Time{d.objective.wake, d.deadline.wake})
	plan.RequeueAfter = wakeup.Delay(now, wake...)
	return plan
}

// status is the recorded status with what the runs, warm-up, the
// measured start and the deadline decided.
func (d decision) status() v1alpha1.ScheduledJobStatus {
	status := *d.recorded.DeepCopy()
	setActive(&status, withoutClaims(status.Active, d.runs.droppedClaims...))
	recordMissed(&status, d.runs.lastMissed)
	setWarmUp(&status, d.warm.State, cmp.Or(d.warm.WaitingStart, d.warm.NextStart))
	if d.measured.started != nil {
		setLastRunStart(&status, d.measured.started)
	}
	setDeadline(&status, d.deadline.verdict, d.in.ScheduledJob.Generation, d.in.Now)
	return status
}

// events are the steps' events, in the order of the steps. A run that
// replaces the active ones is starting (plan's scheduled or requested
// run): an active Job gone was replaced by it (a leader that deleted it
// may have died before creating the new run), or would be now, so no
// MissingJob is reported.
func (d decision) events(plan Plan) []Event {
	sj := d.in.ScheduledJob
	events := slices.Concat(d.observed.events, d.failures.events)
	if sj.DeletionTimestamp == nil {
		events = append(events, d.schedule.warnings...)
	}
	events = slices.Concat(events, d.runs.events, d.warm.Events, d.trigger.events)
	if sj.Spec.ConcurrencyPolicy == v1alpha1.ReplaceConcurrent && (plan.Create != nil || plan.Trigger != nil) {
		events = slices.DeleteFunc(events, func(e Event) bool { return e.Reason == v1alpha1.ReasonMissingJob })
	}
	return append(events, d.deadline.events...)
}
