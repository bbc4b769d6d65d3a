package planner

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// finishedRun is the Job of the run at scheduled, finished ok or failed
// at scheduled+10s.
func finishedRun(sj *v1alpha1.ScheduledJob, scheduled time.Time, ok bool) *batchv1.Job {
	job := childJob(sj, scheduled, "uid-"+sj.JobName(scheduled), false)
	condition := batchv1.JobFailed
	if ok {
		condition = batchv1.JobComplete
	}
	job.Status.Conditions = []batchv1.JobCondition{{Type: condition, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(scheduled.Add(10 * time.Second))}}
	return job
}

func TestFailureStreak(t *testing.T) {
	sj := scheduledJob("*/5 * * * *", justBeforeThePriorHour)
	sj.Spec.SuspendAfterFailures = ptr.To[int32](3)
	run := func(i int) time.Time { return topOfTheHour.Add(time.Duration(i) * 5 * time.Minute) }
	failed := func(i int) *batchv1.Job { return finishedRun(sj, run(i), false) }
	succeeded := func(i int) *batchv1.Job { return finishedRun(sj, run(i), true) }
	countedAfter := func(i int, count int32, suspended bool) *v1alpha1.FailureStreak {
		return &v1alpha1.FailureStreak{Count: count, CountedThrough: &metav1.Time{Time: run(i).Add(10 * time.Second)}, CountedJob: sj.JobName(run(i)), Suspended: suspended}
	}
	tests := []struct {
		name      string
		previous  *v1alpha1.FailureStreak
		suspended bool
		finished  []*batchv1.Job
		wantCount int32
		wantJobs  []string
		wantSusp  bool
	}{{
		name:      "failures in a row count, in the order they finished",
		finished:  []*batchv1.Job{failed(2), failed(1)},
		wantCount: 2, wantJobs: []string{sj.JobName(run(1)), sj.JobName(run(2))},
	}, {
		name:      "a success resets the count",
		finished:  []*batchv1.Job{failed(1), succeeded(2), failed(3)},
		wantCount: 1, wantJobs: []string{sj.JobName(run(3))},
	}, {
		name:      "a run already counted is not counted again",
		previous:  countedAfter(2, 2, false),
		finished:  []*batchv1.Job{failed(1), failed(2)},
		wantCount: 2,
	}, {
		name:      "only the runs after the last counted",
		previous:  countedAfter(1, 1, false),
		finished:  []*batchv1.Job{failed(1), failed(2)},
		wantCount: 2, wantJobs: []string{sj.JobName(run(2))},
	}, {
		name:      "resumed: the count starts again, and what finished before stays counted",
		previous:  countedAfter(3, 3, true),
		finished:  []*batchv1.Job{failed(3), failed(4)},
		wantCount: 1, wantJobs: []string{sj.JobName(run(4))},
	}, {
		name:      "still suspended: the streak stays",
		previous:  countedAfter(3, 3, true),
		suspended: true,
		finished:  []*batchv1.Job{failed(3)},
		wantCount: 3, wantSusp: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sj := sj.DeepCopy()
			sj.Status.Failures = tt.previous
			sj.Spec.Suspend = &tt.suspended
			got := failureStreak(sj, tt.finished)
			if got.Count != tt.wantCount || got.Suspended != tt.wantSusp {
				t.Errorf("count %d, suspended %v; want %d, %v", got.Count, got.Suspended, tt.wantCount, tt.wantSusp)
			}
			if tt.wantJobs != nil && !slices.Equal(got.Jobs, tt.wantJobs) {
				t.Errorf("jobs %q, want %q", got.Jobs, tt.wantJobs)
			}
		})
	}
	if failureStreak(scheduledJob("*/5 * * * *", justBeforeThePriorHour), []*batchv1.Job{failed(1)}) != nil {
		t.Error("a streak without spec.suspendAfterFailures")
	}
	zero := sj.DeepCopy()
	zero.Spec.SuspendAfterFailures = ptr.To[int32](0)
	if suspendsAfterFailures(zero, failureStreak(zero, nil)) {
		t.Error("suspendAfterFailures 0, stored without admission, suspends before any failure")
	}
}

// TestSuspendAfterFailures: the plan in which the third failure in a row
// is seen suspends, starts no run, says why and names the Jobs; once
// suspended it does not suspend again; resumed, runs start and the count
// is 0.
func TestSuspendAfterFailures(t *testing.T) {
	sj := scheduledJob("*/5 * * * *", justBeforeThePriorHour)
	sj.Spec.SuspendAfterFailures = ptr.To[int32](3)
	run := func(i int) time.Time { return topOfTheHour.Add(time.Duration(i) * 5 * time.Minute) }
	third := childJob(sj, run(2), "uid-3", false)
	sj.Status.LastScheduleTime = &metav1.Time{Time: run(2)}
	sj.Status.Active = []corev1.ObjectReference{refOf(third)}
	sj.Status.Failures = &v1alpha1.FailureStreak{Count: 2, Jobs: []string{sj.JobName(run(0)), sj.JobName(run(1))},
		CountedThrough: &metav1.Time{Time: run(1).Add(10 * time.Second)}, CountedJob: sj.JobName(run(1))}
	third.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(run(2).Add(time.Minute))}}

	plan := Compute(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{third}, Now: run(3)})
	out := checkSuspends(t, plan)

	// The controller set spec.suspend and wrote that status.
	sj.Spec.Suspend, sj.Status = ptr.To(true), out.Status
	again := Compute(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{third}, Now: run(4)})
	if again.SuspendAfterFailures || again.Create != nil || slices.Contains(reasons(succeed(again)), v1alpha1.ReasonSuspendedAfterFailures) {
		t.Errorf("suspended again, or a run, or a second event: %+v", again)
	}

	// Resumed.
	sj.Spec.Suspend = ptr.To(false)
	resumed := Compute(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{third}, Now: run(5)})
	if resumed.Create == nil {
		t.Error("no run after the resume")
	}
	if f := succeed(resumed).Status.Failures; f == nil || f.Count != 0 || f.Suspended {
		t.Errorf("status.failures after the resume %+v", f)
	}
}

// checkSuspends: the plan suspends, starts no run, says why and names the
// three failed Jobs.
func checkSuspends(t *testing.T, plan Plan) Outcome {
	t.Helper()
	out := succeed(plan)
	if !plan.SuspendAfterFailures || plan.Create != nil {
		t.Fatalf("SuspendAfterFailures %v, Create %v: want the suspension and no run", plan.SuspendAfterFailures, plan.Create)
	}
	if f := out.Status.Failures; f == nil || f.Count != 3 || !f.Suspended || len(f.Jobs) != 3 {
		t.Errorf("status.failures %+v", out.Status.Failures)
	}
	if c := ready(out.Status); c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonSuspendedAfterFailures {
		t.Errorf("Ready %s %s", c.Status, c.Reason)
	}
	if !slices.Contains(reasons(out), v1alpha1.ReasonSuspendedAfterFailures) || !out.SuspendedAfterFailures {
		t.Errorf("events %v, metric %v: want SuspendedAfterFailures", reasons(out), out.SuspendedAfterFailures)
	}
	return out
}
