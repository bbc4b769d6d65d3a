package planner

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/objective"
)

// Counting runs against spec.startObjective (internal/objective): Decide
// names the run that is overdue unstarted, and when the next one will be;
// Finish counts, once the actions' missed runs are known too, into the
// status it writes.

// objectiveInput is what Finish counts against spec.startObjective.
type objectiveInput struct {
	objective *v1alpha1.StartObjective
	// stored is status.startObjective as read.
	stored *v1alpha1.StartObjectiveStatus
	// notStarted is the scheduled time of an overdue run whose pods were
	// read and had run no container (zero: none).
	notStarted time.Time
}

// decideObjective returns what Finish counts, and when to look again for
// a run that will be overdue unstarted (zero: no such run ahead). measuring
// is the Job whose pods were read (RunToMeasure), started what they said.
func decideObjective(sj *v1alpha1.ScheduledJob, in Input, measuring *batchv1.Job, started *v1alpha1.RunStart) (objectiveInput, time.Time) {
	o := sj.Spec.StartObjective
	if o == nil {
		return objectiveInput{}, time.Time{}
	}
	input := objectiveInput{objective: o, stored: sj.Status.StartObjective}
	measured := lastMeasured(sj)
	if started != nil {
		measured = started.ScheduledTime.Time
	}
	job, due := objective.Overdue(o, sj.Status.StartObjective, measured, in.Jobs, in.Now)
	switch {
	case job == nil:
	case in.Now.Before(due):
		return input, due
	case job == measuring:
		// Its pods were read, and none had run a container.
		input.notStarted, _ = v1alpha1.ScheduledTime(job)
	}
	return input, time.Time{}
}

// countObjective counts what the reconcile saw into out's status, with a
// LateStart event for a run counted late that was not reported missed.
func (p Plan) countObjective(out *Outcome) {
	seen := objective.Seen{Started: out.Started, NotStarted: p.objective.notStarted}
	for _, n := range out.Missed {
		seen.Missed += n
	}
	if t := out.Status.LastMissedTime; t != nil {
		seen.MissedAt = t.Time
	}
	counted := objective.Count(p.objective.objective, p.objective.stored, seen, p.now)
	out.Status.StartObjective = counted.Status
	out.ObjectiveRuns, out.ObjectiveLate = counted.Runs, counted.Late
	if s := counted.LateStart; s != nil {
		out.Events = append(out.Events, newEvent(corev1.EventTypeWarning, v1alpha1.ReasonLateStart, objective.LateStartMessage(p.objective.objective, *s)))
	}
	if at := counted.LateNotStarted; !at.IsZero() {
		out.Events = append(out.Events, newEvent(corev1.EventTypeWarning, v1alpha1.ReasonLateStart, objective.NotStartedMessage(p.objective.objective, at, p.now)))
	}
}
