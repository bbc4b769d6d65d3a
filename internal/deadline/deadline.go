// Package deadline watches a ScheduledJob's latest run against its
// deadline, as a pure function of the ScheduledJob's Jobs, what it stored
// and the current time: it learns the runs' times from the Jobs that
// succeeded and predicts when the latest run will succeed.
//
// Invariants: each successful run's time is learned once (learnedThrough);
// each run is reported at risk at most once and missed at most once
// (atRiskReported, missedReported), in the same status write that records
// it, so a write that fails reports nothing and its retry reports once. A
// run is judged by the deadline stamped on its Job when it was made
// (v1alpha1.RunDeadline), so a changed spec.deadline never reports an
// earlier run; a run held back without a Job is judged by spec.deadline.
package deadline

import (
	"cmp"
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
		// The deadline is new (or set again after it was removed): runs
		// stamped under an earlier one were reported then.
		markPastDeadlines(st, in)
	}
	missed, missWake := reportMisses(st, in)
	run, ok := watchedRun(in)
	st.ScheduledTime, st.Deadline, st.PredictedFinish = nil, nil, nil
	if !ok {
		// No run made under a deadline yet: only the next run is judged.
		return Verdict{Status: st, Condition: upFront(Condition{}, st, in), Missed: missed, Wake: missWake}
	}
	st.ScheduledTime, st.Deadline = timeAt(run.scheduled), timeAt(run.deadline)
	v := judge(st, in, run)
	v.Status, v.Missed, v.Wake = st, missed, earliest(v.Wake, missWake)
	return v
}

// reportMisses reports, oldest first and each once, the runs whose
// deadline has passed without their success (or that succeeded after
// it): not only the latest, since a run can still be running, or held
// back, when the next is scheduled. It stops at the first run still
// unfinished before its deadline and returns that deadline (zero: none):
// missedReported then never passes a run not yet judged, even when a
// deadline cut by more than the gap between runs puts a later run's
// deadline before an earlier one's (the later run is reported once the
// earlier is judged).
func reportMisses(st *v1alpha1.DeadlineStatus, in Input) ([]Miss, time.Time) {
	var misses []Miss
	for _, r := range runsSince(in, st.MissedReported) {
		var doneAt time.Time
		succeeded := false
		if r.job != nil {
			doneAt, succeeded = succeededAt(r.job)
		}
		switch {
		case succeeded && !doneAt.After(r.deadline):
		case !succeeded && in.Now.Before(r.deadline):
			return misses, r.deadline
		case succeeded:
			misses = append(misses, Miss{r.scheduled, fmt.Sprintf("the run of %s succeeded at %s, %s",
				stamp(r.scheduled), stamp(doneAt), againstDeadline(doneAt, r.deadline))})
			st.MissedReported = timeAt(r.scheduled)
		default: // unfinished, and its deadline has come
			misses = append(misses, Miss{r.scheduled, fmt.Sprintf("the run of %s has not succeeded by its deadline %s: %s",
				stamp(r.scheduled), stamp(r.deadline), breakdown(in, r))})
			st.MissedReported = timeAt(r.scheduled)
		}
	}
	return misses, time.Time{}
}

// markPastDeadlines marks the runs whose deadline has passed as reported,
// without reporting them.
func markPastDeadlines(st *v1alpha1.DeadlineStatus, in Input) {
	for _, r := range runsSince(in, nil) {
		if !in.Now.Before(r.deadline) {
			st.MissedReported = timeAt(r.scheduled)
		}
	}
}

// runsSince are the runs judged by a deadline scheduled after reported
// (all without it), oldest first: those whose Job carries the deadline
// it was made under, and a held-back one, judged by spec.deadline.
func runsSince(in Input, reported *metav1.Time) []run {
	var runs []run
	for _, job := range in.Jobs {
		at, ok := v1alpha1.ScheduledTime(job)
		if !ok || v1alpha1.IsTriggered(job) || at.After(in.Now) || (reported != nil && !at.After(reported.Time)) {
			continue
		}
		if deadline, judged := v1alpha1.RunDeadline(job); judged {
			runs = append(runs, run{scheduled: at, deadline: deadline, job: job})
		}
	}
	if !in.Held.IsZero() && (reported == nil || in.Held.After(reported.Time)) &&
		!slices.ContainsFunc(in.Jobs, func(job *batchv1.Job) bool { at, ok := v1alpha1.ScheduledTime(job); return ok && at.Equal(in.Held) }) {
		if deadline, ok := in.Deadline.For(in.Held, in.Location); ok {
			runs = append(runs, run{scheduled: in.Held, deadline: deadline, held: true})
		}
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

// run is a run judged by a deadline: its scheduled time, that deadline,
// its Job (nil while held back) and what the Job says.
type run struct {
	scheduled, deadline time.Time
	job                 *batchv1.Job
	held                bool
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
func judge(st *v1alpha1.DeadlineStatus, in Input, r run) Verdict {
	var v Verdict
	deadline := r.deadline
	if r.job != nil {
		if at, ok := succeededAt(r.job); ok {
			v.Condition = Condition{metav1.ConditionFalse, v1alpha1.ReasonRunSucceeded,
				fmt.Sprintf("the run of %s succeeded at %s, %s", stamp(r.scheduled), stamp(at), againstDeadline(at, deadline))}
			v.Condition = upFront(v.Condition, st, in)
			return v
		}
	}
	failed := r.job != nil && finishedFailed(r.job)
	p, predictable := predict(st, in, r)
	if predictable && !failed {
		// Never in the past: the controller looks again when it is
		// reached (p.changes), the deadline's verdict given or not.
		st.PredictedFinish = timeAt(p.finish)
		v.Wake = p.changes
	}
	why := breakdown(in, r)
	switch {
	case !in.Now.Before(deadline):
		// Reported (event, metric) by reportMisses, with the earlier runs.
		v.Condition = Condition{metav1.ConditionTrue, v1alpha1.ReasonDeadlineMissed,
			fmt.Sprintf("the run of %s has not succeeded by its deadline %s: %s", stamp(r.scheduled), stamp(deadline), why)}
		return v
	case failed:
		v.Condition = Condition{metav1.ConditionTrue, v1alpha1.ReasonDeadlineAtRisk,
			fmt.Sprintf("the run of %s failed: it will not succeed by its deadline %s unless run again (ontime trigger)", stamp(r.scheduled), stamp(deadline))}
	case predictable && p.finish.After(deadline):
		v.Condition = Condition{metav1.ConditionTrue, v1alpha1.ReasonDeadlineAtRisk,
			fmt.Sprintf("the run of %s is predicted to succeed at %s, %s: %s; %s",
				stamp(r.scheduled), stamp(p.finish), againstDeadline(p.finish, deadline), p.basis, why)}
	default:
		v.Condition = Condition{metav1.ConditionFalse, v1alpha1.ReasonOnTrack, onTrackMessage(r, p, predictable)}
		v.Wake = earliest(v.Wake, wakeFor(st, r, in.Now))
		v.Condition = upFront(v.Condition, st, in)
		return v
	}
	v.AtRisk = reportOnce(&st.AtRiskReported, r.scheduled)
	v.Wake = earliest(v.Wake, deadline)
	return v
}

// wakeFor is when an on-track verdict may change: when a run that has
// not started could no longer finish in time if it started then, or at
// the deadline.
func wakeFor(st *v1alpha1.DeadlineStatus, r run, now time.Time) time.Time {
	if typical := st.TypicalRunTime; typical != nil && !started(r) {
		if latestStart := r.deadline.Add(-typical.Duration); latestStart.After(now) {
			return latestStart
		}
	}
	return r.deadline
}

func onTrackMessage(r run, p prediction, predictable bool) string {
	if !predictable {
		return fmt.Sprintf("the run of %s has until %s; no run has succeeded yet to predict it from", stamp(r.scheduled), stamp(r.deadline))
	}
	return fmt.Sprintf("the run of %s is predicted to succeed at %s, %s: %s", stamp(r.scheduled), stamp(p.finish), againstDeadline(p.finish, r.deadline), p.basis)
}

func againstDeadline(at, deadline time.Time) string {
	if at.After(deadline) {
		return fmt.Sprintf("%s after its deadline %s", at.Sub(deadline).Truncate(time.Second), stamp(deadline))
	}
	return fmt.Sprintf("%s before its deadline %s", deadline.Sub(at).Truncate(time.Second), stamp(deadline))
}

// prediction is when a run is predicted to succeed (to the second, rounded
// up), what that rests on, and when it next changes with nothing else
// changing: time passing a run that has not started, or a running run
// outlasting what was learned.
type prediction struct {
	finish, changes time.Time
	basis           string
	// asLongAgain: a running run slower than every learned run, predicted
	// to run as long again as it has, a prediction that moves with now.
	asLongAgain bool
}

// predict is when the run is predicted to succeed: a running run as
// runningPrediction says; otherwise its start (now while it has not
// started; a held-back run starts once the run ahead of it is predicted
// to finish, a run waiting in its group when the group predicts it is
// admitted) plus the typical run time, never before now. False until a
// run time is learned.
func predict(st *v1alpha1.DeadlineStatus, in Input, r run) (prediction, bool) {
	if st.TypicalRunTime == nil {
		return prediction{}, false
	}
	if started(r) {
		start := r.job.Status.StartTime.Time
		p := runningPrediction(st.RecentRunTimes, start, in.Now)
		if p.asLongAgain && !p.finish.After(r.deadline) {
			// start + 2×(now − start) passes the deadline just after the
			// midpoint: look again at the first second past it.
			midpoint := start.Add(r.deadline.Sub(start) / 2)
			p.changes = earliest(p.changes, midpoint.Truncate(time.Second).Add(time.Second))
		}
		return p, true
	}
	typical := st.TypicalRunTime.Duration
	start, changes := in.Now, time.Time{}
	switch {
	case r.held:
		ahead := aheadFinishes(in, st)
		start, changes = later(in.Now, ahead.finish), ahead.changes
	case waitsInGroup(r) && in.Group != nil:
		start = later(in.Now, in.Group.PredictedAdmission(r.job.Namespace, r.job.Name))
	}
	finish := roundUp(start.Add(typical))
	return prediction{finish: finish, changes: earliest(changes, finish), basis: runTimesBasis(typical, len(st.RecentRunTimes))}, true
}

// runTimesBasis says what a prediction from the typical run time, the
// 90th percentile of the last n runs' times, rests on.
func runTimesBasis(typical time.Duration, n int) string {
	return fmt.Sprintf("runs take %s (the 90th percentile of the last %d)", typical, n)
}

// JobTimeResolution is how far a learned run time, or a running run's
// time so far, may be from the truth: a Job's startTime and
// completionTime are whole seconds, each rounded down, so a run as long
// as a learned one may seem up to two seconds longer.
const JobTimeResolution = 2 * time.Second

// runningPrediction predicts when a run running since start succeeds,
// from the learned run times (times) and how long it has run:
//   - while some learned runs took longer than it has run so far, it is
//     predicted to take the 90th percentile of those (the runs that were
//     still running at its age): the typical run time until it outlasts
//     the fastest learned run, then later as it outlasts more of them.
//     It changes when the run outlasts the next one;
//   - once it has run as long as the slowest, within JobTimeResolution,
//     it is predicted to end at the end of that margin;
//   - past that it is slower than every learned run, and they say
//     nothing of when it ends: it is predicted to run as long again as it
//     has run so far (its age is the only measure left, as in Gott's
//     delta-t argument). It changes continuously: changes is when it is
//     reached, and predict adds when it passes the watched run's deadline.
//
// The prediction is never before now.
func runningPrediction(times []metav1.Duration, start, now time.Time) prediction {
	ran := max(now.Sub(start), 0)
	var longer []metav1.Duration
	var slowest time.Duration
	for _, t := range times {
		slowest = max(slowest, t.Duration)
		if t.Duration > ran {
			longer = append(longer, t)
		}
	}
	shown := ran.Truncate(time.Second)
	if q, ok := Quantile(longer, RunTimeQuantile); ok {
		p := prediction{finish: roundUp(start.Add(q)), basis: runTimesBasis(q, len(times))}
		if len(longer) < len(times) {
			p.basis = fmt.Sprintf("it has run %s, longer than %d of the last %d runs, and those that ran longer took %s (their 90th percentile)",
				shown, len(times)-len(longer), len(times), q)
		}
		p.changes = start.Add(nextChange(longer, q))
		return p
	}
	if end := start.Add(slowest + JobTimeResolution); now.Before(end) {
		return prediction{finish: roundUp(end), changes: end,
			basis: fmt.Sprintf("it has run %s, as long as the slowest of the last %d runs (%s)", shown, len(times), slowest)}
	}
	finish := roundUp(now.Add(ran))
	return prediction{finish: finish, changes: finish, asLongAgain: true,
		basis: fmt.Sprintf("it has run %s, longer than any of the last %d runs (the slowest took %s), so it is predicted to run as long again", shown, len(times), slowest)}
}

// nextChange is how long after its start a run predicted to take q, the
// quantile of the learned runs longer than it has run (longer), must run
// for the prediction to change: until it outlasts as many of them, shortest
// first, as leave a different quantile (or none: the slowest's margin).
func nextChange(longer []metav1.Duration, q time.Duration) time.Duration {
	sorted := slices.SortedFunc(slices.Values(longer), func(a, b metav1.Duration) int { return cmp.Compare(a.Duration, b.Duration) })
	for i, t := range sorted {
		if rest, ok := Quantile(sorted[i+1:], RunTimeQuantile); !ok || rest != q {
			return t.Duration
		}
	}
	return sorted[len(sorted)-1].Duration // not reached: the last leaves none
}

// ahead is when the latest started, unfinished run ahead of a held-back
// one is predicted to finish, and when that prediction changes.
type ahead struct{ finish, changes time.Time }

func aheadFinishes(in Input, st *v1alpha1.DeadlineStatus) ahead {
	var a ahead
	for _, job := range in.Jobs {
		if started(run{job: job}) && !finished(job) {
			p := runningPrediction(st.RecentRunTimes, job.Status.StartTime.Time, in.Now)
			a.finish, a.changes = later(a.finish, p.finish), earliest(a.changes, p.changes)
		}
	}
	return a
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

// roundUp is t at the next whole second (t if whole): what status keeps of
// a prediction, never before it.
func roundUp(t time.Time) time.Time {
	if whole := t.Truncate(time.Second); whole.Before(t) {
		return whole.Add(time.Second)
	}
	return t
}

// stamp is t in UTC, with its fraction of a second when it has one: two
// times a message compares never read the same when they differ.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
