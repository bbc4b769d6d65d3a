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

// Stopping after repeated failures (spec.suspendAfterFailures): the
// scheduled runs that failed in a row are counted in status.failures, and
// once there are that many the plan suspends the ScheduledJob
// (Plan.SuspendAfterFailures: the controller sets spec.suspend).
//
// "In a row" is in the order the runs were scheduled, whatever order their
// Jobs finish in. The runs are counted in that order, each once:
// status.failures.countedThrough is the scheduled time of the latest run
// counted, and counting stops at the first run not yet finished (or
// claimed, its Job still to come), so a run is not passed over while it
// runs (unless it runs on while passOverAfter later runs finish). The
// count is written by the same conditional status patch as everything
// else, so a plan refused or repeated counts nothing twice, and the
// history cleanup keeps a finished Job until it is counted. When the
// field is first set, the runs whose Jobs are still kept count too.
//
// Counting needs the Jobs as of one moment: a Job read from the API server
// by name, ahead of a cache that does not yet show an earlier run, would
// be counted and the earlier one passed over for good. So only a plan whose
// Jobs are one read counts (Input.CountFailures: the cache, or one list
// from the API server). A plan that cannot count starts no scheduled run
// (Plan.FailuresUncounted), which the failures it could not count might
// have stopped; the controller then plans again from one list of the API
// server's Jobs. The standby counts too, and lists live likewise, to start
// no run a streak has stopped, but writes no count.
//
// Runs asked for by hand (ontime trigger) neither count nor reset the
// count: they are not in the schedule's order.

// uncountedRecheck is how soon a plan that could not count looks again.
const uncountedRecheck = time.Second

// maxStreakJobs is how many failed Jobs status.failures names.
const maxStreakJobs = 10

// failureStreak is status.failures once the finished runs not yet counted
// are: nil without spec.suspendAfterFailures. Counting stops when the
// streak reaches spec.suspendAfterFailures, so that a run that succeeded
// after it does not undo a streak that was reached; the runs after it
// count once resumed. A streak that suspended the ScheduledJob, which is no
// longer suspended, was resumed: it starts again from 0. Without count
// (the Jobs are not one read) nothing new is counted.
func failureStreak(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, claims []string, count bool) *v1alpha1.FailureStreak {
	if sj.Spec.SuspendAfterFailures == nil {
		return nil
	}
	streak := &v1alpha1.FailureStreak{}
	if sj.Status.Failures != nil {
		streak = sj.Status.Failures.DeepCopy()
	}
	if streak.Suspended && !specSuspended(sj) {
		streak = &v1alpha1.FailureStreak{CountedThrough: streak.CountedThrough}
	}
	if !count {
		return streak
	}
	limit := *sj.Spec.SuspendAfterFailures
	runs := uncountedRuns(sj, jobs, claims, streak)
	for i, run := range runs {
		if limit >= 1 && streak.Count >= limit {
			break
		}
		if !run.finished {
			if finishedCount(runs[i+1:]) <= passOverAfter {
				break // counted in order: wait for it
			}
			continue // passed over: it never counts
		}
		if run.failed {
			streak.Count++
			streak.Jobs = append(streak.Jobs, run.job)
			streak.Jobs = streak.Jobs[max(0, len(streak.Jobs)-maxStreakJobs):]
		} else {
			streak.Count, streak.Jobs = 0, nil
		}
		streak.CountedThrough = &metav1.Time{Time: run.scheduled}
	}
	return streak
}

// passOverAfter bounds the wait for a run that does not finish (a hung
// Job under concurrencyPolicy Allow): once this many later runs have
// finished, it is passed over and never counts, and the later ones do. The
// history cleanup keeps the finished Jobs not yet counted, so this is also
// how many more Jobs than its limits a ScheduledJob may keep meanwhile.
const passOverAfter = 10

// finishedCount is how many of runs have finished.
func finishedCount(runs []scheduledRun) int {
	n := 0
	for _, run := range runs {
		if run.finished {
			n++
		}
	}
	return n
}

// failuresDecision is what counting the failed runs decided.
type failuresDecision struct {
	// streak is status.failures (nil without spec.suspendAfterFailures).
	streak *v1alpha1.FailureStreak
	// suspending: the streak reached the limit (now, or already);
	// suspend: spec.suspend is to be set.
	suspending, suspend bool
	// uncounted: the Jobs were not one read, so nothing was counted and no
	// scheduled run may start from them (Plan.FailuresUncounted).
	uncounted bool
	events    []Event
}

// decideFailures counts the failed runs in the Jobs (failureStreak) and
// decides the suspension.
func decideFailures(in Input, claims []string) failuresDecision {
	sj := in.ScheduledJob
	d := failuresDecision{streak: failureStreak(sj, in.Jobs, claims, in.CountFailures)}
	d.suspending = suspendsAfterFailures(sj, d.streak)
	d.suspend = d.suspending && !specSuspended(sj)
	if d.suspending {
		// Suspended now, or already (a crash between the spec write and
		// this status, or by hand): a resume starts the count again.
		d.streak.Suspended = true
		d.events = append(d.events, suspendedAfterFailuresEvent(d.streak))
	}
	// A plan that cannot count starts no scheduled run, which counting
	// might have stopped: Jobs that are not one read may lack the failures.
	d.uncounted = sj.Spec.SuspendAfterFailures != nil && !in.CountFailures && !d.suspending
	return d
}

// scheduledRun is one scheduled run, as its Job (or claim) shows it.
type scheduledRun struct {
	scheduled        time.Time
	job              string
	finished, failed bool
}

// uncountedRuns are the scheduled runs after the streak's latest counted
// one, in the order they were scheduled: the Jobs, and the claims whose
// Jobs are still to come.
func uncountedRuns(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, claims []string, streak *v1alpha1.FailureStreak) []scheduledRun {
	var runs []scheduledRun
	for _, job := range jobs {
		scheduled, ok := v1alpha1.ScheduledTime(job)
		if _, missed := v1alpha1.MissedInGroup(job); !ok || missed || v1alpha1.IsTriggered(job) || !countsAfter(scheduled, streak) {
			continue // a run missed in its group neither failed nor succeeded
		}
		condition, finished := v1alpha1.JobFinished(job)
		runs = append(runs, scheduledRun{scheduled: scheduled, job: job.Name, finished: finished, failed: condition == batchv1.JobFailed})
	}
	for _, name := range claims {
		if minute, ok := claimMinute(sj, name); ok && countsAfter(minute, streak) {
			runs = append(runs, scheduledRun{scheduled: minute, job: name})
		}
	}
	slices.SortFunc(runs, func(a, b scheduledRun) int {
		return cmp.Or(a.scheduled.Compare(b.scheduled), strings.Compare(a.job, b.job))
	})
	return runs
}

// countsAfter reports whether a run scheduled at scheduled comes after the
// latest run the streak counted.
func countsAfter(scheduled time.Time, streak *v1alpha1.FailureStreak) bool {
	return streak.CountedThrough == nil || scheduled.After(streak.CountedThrough.Time)
}

// awaitsCount reports whether a finished Job is a run the streak has not
// counted yet: the history cleanup keeps it until it is.
func awaitsCount(job *batchv1.Job, streak *v1alpha1.FailureStreak) bool {
	if _, missed := v1alpha1.MissedInGroup(job); streak == nil || missed || v1alpha1.IsTriggered(job) {
		return false
	}
	scheduled, ok := v1alpha1.ScheduledTime(job)
	return ok && countsAfter(scheduled, streak)
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
