package planner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Stopping after repeated failures (spec.suspendAfterFailures): the runs
// that failed in a row are counted in status.failures as their Jobs
// finish, and once there are that many the plan suspends the ScheduledJob
// (Plan.SuspendAfterFailures: the controller sets spec.suspend). Each run
// counts once: a Job counts when it finished after the latest run counted
// (by its finish time, then its name), and the count is written by the same
// conditional status patch as everything else, so a plan refused or
// repeated counts nothing twice.

// maxStreakJobs is how many failed Jobs status.failures names.
const maxStreakJobs = 10

// failureStreak is status.failures once the finished Jobs not yet counted
// are: nil without spec.suspendAfterFailures. A streak that suspended the
// ScheduledJob, which is no longer suspended, was resumed: it starts again
// from 0.
func failureStreak(sj *v1alpha1.ScheduledJob, finished []*batchv1.Job) *v1alpha1.FailureStreak {
	if sj.Spec.SuspendAfterFailures == nil {
		return nil
	}
	streak := &v1alpha1.FailureStreak{}
	if sj.Status.Failures != nil {
		streak = sj.Status.Failures.DeepCopy()
	}
	if streak.Suspended && !specSuspended(sj) {
		streak = &v1alpha1.FailureStreak{CountedThrough: streak.CountedThrough, CountedJob: streak.CountedJob}
	}
	for _, end := range uncounted(finished, streak) {
		if end.failed {
			streak.Count++
			streak.Jobs = append(streak.Jobs, end.job)
			streak.Jobs = streak.Jobs[max(0, len(streak.Jobs)-maxStreakJobs):]
		} else {
			streak.Count, streak.Jobs = 0, nil
		}
		streak.CountedThrough, streak.CountedJob = &metav1.Time{Time: end.at}, end.job
	}
	return streak
}

// jobEnd is how and when a run's Job finished.
type jobEnd struct {
	at     time.Time
	job    string
	failed bool
}

// uncounted are the Jobs that finished after the streak's latest run, in
// the order they finished.
func uncounted(finished []*batchv1.Job, streak *v1alpha1.FailureStreak) []jobEnd {
	var ends []jobEnd
	for _, job := range finished {
		condition, at, ok := finishOf(job)
		if !ok || !finishedAfter(at, job.Name, streak) {
			continue
		}
		ends = append(ends, jobEnd{at: at, job: job.Name, failed: condition == batchv1.JobFailed})
	}
	slices.SortFunc(ends, func(a, b jobEnd) int {
		return cmp.Or(a.at.Compare(b.at), strings.Compare(a.job, b.job))
	})
	return ends
}

// finishOf is the condition a Job finished with and when.
func finishOf(job *batchv1.Job) (batchv1.JobConditionType, time.Time, bool) {
	condition, done := v1alpha1.JobFinished(job)
	if !done {
		return "", time.Time{}, false
	}
	for _, c := range job.Status.Conditions {
		if c.Type == condition && c.Status == corev1.ConditionTrue {
			return condition, c.LastTransitionTime.Time, true
		}
	}
	return condition, job.CreationTimestamp.Time, true
}

// finishedAfter reports whether a Job that finished at at comes after the
// latest run the streak counted.
func finishedAfter(at time.Time, name string, streak *v1alpha1.FailureStreak) bool {
	if streak.CountedThrough == nil {
		return true
	}
	through := streak.CountedThrough.Time
	return at.After(through) || (at.Equal(through) && name > streak.CountedJob)
}

// suspendsAfterFailures reports whether the streak reaches
// spec.suspendAfterFailures on a ScheduledJob it has not suspended yet. A
// count below 1, stored without admission, suspends nothing (the spec is
// reported invalid).
func suspendsAfterFailures(sj *v1alpha1.ScheduledJob, streak *v1alpha1.FailureStreak) bool {
	if streak == nil || streak.Suspended {
		return false
	}
	limit := *sj.Spec.SuspendAfterFailures
	return limit >= 1 && streak.Count >= limit
}

// suspendedAfterFailuresEvent names the failed Jobs.
func suspendedAfterFailuresEvent(streak *v1alpha1.FailureStreak) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonSuspendedAfterFailures, suspendedAfterFailuresMessage(streak))
}

func suspendedAfterFailuresMessage(streak *v1alpha1.FailureStreak) string {
	return fmt.Sprintf("%d runs failed in a row (last: %s); suspended: set spec.suspend to false to resume", streak.Count, strings.Join(streak.Jobs, ", "))
}

// specSuspended reports whether spec.suspend is true.
func specSuspended(sj *v1alpha1.ScheduledJob) bool {
	return sj.Spec.Suspend != nil && *sj.Spec.Suspend
}
