package planner

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
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

// TestDeadlineInfeasibleThroughDecide: every 10 minutes under Forbid,
// runs taking up to 12 (the 09:50 run took 5) and a deadline of 13: were
// the run before it as slow, the next run would wait for it until 2
// minutes past its time and could not succeed by its deadline. Decide says
// so before the run exists (DeadlineInfeasible, True), with one event;
// under Allow it can, and the condition goes back to RunSucceeded. A
// concurrency group predicting a late admission says so too.
func TestDeadlineInfeasibleThroughDecide(t *testing.T) {
	ten := mustTime("2026-11-24T10:00:00Z")
	sj := scheduledJob("*/10 * * * *", mustTime("2026-11-24T08:00:00Z"))
	sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
	sj.Spec.Deadline = &v1alpha1.Deadline{After: &metav1.Duration{Duration: 13 * time.Minute}}
	sj.Status.LastScheduleTime = &metav1.Time{Time: ten.Add(-10 * time.Minute)}
	var jobs []*batchv1.Job
	for i, took := range []time.Duration{12 * time.Minute, 5 * time.Minute} { // 09:40 and 09:50
		at := ten.Add(time.Duration(i-2) * 10 * time.Minute)
		job := childJob(sj, at, at.Format("1504"), true)
		job.Status.StartTime, job.Status.CompletionTime = &metav1.Time{Time: at}, &metav1.Time{Time: at.Add(took)}
		jobs = append(jobs, job)
	}
	now := ten.Add(-4 * time.Minute)

	out := Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: now}).Finish()
	c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionDeadlineAtRisk)
	says := "Forbid starts a run only once the one before it has finished: the next run, at 2026-11-24T10:00:00Z, waits at best until 2026-11-24T10:02:00Z"
	if c == nil || c.Reason != v1alpha1.ReasonDeadlineInfeasible || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, says) {
		t.Fatalf("DeadlineAtRisk %+v, want DeadlineInfeasible saying %q", c, says)
	}
	if got := eventMessage(out, v1alpha1.ReasonDeadlineInfeasible); got != c.Message {
		t.Errorf("event %q, want the condition's message", got)
	}
	sj.Status = out.Status
	if again := Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: now.Add(time.Second)}).Finish(); eventMessage(again, v1alpha1.ReasonDeadlineInfeasible) != "" {
		t.Error("the DeadlineInfeasible event again, with nothing changed")
	}

	sj.Spec.ConcurrencyPolicy = v1alpha1.AllowConcurrent
	out = Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: now.Add(2 * time.Second)}).Finish()
	if c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionDeadlineAtRisk); c == nil || c.Reason != v1alpha1.ReasonRunSucceeded {
		t.Errorf("under Allow: DeadlineAtRisk %+v, want RunSucceeded", c)
	}

	sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Name: "nightly"}
	group := &v1alpha1.ConcurrencyGroupStatus{Upcoming: []v1alpha1.QueuedRun{{Namespace: sj.Namespace, Name: sj.JobName(ten),
		PredictedAdmission: &metav1.Time{Time: ten.Add(5 * time.Minute)}}}}
	out = Decide(Input{ScheduledJob: sj, Jobs: jobs, Group: warmup.Group{Status: group}, Now: now.Add(3 * time.Second)}).Finish()
	says = `ConcurrencyGroup "nightly" predicts the next run, at 2026-11-24T10:00:00Z, is admitted at 2026-11-24T10:05:00Z`
	if c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionDeadlineAtRisk); c == nil || c.Reason != v1alpha1.ReasonDeadlineInfeasible || !strings.Contains(c.Message, says) {
		t.Errorf("a group admitting it late: DeadlineAtRisk %+v, want DeadlineInfeasible saying %q", c, says)
	}
}

// TestScheduledRunsCarryTheirDeadline: under spec.deadline, Decide makes a
// scheduled run's Job with the deadline it is judged by (in the zone, for
// at); a run by hand (ontime trigger) has none.
func TestScheduledRunsCarryTheirDeadline(t *testing.T) {
	ten := mustTime("2026-11-24T10:00:00Z")
	sj := scheduledJob(onTheHour, mustTime("2026-11-24T08:00:00Z"))
	sj.Spec.TimeZone = ptr.To("Europe/Amsterdam")
	sj.Spec.Deadline = &v1alpha1.Deadline{At: "12:30"}
	plan := Decide(Input{ScheduledJob: sj, Now: ten.Add(100 * time.Millisecond)})
	if plan.Create == nil {
		t.Fatal("no run created at 10:00")
	}
	if got, ok := v1alpha1.RunDeadline(plan.Create.Job); !ok || !got.Equal(mustTime("2026-11-24T11:30:00Z")) {
		t.Errorf("the run's Job carries deadline %v (%v), want 12:30 in Amsterdam, 11:30 UTC", got, ok)
	}
	sj.Annotations = map[string]string{v1alpha1.TriggerAnnotation: "now"}
	sj.Status.LastScheduleTime = &metav1.Time{Time: ten}
	triggered := Decide(Input{ScheduledJob: sj, Now: ten.Add(10 * time.Minute)})
	if triggered.Trigger == nil {
		t.Fatal("no run by hand")
	}
	if _, ok := v1alpha1.RunDeadline(triggered.Trigger.Job); ok {
		t.Error("a run by hand carries a deadline; such runs are neither watched nor learned from")
	}
}

// TestShortenedDeadlineThroughDecide: a run that met its 30 minute
// deadline is not reported when the deadline is cut to 5 minutes, nor
// counted (out.DeadlinesMissed feeds ontime_deadline_missed_total); the
// next run is judged at once, DeadlineInfeasible with its event.
func TestShortenedDeadlineThroughDecide(t *testing.T) {
	ten := mustTime("2026-11-24T10:00:00Z")
	sj := scheduledJob(onTheHour, mustTime("2026-11-24T08:00:00Z"))
	sj.Spec.Deadline = &v1alpha1.Deadline{After: &metav1.Duration{Duration: 30 * time.Minute}}
	sj.Status.LastScheduleTime = &metav1.Time{Time: ten}
	run := childJob(sj, ten, "ten", true)
	run.Status.StartTime = &metav1.Time{Time: ten}
	run.Status.CompletionTime = &metav1.Time{Time: ten.Add(20 * time.Minute)}
	jobs := []*batchv1.Job{run}
	out := Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: ten.Add(21 * time.Minute)}).Finish()
	if c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionDeadlineAtRisk); c == nil || c.Reason != v1alpha1.ReasonRunSucceeded {
		t.Fatalf("DeadlineAtRisk %+v, want RunSucceeded", c)
	}

	sj.Status = out.Status
	sj.Spec.Deadline = &v1alpha1.Deadline{After: &metav1.Duration{Duration: 5 * time.Minute}}
	out = Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: ten.Add(22 * time.Minute)}).Finish()
	if out.DeadlinesMissed != 0 || eventMessage(out, v1alpha1.ReasonDeadlineMissed) != "" {
		t.Errorf("a deadline cut to 5 minutes reported the run that met its 30: %d missed, event %q", out.DeadlinesMissed, eventMessage(out, v1alpha1.ReasonDeadlineMissed))
	}
	c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionDeadlineAtRisk)
	if c == nil || c.Reason != v1alpha1.ReasonDeadlineInfeasible || eventMessage(out, v1alpha1.ReasonDeadlineInfeasible) == "" {
		t.Errorf("DeadlineAtRisk %+v, want the next run judged at once: DeadlineInfeasible, with its event", c)
	}
}
