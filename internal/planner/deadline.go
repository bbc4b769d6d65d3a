package planner

import (
	"cmp"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/deadline"
)

// deadlineDecision is what watching spec.deadline decided: the verdict
// status.deadline and DeadlineAtRisk say, its events, whether the latest
// run was first reported at risk, how many runs were reported past their
// deadline, and when to look again (zero: nothing ahead).
type deadlineDecision struct {
	verdict deadline.Verdict
	events  []Event
	atRisk  bool
	missed  int
	wake    time.Time
}

// decideDeadline watches the latest run against spec.deadline
// (internal/deadline): status.deadline and the DeadlineAtRisk condition,
// a run at risk, and each run past its deadline, once with an event. A due
// run the active limit holds back (held) is the latest run, without a
// Job. It also judges the next run before it exists (DeadlineInfeasible,
// with an event when it becomes so). starts are the recent run starts,
// with the one just measured; runs are the runs decided.
func decideDeadline(in Input, spec specSchedule, runs timeline, held time.Time, starts []v1alpha1.RunStart) deadlineDecision {
	sj := in.ScheduledJob
	if sj.Spec.Deadline == nil {
		return deadlineDecision{}
	}
	v := deadline.Watch(deadline.Input{Deadline: sj.Spec.Deadline, Stored: sj.Status.Deadline, Jobs: in.Jobs, Held: held,
		Starts: starts, Group: in.Group.Status, Ahead: outlook(in, spec, runs), Location: spec.loc, Now: in.Now})
	d := deadlineDecision{verdict: v, atRisk: v.AtRisk, missed: len(v.Missed), wake: v.Wake}
	if becameInfeasible(sj.Status, v.Condition) {
		d.events = append(d.events, newEvent(corev1.EventTypeWarning, v1alpha1.ReasonDeadlineInfeasible, v.Condition.Message))
	}
	if v.AtRisk {
		d.events = append(d.events, newEvent(corev1.EventTypeWarning, v1alpha1.ReasonDeadlineAtRisk, v.Condition.Message))
	}
	for _, miss := range v.Missed {
		d.events = append(d.events, newEvent(corev1.EventTypeWarning, v1alpha1.ReasonDeadlineMissed, miss.Message))
	}
	return d
}

// setDeadline writes status.deadline and the DeadlineAtRisk condition,
// removed while there is no run to watch or no spec.deadline.
func setDeadline(status *v1alpha1.ScheduledJobStatus, v deadline.Verdict, generation int64, now time.Time) {
	status.Deadline = v.Status
	if v.Condition.Reason == "" {
		meta.RemoveStatusCondition(&status.Conditions, v1alpha1.ConditionDeadlineAtRisk)
		return
	}
	setCondition(status, generation, now, v1alpha1.ConditionDeadlineAtRisk, v.Condition.Status, v.Condition.Reason, v.Condition.Message)
}

// outlook is what stands before the next run: the run after it (their gap
// is the schedule's), the active limit (Forbid is 1) or Replace, and the
// concurrency group's predicted admission. Zero while no run is being
// scheduled (suspended, invalid, runAt done).
func outlook(in Input, spec specSchedule, runs timeline) deadline.Outlook {
	sj := in.ScheduledJob
	if runs.next.IsZero() || spec.schedule == nil {
		return deadline.Outlook{}
	}
	o := deadline.Outlook{Next: runs.next, Following: spec.schedule.Next(runs.next)}
	switch sj.Spec.ConcurrencyPolicy {
	case v1alpha1.ForbidConcurrent:
		o.Limit = 1
	case v1alpha1.ReplaceConcurrent:
		o.Replace = true
	default:
		o.Limit = ptr.Deref(sj.Spec.MaxActive, 0)
	}
	if group, st := sj.Spec.ConcurrencyGroup, in.Group.Status; group != nil && st != nil {
		o.NextAdmission = st.PredictedAdmission(sj.Namespace, sj.JobName(runs.next))
		o.Group = fmt.Sprintf("%s %q", cmp.Or(group.Kind, v1alpha1.KindConcurrencyGroup), group.Name)
	}
	return o
}

// becameInfeasible reports whether the condition turns DeadlineInfeasible
// now: the event is emitted then, not on every reconcile (the message
// follows the group's predictions).
func becameInfeasible(status v1alpha1.ScheduledJobStatus, next deadline.Condition) bool {
	if next.Reason != v1alpha1.ReasonDeadlineInfeasible {
		return false
	}
	old := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionDeadlineAtRisk)
	return old == nil || old.Reason != v1alpha1.ReasonDeadlineInfeasible
}
