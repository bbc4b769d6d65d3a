// Package deadline watches a ScheduledJob's latest run against its
// spec.deadline, as a pure function of the ScheduledJob's Jobs, what it
// stored and the current time: it learns the runs' times from the Jobs
// that succeeded and predicts when the latest run will succeed.
//
// Invariants: each successful run's time is learned once (learnedThrough);
// each run is reported at risk at most once and missed at most once
// (atRiskReported, missedReported), in the same status write that records
// it, so a write that fails reports nothing and its retry reports once.
package deadline

import (
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Input is what Watch looks at.
type Input struct {
	Deadline *v1alpha1.Deadline
	// Stored is status.deadline as read (nil at first).
	Stored *v1alpha1.DeadlineStatus
	// Jobs are the ScheduledJob's Jobs.
	Jobs []*batchv1.Job
	// Held is the scheduled time of a due run held back without a Job by
	// the active limit (Forbid, maxActive); zero when none.
	Held time.Time
	// Starts are the recent runs' measured starts (status.recentRunStarts),
	// for the message's breakdown.
	Starts []v1alpha1.RunStart
	// Group is the status of the concurrency group the ScheduledJob joins
	// (nil: none, or not read): a run waiting in it is predicted to start
	// when the group predicts it is admitted.
	Group *v1alpha1.ConcurrencyGroupStatus
	// Ahead is what decides whether the next run can succeed in time at
	// all, whatever the latest run does.
	Ahead Outlook
	// Location is the ScheduledJob's zone, for spec.deadline.at.
	Location *time.Location
	Now      time.Time
}

// Outlook is what stands before the next run: when it and the one after
// it are scheduled, what the concurrency policy makes it wait for, and
// when its concurrency group predicts it is admitted.
type Outlook struct {
	// Next is the next run's scheduled time, Following the one after it
	// (zero: none).
	Next, Following time.Time
	// Limit is how many runs may be active before a due run waits for one
	// to finish: 1 under Forbid, spec.maxActive under Allow, 0 for none.
	// Replace says a due run replaces the active ones instead.
	Limit   int32
	Replace bool
	// NextAdmission is when the concurrency group, named by Group,
	// predicts the next run is admitted (zero: no group or no prediction).
	NextAdmission time.Time
	Group         string
}

// Verdict is what Watch decided.
type Verdict struct {
	// Status is the new status.deadline; nil without spec.deadline.
	Status *v1alpha1.DeadlineStatus
	// Condition is DeadlineAtRisk's status, reason and message; a zero
	// Reason removes the condition (no run to watch yet).
	Condition Condition
	// AtRisk is set when the watched run is reported at risk for the
	// first time now: an event and a metric.
	AtRisk bool
	// Missed are the runs, oldest first, whose deadline passed without
	// their success and that are reported now, each once: the watched
	// run, or an earlier one still unfinished (or that succeeded late)
	// when a later run was scheduled before its deadline. An event and a
	// metric each.
	Missed []Miss
	// Wake is when the prediction or the deadline next changes the
	// verdict (zero: nothing ahead).
	Wake time.Time
}

// Miss is a run reported past its deadline: its scheduled time, and what
// the event says.
type Miss struct {
	Scheduled time.Time
	Message   string
}

// Condition is the DeadlineAtRisk condition's content.
type Condition struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// RunTimeQuantile is the quantile of the recent run times that predictions
// use (nearest rank): a run as slow as one in ten is predicted, and with
// ten runs kept one outlier is not.
const RunTimeQuantile = 0.9

// Watch learns the Jobs' run times and judges the latest run against its
// deadline.
func Watch(in Input) Verdict {
	if in.Deadline == nil {
		return Verdict{}
	}
	st := &v1alpha1.DeadlineStatus{}
	if in.Stored != nil {
		st = in.Stored.DeepCopy()
	}
	learn(st, in.Jobs)
	if in.Stored == nil {
		// The deadline is new: the runs it finds past it ran without one.
		markPastDeadlines(st, in)
	}
	missed, missWake := reportMisses(st, in)
	run, ok := watchedRun(in)
	st.ScheduledTime, st.Deadline, st.PredictedFinish = nil, nil, nil
	if !ok {
		return Verdict{Status: st, Missed: missed, Wake: missWake}
	}
	deadline, ok := in.Deadline.For(run.scheduled, in.Location)
	if !ok {
		return Verdict{Status: st, Missed: missed, Wake: missWake}
	}
	st.ScheduledTime, st.Deadline = timeAt(run.scheduled), timeAt(deadline)
	v := judge(st, in, run, deadline)
	v.Status, v.Missed, v.Wake = st, missed, earliest(v.Wake, missWake)
	return v
}

// reportMisses reports, oldest first and each once, the runs whose
// deadline has passed without their success (or that succeeded after
// it): not only the latest, since a run can still be running, or held
// back, when the next is scheduled. It returns them, and the earliest
// deadline still ahead of an unfinished run (zero: none). Deadlines never
// go back as runs go forward, so every run before the latest reported
// has been judged: missedReported marks them all.
func reportMisses(st *v1alpha1.DeadlineStatus, in Input) ([]Miss, time.Time) {
	var misses []Miss
	var wake time.Time
	for _, r := range runsSince(in, st.MissedReported) {
		deadline, ok := in.Deadline.For(r.scheduled, in.Location)
		if !ok {
			continue
		}
		var doneAt time.Time
		succeeded := false
		if r.job != nil {
			doneAt, succeeded = succeededAt(r.job)
		}
		switch {
		case succeeded && !doneAt.After(deadline):
		case !succeeded && in.Now.Before(deadline):
			wake = earliest(wake, deadline)
		case succeeded:
			misses = append(misses, Miss{r.scheduled, fmt.Sprintf("the run of %s succeeded at %s, %s (%s)",
				stamp(r.scheduled), stamp(doneAt), againstDeadline(doneAt, deadline), in.Deadline)})
			st.MissedReported = timeAt(r.scheduled)
		default: // unfinished, and its deadline has come
			misses = append(misses, Miss{r.scheduled, fmt.Sprintf("the run of %s has not succeeded by its deadline %s (%s): %s",
				stamp(r.scheduled), stamp(deadline), in.Deadline, breakdown(in, r))})
			st.MissedReported = timeAt(r.scheduled)
		}
	}
	return misses, wake
}

// markPastDeadlines marks the runs whose deadline has passed as reported,
// without reporting them.
func markPastDeadlines(st *v1alpha1.DeadlineStatus, in Input) {
	for _, r := range runsSince(in, nil) {
		if deadline, ok := in.Deadline.For(r.scheduled, in.Location); ok && !in.Now.Before(deadline) {
			st.MissedReported = timeAt(r.scheduled)
		}
	}
}

// runsSince are the scheduled runs after reported (all without it), with
// a held-back one, oldest first.
func runsSince(in Input, reported *metav1.Time) []run {
	var runs []run
	for _, job := range in.Jobs {
		at, ok := v1alpha1.ScheduledTime(job)
		if ok && !v1alpha1.IsTriggered(job) && !at.After(in.Now) && (reported == nil || at.After(reported.Time)) {
			runs = append(runs, run{scheduled: at, job: job})
		}
	}
	if !in.Held.IsZero() && (reported == nil || in.Held.After(reported.Time)) &&
		!slices.ContainsFunc(runs, func(r run) bool { return r.scheduled.Equal(in.Held) }) {
		runs = append(runs, run{scheduled: in.Held, held: true})
	}
	slices.SortFunc(runs, func(a, b run) int { return a.scheduled.Compare(b.scheduled) })
	return runs
}

// earliest is the earlier of two times, a zero one being none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// run is the run watched: its scheduled time, its Job (nil while held
// back) and what the Job says.
type run struct {
	scheduled time.Time
	job       *batchv1.Job
	held      bool
}

// watchedRun is the latest scheduled run: a held-back one if later than
// every Job's; false when there is none yet.
func watchedRun(in Input) (run, bool) {
	runs := runsSince(in, nil)
	if len(runs) == 0 {
		return run{}, false
	}
	return runs[len(runs)-1], true
}

// judge says whether the run is on track, at risk or past its deadline.
func judge(st *v1alpha1.DeadlineStatus, in Input, r run, deadline time.Time) Verdict {
	var v Verdict
	if r.job != nil {
		if at, ok := succeededAt(r.job); ok {
			v.Condition = Condition{metav1.ConditionFalse, v1alpha1.ReasonRunSucceeded,
				fmt.Sprintf("the run of %s succeeded at %s, %s", stamp(r.scheduled), stamp(at), againstDeadline(at, deadline))}
			v.Condition = upFront(v.Condition, st, in)
			return v
		}
	}
	failed := r.job != nil && finishedFailed(r.job)
	predicted, predictable := predict(st, in, r)
	if predictable && !failed {
		st.PredictedFinish = timeAt(predicted)
	}
	why := breakdown(in, r)
	switch {
	case !in.Now.Before(deadline):
		// Reported (event, metric) by reportMisses, with the earlier runs.
		v.Condition = Condition{metav1.ConditionTrue, v1alpha1.ReasonDeadlineMissed,
			fmt.Sprintf("the run of %s has not succeeded by its deadline %s (%s): %s", stamp(r.scheduled), stamp(deadline), in.Deadline, why)}
		return v
	case failed:
		v.Condition = Condition{metav1.ConditionTrue, v1alpha1.ReasonDeadlineAtRisk,
			fmt.Sprintf("the run of %s failed: it will not succeed by its deadline %s unless run again (ontime trigger)", stamp(r.scheduled), stamp(deadline))}
	case predictable && predicted.After(deadline):
		v.Condition = Condition{metav1.ConditionTrue, v1alpha1.ReasonDeadlineAtRisk,
			fmt.Sprintf("the run of %s is predicted to succeed at %s, after its deadline %s: runs take %s (the 90th percentile of the last %d); %s",
				stamp(r.scheduled), stamp(predicted), stamp(deadline), st.TypicalRunTime.Duration, len(st.RecentRunTimes), why)}
	default:
		v.Condition = Condition{metav1.ConditionFalse, v1alpha1.ReasonOnTrack, onTrackMessage(r, predicted, predictable, deadline)}
		v.Wake = wakeFor(st, r, deadline, in.Now)
		v.Condition = upFront(v.Condition, st, in)
		return v
	}
	v.AtRisk = reportOnce(&st.AtRiskReported, r.scheduled)
	v.Wake = deadline
	return v
}

// wakeFor is when an on-track verdict may change: when a run that has
// not started could no longer finish in time if it started then, or at
// the deadline.
func wakeFor(st *v1alpha1.DeadlineStatus, r run, deadline, now time.Time) time.Time {
	if typical := st.TypicalRunTime; typical != nil && !started(r) {
		if latestStart := deadline.Add(-typical.Duration); latestStart.After(now) {
			return latestStart
		}
	}
	return deadline
}

func onTrackMessage(r run, predicted time.Time, predictable bool, deadline time.Time) string {
	if !predictable {
		return fmt.Sprintf("the run of %s has until %s; no run has succeeded yet to predict it from", stamp(r.scheduled), stamp(deadline))
	}
	return fmt.Sprintf("the run of %s is predicted to succeed at %s, %s", stamp(r.scheduled), stamp(predicted), againstDeadline(predicted, deadline))
}

func againstDeadline(at, deadline time.Time) string {
	if at.After(deadline) {
		return fmt.Sprintf("%s after its deadline %s", at.Sub(deadline).Truncate(time.Second), stamp(deadline))
	}
	return fmt.Sprintf("%s before its deadline %s", deadline.Sub(at).Truncate(time.Second), stamp(deadline))
}

// predict is when the run is predicted to succeed: its start (now while it
// has not started; a held-back run starts once the run ahead of it
// finishes, a run waiting in its group when the group predicts it is
// admitted) plus the typical run time, never before now. False until a
// run time is learned.
func predict(st *v1alpha1.DeadlineStatus, in Input, r run) (time.Time, bool) {
	if st.TypicalRunTime == nil {
		return time.Time{}, false
	}
	typical := st.TypicalRunTime.Duration
	start := in.Now
	switch {
	case started(r):
		start = r.job.Status.StartTime.Time
	case r.held:
		start = later(in.Now, aheadFinishes(in, typical))
	case waitsInGroup(r) && in.Group != nil:
		start = later(in.Now, in.Group.PredictedAdmission(r.job.Namespace, r.job.Name))
	}
	return later(in.Now, start.Add(typical)), true
}

// aheadFinishes is when the latest started, unfinished run ahead of a
// held-back one is predicted to finish.
func aheadFinishes(in Input, typical time.Duration) time.Time {
	var finish time.Time
	for _, job := range in.Jobs {
		if started(run{job: job}) && !finished(job) {
			finish = later(finish, job.Status.StartTime.Add(typical))
		}
	}
	return finish
}

// started reports whether the run's Job has started running: it has a
// start time and is not suspended (waiting in a concurrency group).
func started(r run) bool {
	return r.job != nil && r.job.Status.StartTime != nil && (r.job.Spec.Suspend == nil || !*r.job.Spec.Suspend)
}

// waitsInGroup reports whether the run's Job is suspended, waiting for
// its concurrency group to admit it.
func waitsInGroup(r run) bool {
	return r.job != nil && r.job.Spec.Suspend != nil && *r.job.Spec.Suspend
}

// breakdown says where the watched run is: held back, waiting in its
// group, not started, or started (with its start's lateness and dominant
// phase, when measured).
func breakdown(in Input, r run) string {
	switch {
	case r.held:
		return "it has not started: the active limit (Forbid, maxActive) holds it back until the run ahead of it finishes"
	case waitsInGroup(r):
		msg := "it has not started: its Job waits in its concurrency group"
		if in.Group != nil {
			if at := in.Group.PredictedAdmission(r.job.Namespace, r.job.Name); !at.IsZero() {
				msg += ", which predicts it is admitted at " + stamp(at)
			}
		}
		return msg
	case !started(r):
		return "its Job has not started"
	}
	i := slices.IndexFunc(in.Starts, func(s v1alpha1.RunStart) bool { return s.ScheduledTime.Time.Equal(r.scheduled) })
	if i < 0 {
		return fmt.Sprintf("running since %s", stamp(r.job.Status.StartTime.Time))
	}
	s := in.Starts[i]
	msg := fmt.Sprintf("running since %s, %s after its time", stamp(s.StartTime.Time), s.Lateness.Duration)
	if dominant, ok := s.Dominant(); ok {
		msg += fmt.Sprintf(" (most of it, %s, in phase %s)", dominant.Duration.Duration, dominant.Name)
	}
	return msg
}

// reportOnce moves *reported to scheduled and reports true, unless the
// run was reported already.
func reportOnce(reported **metav1.Time, scheduled time.Time) bool {
	if *reported != nil && !scheduled.After((*reported).Time) {
		return false
	}
	*reported = timeAt(scheduled)
	return true
}

// learn adds the run times of the runs that succeeded since
// learnedThrough, oldest first, and sets the typical run time.
func learn(st *v1alpha1.DeadlineStatus, jobs []*batchv1.Job) {
	type learned struct {
		scheduled time.Time
		took      time.Duration
	}
	var runs []learned
	for _, job := range jobs {
		at, ok := v1alpha1.ScheduledTime(job)
		done, succeeded := succeededAt(job)
		if !ok || !succeeded || v1alpha1.IsTriggered(job) || job.Status.StartTime == nil ||
			(st.LearnedThrough != nil && !at.After(st.LearnedThrough.Time)) {
			continue
		}
		runs = append(runs, learned{at, max(done.Sub(job.Status.StartTime.Time), 0)})
	}
	slices.SortFunc(runs, func(a, b learned) int { return a.scheduled.Compare(b.scheduled) })
	for _, r := range runs {
		st.RecentRunTimes = append([]metav1.Duration{{Duration: r.took}}, st.RecentRunTimes...)
		st.LearnedThrough = timeAt(r.scheduled)
	}
	st.RecentRunTimes = st.RecentRunTimes[:min(len(st.RecentRunTimes), v1alpha1.MaxRecentRunTimes)]
	if typical, ok := Quantile(st.RecentRunTimes, RunTimeQuantile); ok {
		st.TypicalRunTime = &metav1.Duration{Duration: typical}
	}
}

// Quantile is the q quantile of times by nearest rank: the smallest time
// at least q of them are at most.
func Quantile(times []metav1.Duration, q float64) (time.Duration, bool) {
	if len(times) == 0 {
		return 0, false
	}
	sorted := make([]time.Duration, len(times))
	for i, t := range times {
		sorted[i] = t.Duration
	}
	slices.Sort(sorted)
	rank := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)], true
}

// succeededAt returns when job succeeded.
func succeededAt(job *batchv1.Job) (time.Time, bool) {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			if job.Status.CompletionTime != nil {
				return job.Status.CompletionTime.Time, true
			}
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

func finishedFailed(job *batchv1.Job) bool {
	return slices.ContainsFunc(job.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue
	})
}

func finished(job *batchv1.Job) bool {
	_, succeeded := succeededAt(job)
	return succeeded || finishedFailed(job)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func timeAt(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
