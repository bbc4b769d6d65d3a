// Package planner decides what a ScheduledJob's controller does, as a pure
// function of the ScheduledJob, its Jobs and the current time, like the
// CronJob controller's syncCronJob(now). The reconciler gathers the input
// and carries out the plan; nothing here does I/O or reads a clock.
//
// Two extensions plug in here. The schedule a ScheduledJob runs on is the
// schedule interface that parseSchedule builds, so an effective schedule that
// differs from the written one (a spread offset, a hashed H field) is another
// implementation of it; Job names and the scheduled-time annotation keep the
// nominal time. Actions before a run (warming capacity up lead ahead) belong
// in announceNext, which knows the next run: such a step adds its action to
// the Plan and lowers the requeue to the earlier time with requeueAt.
package planner

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Input is everything the planner looks at.
type Input struct {
	ScheduledJob *v1alpha1.ScheduledJob
	// Jobs are the Jobs the ScheduledJob controls (by controller owner
	// UID). The gatherer adds any listed in status.active that its cache
	// lacked but a live read found, so a status.active entry missing here
	// is gone.
	Jobs []*batchv1.Job
	Now  time.Time
}

// Plan is what the reconciler must do, in this order: delete, create the
// scheduled run, create the triggered run, write status, emit events,
// requeue.
type Plan struct {
	// Deletes are Jobs to delete with background propagation: history
	// cleanup, and the active Jobs a Replace run replaces.
	Deletes []Deletion
	// Create is the scheduled run's Job, if one is due.
	Create *Run
	// Trigger is a run asked for with the trigger annotation.
	Trigger *Run
	// ConsumeTrigger removes the trigger annotation (handled or refused).
	ConsumeTrigger bool
	// Status is the status to write, before the effects of the actions
	// above; the reconciler applies those with Record* as they succeed.
	Status v1alpha1.ScheduledJobStatus
	Events []Event
	// Missed counts runs that did not start, by reason, for the metric.
	Missed map[MissReason]int
	// RequeueAfter is when to look again without an event: at the next
	// run (plus NTP padding), or 0 to wait for a change to the object.
	RequeueAfter time.Duration
}

// Deletion is one Job to delete.
type Deletion struct {
	Job    *batchv1.Job
	Reason DeleteReason
}

// DeleteReason says why a Job is deleted.
type DeleteReason string

const (
	DeleteForHistoryLimit DeleteReason = "HistoryLimit"
	DeleteForReplace      DeleteReason = "Replace"
)

// Run is a Job to create and the time it is scheduled for.
type Run struct {
	Job       *batchv1.Job
	Scheduled time.Time
}

// Event is a Kubernetes event to record on the ScheduledJob.
type Event struct {
	Type, Reason, Message string
}

// MissReason labels ontime_missed_runs_total.
type MissReason string

const (
	// MissDeadline: the run was later than startingDeadlineSeconds.
	MissDeadline MissReason = "deadline"
	// MissSkipped: a later run started in its place after an outage (only
	// the most recent missed run starts, as with a CronJob).
	MissSkipped MissReason = "skipped"
	// MissConflict: a Job of the run's name exists and is not ours.
	MissConflict MissReason = "conflict"
)

// nextScheduleDelta pads requeues past the scheduled time, as the CronJob
// controller does (nextScheduleDelta, "NTP skew"): waking a little late is
// harmless, waking early would find nothing due and cost a reconcile.
const nextScheduleDelta = 100 * time.Millisecond

// Compute builds the plan.
func Compute(in Input) Plan {
	sj := in.ScheduledJob
	p := &planning{in: in, sj: sj, now: in.Now, plan: Plan{Missed: map[MissReason]int{}}}
	p.plan.Status = *sj.Status.DeepCopy()
	p.plan.Status.ObservedGeneration = sj.Generation

	finished := p.observeJobs()
	p.cleanupHistory(finished)

	p.loc = time.UTC
	switch {
	case sj.DeletionTimestamp != nil:
		p.setReady(false, v1alpha1.ReasonTerminating, "the ScheduledJob is being deleted; no new runs start")
		p.plan.Status.NextScheduleTime = nil
	case !p.parseSchedule():
		p.plan.Status.NextScheduleTime = nil
	case sj.Spec.Suspend != nil && *sj.Spec.Suspend:
		p.setReady(false, v1alpha1.ReasonSuspended, "spec.suspend is true; no new runs start")
		p.plan.Status.NextScheduleTime = nil
	default:
		p.schedule()
	}
	// A run asked for by hand starts even while the schedule is suspended
	// or invalid, as kubectl create job --from=cronjob/… does.
	p.trigger()
	p.plan.Status.ActiveCount = int32(len(p.plan.Status.Active))
	return p.plan
}

// planning carries the state of one Compute call.
type planning struct {
	in    Input
	sj    *v1alpha1.ScheduledJob
	now   time.Time
	plan  Plan
	sched schedule
	loc   *time.Location
	// active are the unfinished Jobs, after observeJobs.
	active []*batchv1.Job
	// blocked is a due run that concurrencyPolicy Forbid holds back.
	blocked time.Time
}

func (p *planning) event(eventType, reason, message string) {
	p.plan.Events = append(p.plan.Events, Event{Type: eventType, Reason: reason, Message: message})
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
