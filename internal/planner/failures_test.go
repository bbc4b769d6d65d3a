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

// running is the Job of the run at scheduled, still running.
func running(sj *v1alpha1.ScheduledJob, scheduled time.Time) *batchv1.Job {
	return childJob(sj, scheduled, "uid-"+sj.JobName(scheduled), false)
}

// TestFailureStreak: runs count in the order they were scheduled, each
// once, from one read of the Jobs.
func TestFailureStreak(t *testing.T) {
	sj := scheduledJob("*/5 * * * *", justBeforeThePriorHour)
	sj.Spec.SuspendAfterFailures = ptr.To[int32](3)
	run := func(i int) time.Time { return topOfTheHour.Add(time.Duration(i) * 5 * time.Minute) }
	name := func(i int) string { return sj.JobName(run(i)) }
	failed := func(i int) *batchv1.Job { return finishedRun(sj, run(i), false) }
	succeeded := func(i int) *batchv1.Job { return finishedRun(sj, run(i), true) }
	countedThrough := func(i int, count int32, suspended bool) *v1alpha1.FailureStreak {
		return &v1alpha1.FailureStreak{Count: count, CountedThrough: &metav1.Time{Time: run(i)}, Suspended: suspended}
	}
	triggered := failed(2)
	triggered.Name = sj.TriggeredJobName("by-hand")
	triggered.Annotations[v1alpha1.TriggeredAnnotation] = "by-hand"
	manyAfterAHungRun := []*batchv1.Job{running(sj, run(1))}
	for i := range passOverAfter + 1 {
		manyAfterAHungRun = append(manyAfterAHungRun, failed(2+i))
	}
	tests := []struct {
		name      string
		previous  *v1alpha1.FailureStreak
		suspended bool
		readAhead bool
		jobs      []*batchv1.Job
		claims    []string
		wantCount int32
		wantJobs  []string
		wantUpTo  int // the run countedThrough names; -1: none
		wantSusp  bool
	}{{
		name:      "failures in a row count, in the order they were scheduled",
		jobs:      []*batchv1.Job{failed(2), failed(1)},
		wantCount: 2, wantJobs: []string{name(1), name(2)}, wantUpTo: 2,
	}, {
		name:      "a success resets the count",
		jobs:      []*batchv1.Job{failed(1), succeeded(2), failed(3)},
		wantCount: 1, wantJobs: []string{name(3)}, wantUpTo: 3,
	}, {
		name:      "a run still running is waited for: later runs count after it",
		jobs:      []*batchv1.Job{failed(1), running(sj, run(2)), failed(3)},
		wantCount: 1, wantJobs: []string{name(1)}, wantUpTo: 1,
	}, {
		name:      "a claimed run whose Job is still to come is waited for",
		jobs:      []*batchv1.Job{failed(1), failed(3)},
		claims:    []string{name(2)},
		wantCount: 1, wantUpTo: 1,
	}, {
		name:      "a run that runs on while more than passOverAfter later runs finish is passed over",
		jobs:      manyAfterAHungRun,
		wantCount: 3, wantUpTo: 4,
	}, {
		name:      "Jobs read ahead of the cache count nothing",
		readAhead: true,
		previous:  countedThrough(0, 1, false),
		jobs:      []*batchv1.Job{failed(1), failed(2)},
		wantCount: 1, wantUpTo: 0,
	}, {
		name:      "a run asked for by hand neither counts nor resets",
		jobs:      []*batchv1.Job{failed(1), triggered, failed(3)},
		wantCount: 2, wantJobs: []string{name(1), name(3)}, wantUpTo: 3,
	}, {
		name:      "a run already counted is not counted again",
		previous:  countedThrough(2, 2, false),
		jobs:      []*batchv1.Job{failed(1), failed(2)},
		wantCount: 2, wantUpTo: 2,
	}, {
		name:      "only the runs after the last counted",
		previous:  countedThrough(1, 1, false),
		jobs:      []*batchv1.Job{failed(1), failed(2)},
		wantCount: 2, wantJobs: []string{name(2)}, wantUpTo: 2,
	}, {
		name:      "a success after the limit does not undo it",
		previous:  countedThrough(2, 2, false),
		jobs:      []*batchv1.Job{failed(3), succeeded(4)},
		wantCount: 3, wantJobs: []string{name(3)}, wantUpTo: 3,
	}, {
		name:      "resumed: the count starts again, and what was counted stays counted",
		previous:  countedThrough(3, 3, true),
		jobs:      []*batchv1.Job{failed(3), failed(4)},
		wantCount: 1, wantJobs: []string{name(4)}, wantUpTo: 4,
	}, {
		name:      "still suspended: the streak stays",
		previous:  countedThrough(3, 3, true),
		suspended: true,
		jobs:      []*batchv1.Job{failed(3), failed(4)},
		wantCount: 3, wantSusp: true, wantUpTo: 3,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sj := sj.DeepCopy()
			sj.Status.Failures = tt.previous
			sj.Spec.Suspend = &tt.suspended
			got := failureStreak(sj, tt.jobs, tt.claims, !tt.readAhead)
			if got.Count != tt.wantCount || got.Suspended != tt.wantSusp {
				t.Errorf("count %d, suspended %v; want %d, %v", got.Count, got.Suspended, tt.wantCount, tt.wantSusp)
			}
			if tt.wantJobs != nil && !slices.Equal(got.Jobs, tt.wantJobs) {
				t.Errorf("jobs %q, want %q", got.Jobs, tt.wantJobs)
			}
			if upTo := got.CountedThrough; upTo == nil || !upTo.Equal(&metav1.Time{Time: run(tt.wantUpTo)}) {
				t.Errorf("countedThrough %v, want %s", upTo, run(tt.wantUpTo))
			}
		})
	}
	if failureStreak(scheduledJob("*/5 * * * *", justBeforeThePriorHour), []*batchv1.Job{failed(1)}, nil, true) != nil {
		t.Error("a streak without spec.suspendAfterFailures")
	}
	zero := sj.DeepCopy()
	zero.Spec.SuspendAfterFailures = ptr.To[int32](0)
	if suspendsAfterFailures(zero, failureStreak(zero, nil, nil, true)) {
		t.Error("suspendAfterFailures 0, stored without admission, suspends before any failure")
	}
}

// TestHistoryKeepsRunsNotYetCounted: with failedJobsHistoryLimit 0, a
// failed run waiting behind a running one is kept until it is counted,
// and deleted by the plan that counts it.
func TestHistoryKeepsRunsNotYetCounted(t *testing.T) {
	sj := scheduledJob("*/5 * * * *", justBeforeThePriorHour)
	sj.Spec.SuspendAfterFailures = ptr.To[int32](3)
	sj.Spec.FailedJobsHistoryLimit = ptr.To[int32](0)
	sj.Spec.ConcurrencyPolicy = v1alpha1.AllowConcurrent
	run := func(i int) time.Time { return topOfTheHour.Add(time.Duration(i) * 5 * time.Minute) }
	first, second := running(sj, run(0)), finishedRun(sj, run(1), false)
	sj.Status.LastScheduleTime = &metav1.Time{Time: run(1)}
	sj.Status.Active = []corev1.ObjectReference{refOf(first), refOf(second)}

	waiting := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{first, second}, Now: run(1).Add(time.Minute), CountFailures: true})
	if len(waiting.Deletes) != 0 {
		t.Errorf("deleted %s while the run before it was running: its failure would never count", deletedNames(waiting.Deletes))
	}
	sj.Status = succeed(waiting).Status
	first = finishedRun(sj, run(0), false)
	counted := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{first, second}, Now: run(1).Add(2 * time.Minute), CountFailures: true})
	if f := succeed(counted).Status.Failures; f == nil || f.Count != 2 {
		t.Errorf("status.failures %+v, want both failures counted", f)
	}
	if len(counted.Deletes) != 2 {
		t.Errorf("deleted %s, want both failed Jobs once counted", deletedNames(counted.Deletes))
	}
}

func deletedNames(deletes []Deletion) []string {
	var names []string
	for _, d := range deletes {
		names = append(names, d.Job.Name)
	}
	return names
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
		CountedThrough: &metav1.Time{Time: run(1)}}
	third.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(run(2).Add(time.Minute))}}

	plan := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{third}, Now: run(3), CountFailures: true})
	out := checkSuspends(t, plan)

	// The controller set spec.suspend and wrote that status.
	sj.Spec.Suspend, sj.Status = ptr.To(true), out.Status
	again := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{third}, Now: run(4), CountFailures: true})
	if again.SuspendAfterFailures || again.Create != nil || slices.Contains(reasons(succeed(again)), v1alpha1.ReasonSuspendedAfterFailures) {
		t.Errorf("suspended again, or a run, or a second event: %+v", again)
	}

	// Resumed.
	sj.Spec.Suspend = ptr.To(false)
	resumed := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{third}, Now: run(5), CountFailures: true})
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

// TestNoRunFromJobsNotOneRead: a plan whose Jobs are not one read counts
// nothing and starts no scheduled run (the failures it could not count
// might have stopped it); it asks to be made again soon.
func TestNoRunFromJobsNotOneRead(t *testing.T) {
	sj := scheduledJob("*/5 * * * *", justBeforeThePriorHour)
	sj.Spec.SuspendAfterFailures = ptr.To[int32](3)
	run := func(i int) time.Time { return topOfTheHour.Add(time.Duration(i) * 5 * time.Minute) }
	sj.Status.LastScheduleTime = &metav1.Time{Time: run(1)}
	jobs := []*batchv1.Job{finishedRun(sj, run(1), false)}

	plan := Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: run(2).Add(time.Second)})
	if !plan.FailuresUncounted || plan.Create != nil || plan.RequeueAfter > uncountedRecheck {
		t.Errorf("FailuresUncounted %v, run %v, requeue %v: want no run and a plan again within %v", plan.FailuresUncounted, plan.Create != nil, plan.RequeueAfter, uncountedRecheck)
	}
	if f := succeed(plan).Status.Failures; f == nil || f.Count != 0 {
		t.Errorf("status.failures %+v: counted from Jobs not one read", f)
	}
	counted := Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: run(2).Add(time.Second), CountFailures: true})
	if counted.FailuresUncounted || counted.Create == nil {
		t.Errorf("from one read: FailuresUncounted %v, run %v; want the run", counted.FailuresUncounted, counted.Create != nil)
	}
}
