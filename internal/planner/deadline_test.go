package planner

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestDeadlineThroughDecide: with spec.deadline, Decide learns a run's
// time, writes the DeadlineAtRisk condition, reports a late-starting run
// at risk once with an event, looks again at the deadline, and reports it
// missed there; without spec.deadline, neither status nor condition.
func TestDeadlineThroughDecide(t *testing.T) {
	ten := mustTime("2026-11-24T10:00:00Z")
	sj := scheduledJob(onTheHour, mustTime("2026-11-24T08:00:00Z"))
	sj.Spec.Deadline = &v1alpha1.Deadline{After: &metav1.Duration{Duration: 30 * time.Minute}}
	sj.Status.LastScheduleTime = &metav1.Time{Time: ten}
	nine := childJob(sj, ten.Add(-time.Hour), "nine", true) // 10 s, as childJob finishes them
	nine.Status.StartTime = &metav1.Time{Time: ten.Add(-time.Hour)}
	run := childJob(sj, ten, "ten", false)
	run.Status.StartTime = &metav1.Time{Time: ten.Add(29*time.Minute + 55*time.Second)}
	jobs := []*batchv1.Job{nine, run}

	now := ten.Add(29*time.Minute + 56*time.Second)
	plan := Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: now})
	out := plan.Finish()
	c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionDeadlineAtRisk)
	if c == nil || c.Reason != v1alpha1.ReasonDeadlineAtRisk || !out.DeadlineAtRisk || eventMessage(out, v1alpha1.ReasonDeadlineAtRisk) == "" {
		t.Fatalf("DeadlineAtRisk %+v (reported %v), want at risk with an event: it starts 5 s before its deadline and runs take 10 s", c, out.DeadlineAtRisk)
	}
	if want := 4 * time.Second; plan.RequeueAfter != want {
		t.Errorf("requeue after %s, want %s: at the deadline", plan.RequeueAfter, want)
	}
	sj.Status = out.Status
	out = Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: ten.Add(30 * time.Minute)}).Finish()
	c = meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionDeadlineAtRisk)
	if c == nil || c.Reason != v1alpha1.ReasonDeadlineMissed || out.DeadlinesMissed != 1 || out.DeadlineAtRisk || eventMessage(out, v1alpha1.ReasonDeadlineMissed) == "" {
		t.Errorf("DeadlineAtRisk %+v at the deadline, want DeadlineMissed reported once", c)
	}
	sj.Spec.Deadline = nil
	out = Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: ten.Add(31 * time.Minute)}).Finish()
	if out.Status.Deadline != nil || meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionDeadlineAtRisk) != nil {
		t.Errorf("status.deadline %+v and its condition left without spec.deadline", out.Status.Deadline)
	}
}
