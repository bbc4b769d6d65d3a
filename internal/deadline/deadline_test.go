package deadline

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

var two = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func fourHours() *v1alpha1.Deadline {
	return &v1alpha1.Deadline{After: &metav1.Duration{Duration: 4 * time.Hour}}
}

// job is the run scheduled at scheduled, made under fourHours (its Job
// says so), started at started (zero: not yet), succeeded at done (zero:
// not yet).
func job(scheduled, started, done time.Time) *batchv1.Job {
	return jobUnder(fourHours(), scheduled, started, done)
}

// jobUnder is job made under deadline d (nil: none).
func jobUnder(d *v1alpha1.Deadline, scheduled, started, done time.Time) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "run-" + scheduled.Format("150405"),
		Annotations: map[string]string{v1alpha1.ScheduledTimestampAnnotation: scheduled.Format(time.RFC3339)}}}
	if deadline, ok := d.For(scheduled, time.UTC); ok {
		v1alpha1.StampDeadline(j, deadline)
	}
	if !started.IsZero() {
		j.Status.StartTime = &metav1.Time{Time: started}
	}
	if !done.IsZero() {
		j.Status.CompletionTime = &metav1.Time{Time: done}
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	}
	return j
}

// history is three runs that succeeded the days before, taking 10, 20 and
// 30 minutes.
func history() []*batchv1.Job {
	var jobs []*batchv1.Job
	for i, took := range []time.Duration{10 * time.Minute, 20 * time.Minute, 30 * time.Minute} {
		at := two.AddDate(0, 0, i-3)
		jobs = append(jobs, job(at, at, at.Add(took)))
	}
	return jobs
}

// TestLearn: each successful run's time once, newest first, at most 10,
// and their 90th percentile by nearest rank.
func TestLearn(t *testing.T) {
	v := Watch(Input{Deadline: fourHours(), Jobs: history(), Now: two.Add(-time.Hour)})
	st := v.Status
	if got := durations(st.RecentRunTimes); got != "30m0s 20m0s 10m0s" {
		t.Errorf("recentRunTimes %s, want newest first", got)
	}
	if st.TypicalRunTime == nil || st.TypicalRunTime.Duration != 30*time.Minute || !st.LearnedThrough.Time.Equal(two.AddDate(0, 0, -1)) {
		t.Errorf("typical %v, learned through %v; want 30m (p90 of 3 is the longest), yesterday's run", st.TypicalRunTime, st.LearnedThrough)
	}
	again := Watch(Input{Deadline: fourHours(), Stored: st, Jobs: history(), Now: two.Add(-time.Hour)})
	if got := durations(again.Status.RecentRunTimes); got != "30m0s 20m0s 10m0s" {
		t.Errorf("learned again: %s", got)
	}
	var eleven []*batchv1.Job
	for i := range 11 {
		at := two.AddDate(0, 0, i-11)
		eleven = append(eleven, job(at, at, at.Add(time.Duration(i+1)*time.Minute)))
	}
	many := Watch(Input{Deadline: fourHours(), Jobs: eleven, Now: two}).Status
	if len(many.RecentRunTimes) != v1alpha1.MaxRecentRunTimes || many.TypicalRunTime.Duration != 10*time.Minute {
		t.Errorf("%d run times, typical %v; want 10 kept (2m to 11m), typical the second longest, 10m", len(many.RecentRunTimes), many.TypicalRunTime)
	}
}

func durations(ds []metav1.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.Duration.String())
	}
	return strings.Join(s, " ")
}

// TestQuantile: nearest rank.
func TestQuantile(t *testing.T) {
	var ten []metav1.Duration
	for i := range 10 {
		ten = append(ten, metav1.Duration{Duration: time.Duration(10-i) * time.Second})
	}
	for _, tc := range []struct {
		times []metav1.Duration
		q     float64
		want  time.Duration
	}{
		{ten, 0.9, 9 * time.Second},
		{ten, 0.5, 5 * time.Second},
		{ten, 1, 10 * time.Second},
		{ten[:1], 0.9, 10 * time.Second},
	} {
		if got, ok := Quantile(tc.times, tc.q); !ok || got != tc.want {
			t.Errorf("Quantile(%d times, %v) = %v, want %v", len(tc.times), tc.q, got, tc.want)
		}
	}
	if _, ok := Quantile(nil, 0.9); ok {
		t.Error("a quantile of no times")
	}
}

// TestDeadlineFor: after, and at in the ScheduledJob's zone (the first such
// time after the run, across midnight and a DST change).
func TestDeadlineFor(t *testing.T) {
	amsterdam, _ := time.LoadLocation("Europe/Amsterdam")
	at := func(hhmm string) *v1alpha1.Deadline { return &v1alpha1.Deadline{At: hhmm} }
	for name, tc := range map[string]struct {
		deadline  *v1alpha1.Deadline
		scheduled time.Time
		loc       *time.Location
		want      time.Time
	}{
		"4h after":            {fourHours(), two, time.UTC, two.Add(4 * time.Hour)},
		"07:00 the same day":  {at("07:00"), time.Date(2026, 11, 30, 2, 0, 0, 0, amsterdam), amsterdam, time.Date(2026, 11, 30, 7, 0, 0, 0, amsterdam)},
		"07:00 the next day":  {at("07:00"), time.Date(2026, 11, 30, 23, 0, 0, 0, amsterdam), amsterdam, time.Date(2026, 12, 1, 7, 0, 0, 0, amsterdam)},
		"at the run's minute": {at("02:00"), time.Date(2026, 11, 30, 2, 0, 0, 0, amsterdam), amsterdam, time.Date(2026, 12, 1, 2, 0, 0, 0, amsterdam)},
		"across a DST change": {at("07:00"), time.Date(2026, 3, 29, 1, 0, 0, 0, amsterdam), amsterdam, time.Date(2026, 3, 29, 7, 0, 0, 0, amsterdam)},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := tc.deadline.For(tc.scheduled, tc.loc)
			if !ok || !got.Equal(tc.want) {
				t.Errorf("deadline %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWatch: the latest run judged against its deadline of 4 h, with runs
// that took up to 30 minutes.
func TestWatch(t *testing.T) {
	deadline := two.Add(4 * time.Hour)
	suspended := job(two, time.Time{}, time.Time{})
	suspended.Spec.Suspend = ptr.To(true)
	failed := job(two, two, time.Time{})
	failed.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	for name, tc := range map[string]struct {
		latest    *batchv1.Job
		held      time.Time
		noHistory bool
		now       time.Time
		reason    string
		says      string
		atRisk    bool
		missed    bool
		predicted time.Time
		wake      time.Time
	}{
		"running, on track": {latest: job(two, two.Add(time.Minute), time.Time{}), now: two.Add(10 * time.Minute),
			reason: v1alpha1.ReasonOnTrack, says: "predicted to succeed at 2026-11-30T02:31:00Z, 3h29m0s before its deadline 2026-11-30T06:00:00Z: runs take 30m0s",
			// It outlasts the 10 m and 20 m runs without changing the
			// prediction (the 30 m run is their 90th percentile) and then
			// the 30 m run.
			predicted: two.Add(31 * time.Minute), wake: two.Add(31 * time.Minute)},
		"running, slower than two of three": {latest: job(two, two.Add(time.Minute), time.Time{}), now: two.Add(25 * time.Minute),
			reason: v1alpha1.ReasonOnTrack, says: "it has run 24m0s, longer than 2 of the last 3 runs, and those that ran longer took 30m0s",
			predicted: two.Add(31 * time.Minute), wake: two.Add(31 * time.Minute)},
		"running, as long as the slowest": {latest: job(two, two.Add(time.Minute), time.Time{}), now: two.Add(31*time.Minute + time.Second),
			reason: v1alpha1.ReasonOnTrack, says: "it has run 30m1s, as long as the slowest of the last 3 runs (30m0s)",
			predicted: two.Add(31*time.Minute + 2*time.Second), wake: two.Add(31*time.Minute + 2*time.Second)},
		// Slower than every learned run, it is predicted to run as long
		// again (04:01), and looked at again at the first second that
		// passes the deadline (running since 02:01, 04:00:31: 06:00:02).
		"running, slower than any": {latest: job(two, two.Add(time.Minute), time.Time{}), now: two.Add(time.Hour + time.Minute),
			reason: v1alpha1.ReasonOnTrack, says: "it has run 1h0m0s, longer than any of the last 3 runs (the slowest took 30m0s), so it is predicted to run as long again",
			predicted: two.Add(2*time.Hour + time.Minute), wake: two.Add(2*time.Hour + 31*time.Second)},
		"running, slower than any, at risk": {latest: job(two, two.Add(time.Minute), time.Time{}), now: two.Add(2*time.Hour + 31*time.Minute),
			reason: v1alpha1.ReasonDeadlineAtRisk, says: "predicted to succeed at 2026-11-30T07:01:00Z, 1h1m0s after its deadline 2026-11-30T06:00:00Z: it has run 2h30m0s, longer than any",
			atRisk: true, predicted: two.Add(5*time.Hour + time.Minute), wake: deadline},
		"started late, at risk": {latest: job(two, two.Add(3*time.Hour+50*time.Minute), time.Time{}), now: two.Add(3*time.Hour + 51*time.Minute),
			reason: v1alpha1.ReasonDeadlineAtRisk, says: "predicted to succeed at 2026-11-30T06:20:00Z, 20m0s after its deadline 2026-11-30T06:00:00Z: runs take 30m0s (the 90th percentile of the last 3)",
			atRisk: true, predicted: two.Add(4*time.Hour + 20*time.Minute), wake: deadline},
		"waiting in its group, at risk": {latest: suspended, now: two.Add(3*time.Hour + 45*time.Minute),
			reason: v1alpha1.ReasonDeadlineAtRisk, says: "its Job waits in its concurrency group", atRisk: true, predicted: two.Add(4*time.Hour + 15*time.Minute), wake: deadline},
		"waiting in its group, time left": {latest: suspended, now: two.Add(time.Hour),
			// Looked at again when the prediction (now + 30 m) is reached.
			reason: v1alpha1.ReasonOnTrack, predicted: two.Add(90 * time.Minute), wake: two.Add(90 * time.Minute)},
		// The run ahead, running 31 minutes, is slower than any learned
		// run: predicted to run as long again (to 02:32), then this one
		// 30 minutes; looked at again when the run ahead's prediction is
		// reached.
		"held back by Forbid": {latest: job(two.Add(-40*time.Minute), two.Add(-30*time.Minute), time.Time{}), held: two, now: two.Add(time.Minute),
			reason: v1alpha1.ReasonOnTrack, predicted: two.Add(62 * time.Minute), wake: two.Add(32 * time.Minute)},
		"held back behind a run on track": {latest: job(two.Add(-40*time.Minute), two.Add(-10*time.Minute), time.Time{}), held: two, now: two.Add(time.Minute),
			reason: v1alpha1.ReasonOnTrack, predicted: two.Add(50 * time.Minute), wake: two.Add(20 * time.Minute)},
		"held back too long": {latest: job(two.Add(-time.Minute), two.Add(3*time.Hour+40*time.Minute), time.Time{}), held: two, now: two.Add(3*time.Hour + 41*time.Minute),
			reason: v1alpha1.ReasonDeadlineAtRisk, says: "the active limit (Forbid, maxActive) holds it back", atRisk: true, predicted: two.Add(4*time.Hour + 40*time.Minute), wake: deadline.Add(-time.Minute)},
		"failed": {latest: failed, now: two.Add(time.Hour),
			reason: v1alpha1.ReasonDeadlineAtRisk, says: "failed: it will not succeed by its deadline", atRisk: true, wake: deadline},
		"missed": {latest: job(two, two.Add(time.Hour), time.Time{}), now: deadline.Add(time.Second),
			// Still running: its prediction is kept ahead (3 h run, as long
			// again), and looked at again when reached.
			reason: v1alpha1.ReasonDeadlineMissed, says: "has not succeeded by its deadline 2026-11-30T06:00:00Z: running since 2026-11-30T03:00:00Z",
			missed: true, predicted: deadline.Add(3*time.Hour + 2*time.Second), wake: deadline.Add(3*time.Hour + 2*time.Second)},
		"succeeded": {latest: job(two, two, two.Add(25*time.Minute)), now: two.Add(26 * time.Minute),
			reason: v1alpha1.ReasonRunSucceeded, says: "succeeded at 2026-11-30T02:25:00Z, 3h35m0s before its deadline"},
		"nothing learned yet": {latest: job(two, two, time.Time{}), noHistory: true, now: two.Add(time.Hour),
			reason: v1alpha1.ReasonOnTrack, says: "no run has succeeded yet", wake: deadline},
	} {
		t.Run(name, func(t *testing.T) {
			jobs := []*batchv1.Job{tc.latest}
			if !tc.noHistory {
				jobs = append(jobs, history()...)
			}
			in := Input{Deadline: fourHours(), Stored: &v1alpha1.DeadlineStatus{}, Jobs: jobs, Held: tc.held, Location: time.UTC, Now: tc.now}
			v := Watch(in)
			if v.Condition.Reason != tc.reason || !strings.Contains(v.Condition.Message, tc.says) {
				t.Errorf("condition %s: %q, want %s saying %q", v.Condition.Reason, v.Condition.Message, tc.reason, tc.says)
			}
			if v.AtRisk != tc.atRisk || (len(v.Missed) > 0) != tc.missed {
				t.Errorf("reported at risk %v, missed %v; want %v, %v", v.AtRisk, v.Missed, tc.atRisk, tc.missed)
			}
			if p := v.Status.PredictedFinish; (p == nil) != tc.predicted.IsZero() || (p != nil && !p.Time.Equal(tc.predicted)) {
				t.Errorf("predicted finish %v, want %v", p, tc.predicted)
			}
			if !v.Wake.Equal(tc.wake) {
				t.Errorf("wake at %v, want %v", v.Wake, tc.wake)
			}
			in.Stored = v.Status
			if again := Watch(in); again.AtRisk || len(again.Missed) > 0 {
				t.Error("the same run reported twice")
			}
		})
	}
}

// TestEarlierRunsMissed: a run still running, or held, when the next is
// scheduled is reported past its deadline all the same, once, while the
// next is watched; so is one found to have succeeded after it; one that
// succeeded in time is not.
func TestEarlierRunsMissed(t *testing.T) {
	minute := &v1alpha1.Deadline{After: &metav1.Duration{Duration: time.Minute}}
	next := two.Add(time.Minute)
	running := jobUnder(minute, two, two.Add(time.Second), time.Time{})
	in := Input{Deadline: minute, Stored: &v1alpha1.DeadlineStatus{}, Jobs: []*batchv1.Job{running}, Held: next, Location: time.UTC, Now: two.Add(59 * time.Second)}
	before := Watch(in)
	if len(before.Missed) != 0 || !before.Wake.Equal(next) {
		t.Fatalf("before the deadline: missed %v, wake %v; want none, and a look at %v", before.Missed, before.Wake, next)
	}
	in.Now = next
	at := Watch(in)
	if len(at.Missed) != 1 || !at.Missed[0].Scheduled.Equal(two) || !strings.Contains(at.Missed[0].Message, "has not succeeded by its deadline 2026-11-30T02:01:00Z") {
		t.Fatalf("at the deadline: missed %+v, want the run of 02:00", at.Missed)
	}
	if got := at.Status.ScheduledTime; got == nil || !got.Time.Equal(next) {
		t.Errorf("watching %v, want the held run of 02:01", got)
	}
	in.Stored = at.Status
	if again := Watch(in); len(again.Missed) != 0 {
		t.Errorf("reported again: %+v", again.Missed)
	}

	// Found finished 10 s past its deadline, by a controller that was away.
	late := jobUnder(minute, two, two.Add(time.Second), two.Add(70*time.Second))
	found := Watch(Input{Deadline: minute, Stored: &v1alpha1.DeadlineStatus{}, Jobs: []*batchv1.Job{late}, Location: time.UTC, Now: two.Add(5 * time.Minute)})
	if len(found.Missed) != 1 || !strings.Contains(found.Missed[0].Message, "succeeded at 2026-11-30T02:01:10Z, 10s after its deadline") {
		t.Errorf("a run that succeeded late: missed %+v", found.Missed)
	}
	inTime := Watch(Input{Deadline: minute, Stored: &v1alpha1.DeadlineStatus{}, Jobs: []*batchv1.Job{jobUnder(minute, two, two, two.Add(50*time.Second))}, Location: time.UTC, Now: two.Add(5 * time.Minute)})
	if len(inTime.Missed) != 0 {
		t.Errorf("a run that succeeded in time reported missed: %+v", inTime.Missed)
	}
	// A deadline just set reports nothing of the runs before it.
	if fresh := Watch(Input{Deadline: minute, Jobs: append(history(), late), Location: time.UTC, Now: two.Add(5 * time.Minute)}); len(fresh.Missed) != 0 {
		t.Errorf("a new deadline reported the runs made without it: %+v", fresh.Missed)
	}
}

// TestSlowRunAtRiskBeforeItsDeadline is the run the deadline exists for,
// slower than usual tonight: every minute, a deadline 50 s after each run,
// two runs of 24 s learned, then a run that takes 150 s. Following the
// looks Watch asks for, the run is on track until it has outlasted its
// slowest learned run (24 s, plus the 2 s Job times may be off), at risk
// from then (26 s after its start, 24 s before its deadline), and missed
// at its deadline; its stored prediction is never in the past while it
// runs.
func TestSlowRunAtRiskBeforeItsDeadline(t *testing.T) {
	after50s := &v1alpha1.Deadline{After: &metav1.Duration{Duration: 50 * time.Second}}
	var jobs []*batchv1.Job
	for i := range 2 {
		at := two.Add(time.Duration(i-2) * time.Minute)
		jobs = append(jobs, jobUnder(after50s, at, at, at.Add(24*time.Second)))
	}
	slow := jobUnder(after50s, two, two, time.Time{})
	jobs = append(jobs, slow)
	deadline := two.Add(50 * time.Second)

	var stored *v1alpha1.DeadlineStatus
	var timeline []string
	var atRiskAt, missedAt time.Time
	now := two.Add(time.Second)
	for range 20 {
		v := Watch(Input{Deadline: after50s, Stored: stored, Jobs: jobs, Location: time.UTC, Now: now})
		stored = v.Status
		if p := v.Status.PredictedFinish; p == nil || p.Time.Before(now) {
			t.Fatalf("at %s: predicted finish %v, in the past (or none) while the run runs", now.Format(time.TimeOnly), p)
		}
		if n := len(timeline); n == 0 || !strings.HasPrefix(timeline[n-1], v.Condition.Reason+" ") {
			timeline = append(timeline, v.Condition.Reason+" "+now.Sub(two).String())
		}
		if v.AtRisk {
			atRiskAt = now
		}
		if len(v.Missed) > 0 {
			missedAt = now
			break
		}
		if !v.Wake.After(now) {
			t.Fatalf("at %s: next look at %v, not ahead", now.Format(time.TimeOnly), v.Wake)
		}
		now = v.Wake
	}
	if got, want := strings.Join(timeline, ", "), "OnTrack 1s, DeadlineAtRisk 26s, DeadlineMissed 50s"; got != want {
		t.Errorf("condition's timeline %s, want %s", got, want)
	}
	if latest := two.Add(24*time.Second + JobTimeResolution); atRiskAt.IsZero() || atRiskAt.After(latest) || !atRiskAt.Before(deadline) {
		t.Errorf("reported at risk at %v, want by %v (its slowest learned run, 24 s, plus the 2 s resolution of Job times), before its deadline %v", atRiskAt, latest, deadline)
	}
	if !missedAt.Equal(deadline) {
		t.Errorf("reported missed at %v, want at its deadline %v", missedAt, deadline)
	}
}

// TestRunsJudgedByTheirOwnDeadline: a run is judged by the deadline on
// its Job, the one in force when it was made. Cut from 50 s to 5 s after a
// run that succeeded in 24 s, nothing is reported of it, and the next run
// is judged at once (DeadlineInfeasible). A run in flight when the cut
// comes keeps its 50 s. A run made before any deadline is not judged.
func TestRunsJudgedByTheirOwnDeadline(t *testing.T) {
	after := func(d time.Duration) *v1alpha1.Deadline {
		return &v1alpha1.Deadline{After: &metav1.Duration{Duration: d}}
	}
	onTime := jobUnder(after(50*time.Second), two, two, two.Add(24*time.Second))
	under50s := Watch(Input{Deadline: after(50 * time.Second), Jobs: []*batchv1.Job{onTime}, Location: time.UTC, Now: two.Add(30 * time.Second)})
	next := Outlook{Next: two.Add(time.Minute), Following: two.Add(2 * time.Minute)}
	cut := Watch(Input{Deadline: after(5 * time.Second), Stored: under50s.Status, Jobs: []*batchv1.Job{onTime}, Ahead: next, Location: time.UTC, Now: two.Add(40 * time.Second)})
	if len(cut.Missed) != 0 || cut.Status.MissedReported != nil {
		t.Errorf("a deadline cut to 5s reported the run that met its 50s: %+v", cut.Missed)
	}
	if c := cut.Condition; c.Reason != v1alpha1.ReasonDeadlineInfeasible || !strings.Contains(c.Message, "the next run, at 2026-11-30T02:01:00Z, must succeed by 2026-11-30T02:01:05Z") {
		t.Errorf("condition %s: %q, want the next run judged at once (DeadlineInfeasible)", c.Reason, c.Message)
	}

	inFlight := jobUnder(after(50*time.Second), two, two, time.Time{})
	at20s := Watch(Input{Deadline: after(5 * time.Second), Stored: under50s.Status, Jobs: []*batchv1.Job{inFlight}, Location: time.UTC, Now: two.Add(20 * time.Second)})
	if len(at20s.Missed) != 0 || at20s.Condition.Reason != v1alpha1.ReasonOnTrack || !at20s.Status.Deadline.Time.Equal(two.Add(50*time.Second)) {
		t.Errorf("a run in flight when the deadline was cut: missed %+v, %s watching to %v; want on track by its own 02:00:50", at20s.Missed, at20s.Condition.Reason, at20s.Status.Deadline)
	}

	unjudged := jobUnder(nil, two, two, time.Time{})
	none := Watch(Input{Deadline: after(5 * time.Second), Stored: &v1alpha1.DeadlineStatus{}, Jobs: []*batchv1.Job{unjudged}, Location: time.UTC, Now: two.Add(time.Minute)})
	if len(none.Missed) != 0 || none.Condition.Reason != "" || none.Status.ScheduledTime != nil {
		t.Errorf("a run made without a deadline: missed %+v, condition %q, watching %v; want it left alone", none.Missed, none.Condition.Reason, none.Status.ScheduledTime)
	}
}

// TestLaterDeadlineFirst: a deadline cut by more than the gap between
// runs puts a later run's deadline (02:01 + 5 s) before an earlier one's
// (02:00 + 4 h). The later run's miss is reported once the earlier is
// judged, and each run once: missedReported never passes a run not yet
// judged.
func TestLaterDeadlineFirst(t *testing.T) {
	early := job(two, two, time.Time{}) // 4 h
	late := jobUnder(&v1alpha1.Deadline{After: &metav1.Duration{Duration: 5 * time.Second}}, two.Add(time.Minute), two.Add(time.Minute), time.Time{})
	in := Input{Deadline: fourHours(), Stored: &v1alpha1.DeadlineStatus{}, Jobs: []*batchv1.Job{early, late}, Location: time.UTC, Now: two.Add(10 * time.Minute)}
	v := Watch(in)
	if len(v.Missed) != 0 || !v.Wake.Equal(two.Add(4*time.Hour)) {
		t.Errorf("while the 02:00 run has until 06:00: reported %+v, next look %v; want none yet, at 06:00", v.Missed, v.Wake)
	}
	if v.Condition.Reason != v1alpha1.ReasonDeadlineMissed {
		t.Errorf("condition %s, want DeadlineMissed: the watched 02:01 run is past its deadline", v.Condition.Reason)
	}
	finished := early.DeepCopy()
	finished.Status.CompletionTime = &metav1.Time{Time: two.Add(20 * time.Minute)}
	finished.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	in.Stored, in.Jobs, in.Now = v.Status, []*batchv1.Job{finished, late}, two.Add(21*time.Minute)
	v = Watch(in)
	if len(v.Missed) != 1 || !v.Missed[0].Scheduled.Equal(two.Add(time.Minute)) {
		t.Fatalf("once the 02:00 run met its deadline: reported %+v, want the 02:01 run", v.Missed)
	}
	in.Stored = v.Status
	if again := Watch(in); len(again.Missed) != 0 {
		t.Errorf("reported again: %+v", again.Missed)
	}
}

// TestAtRiskMessageTellsTheTimesApart: a run that has not started, looked
// at a fraction of a second after the last moment it could start and
// still succeed in time (the held-back run of the issue, at deadline −
// typical), is predicted a fraction past its deadline. The message gives
// the prediction to the second, rounded up, and how far past: never the
// same time twice.
func TestAtRiskMessageTellsTheTimesApart(t *testing.T) {
	after50s := &v1alpha1.Deadline{After: &metav1.Duration{Duration: 50 * time.Second}}
	learned := jobUnder(after50s, two.Add(-time.Minute), two.Add(-time.Minute), two.Add(-36*time.Second)) // 24 s
	waiting := jobUnder(after50s, two, time.Time{}, time.Time{})
	v := Watch(Input{Deadline: after50s, Stored: &v1alpha1.DeadlineStatus{}, Jobs: []*batchv1.Job{learned, waiting}, Location: time.UTC,
		Now: two.Add(26*time.Second + 300*time.Millisecond)})
	want := "the run of 2026-11-30T02:00:00Z is predicted to succeed at 2026-11-30T02:00:51Z, 1s after its deadline 2026-11-30T02:00:50Z: runs take 24s (the 90th percentile of the last 1); its Job has not started"
	if v.Condition.Reason != v1alpha1.ReasonDeadlineAtRisk || v.Condition.Message != want {
		t.Errorf("condition %s:\n%s\nwant DeadlineAtRisk:\n%s", v.Condition.Reason, v.Condition.Message, want)
	}
}
