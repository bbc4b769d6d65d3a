package planner

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/deadline"
)

// decideDeadline watches the latest run against spec.deadline
// (internal/deadline): it writes status.deadline and the DeadlineAtRisk
// condition, reports a run at risk, and each run past its deadline, once
// with an event, and returns when to look again (zero: nothing ahead). A
// due run the active limit holds back (plan.Held) is the latest run,
// without a Job. It only reads what the plan decided about runs.
func decideDeadline(plan *Plan, in Input, loc *time.Location) time.Time {
	sj, out := in.ScheduledJob, &plan.beforeActions
	v := deadline.Watch(deadline.Input{Deadline: sj.Spec.Deadline, Stored: sj.Status.Deadline, Jobs: in.Jobs, Held: plan.Held,
		Starts: out.Status.RecentRunStarts, Location: loc, Now: in.Now})
	setDeadline(&out.Status, v, sj.Generation, in.Now)
	if v.AtRisk {
		out.Events = append(out.Events, newEvent(corev1.EventTypeWarning, v1alpha1.ReasonDeadlineAtRisk, v.Condition.Message))
	}
	for _, miss := range v.Missed {
		out.Events = append(out.Events, newEvent(corev1.EventTypeWarning, v1alpha1.ReasonDeadlineMissed, miss.Message))
	}
	out.DeadlineAtRisk, out.DeadlinesMissed = v.AtRisk, len(v.Missed)
	return v.Wake
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
