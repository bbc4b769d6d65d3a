package planner

import (
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// triggerDecision is what to do about the trigger annotation.
type triggerDecision struct {
	run *Run
	// consume removes the annotation: the request is handled or refused.
	consume bool
	// replace deletes the active Jobs first (concurrencyPolicy Replace).
	replace bool
	wake    []time.Time
	events  []Event
}

// decideTrigger handles the trigger annotation: one run now, as if
// scheduled, obeying concurrencyPolicy. It waits while a scheduled run is
// being created in this same reconcile (scheduledRunPending), so that the
// two are not confused.
func decideTrigger(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, observed observation, spec specSchedule, now time.Time, scheduledRunPending bool) triggerDecision {
	loc := spec.loc
	value, ok := sj.Annotations[v1alpha1.TriggerAnnotation]
	switch {
	case !ok || sj.DeletionTimestamp != nil:
		return triggerDecision{}
	}
	name := sj.TriggeredJobName(value)
	switch {
	case hasJobNamed(jobs, name):
		// Handled before a crash kept the annotation from being removed:
		// removed now, even while a scheduled run starts, since its Job is
		// kept until then (isRequestedRun).
		return triggerDecision{consume: true}
	case scheduledRunPending:
		return triggerDecision{wake: []time.Time{now.Add(time.Second)}}
	}
	trigger := triggerDecision{consume: true}
	limit, limited := sj.ActiveLimit()
	claims := slices.DeleteFunc(slices.Clone(observed.claims), func(claim string) bool { return claim == name })
	switch {
	case limited && len(observed.active)+len(claims) >= limit:
		trigger.events = []Event{triggerRefusedEvent(sj, len(observed.active)+len(claims))}
		return trigger
	case sj.Spec.ConcurrencyPolicy == v1alpha1.ReplaceConcurrent && len(observed.active) > 0:
		trigger.replace = true
	}
	scheduled := now.Truncate(time.Second)
	job := buildJob(sj, name, scheduled, loc)
	job.Annotations[v1alpha1.TriggeredAnnotation] = value
	trigger.run = &Run{Job: job, Scheduled: scheduled, Claim: limited && !slices.Contains(observed.claims, name)}
	return trigger
}

// isRequestedRun reports whether job is the run asked for by the trigger
// annotation still on sj. No plan deletes it (history limits, Replace)
// until the annotation is removed: a leader that dies between creating
// the run's Job and removing the annotation leaves both, and a plan that
// found the Job gone under the annotation would start the run again.
func isRequestedRun(sj *v1alpha1.ScheduledJob, job *batchv1.Job) bool {
	request, requested := sj.Annotations[v1alpha1.TriggerAnnotation]
	value, triggered := job.Annotations[v1alpha1.TriggeredAnnotation]
	return requested && triggered && value == request
}
