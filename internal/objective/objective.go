// Package objective counts a ScheduledJob's runs against its start
// objective (spec.startObjective: "99 % of runs within 30s, over 7 days"),
// as a pure function of what one reconcile saw and the current time.
//
// Invariant: each scheduled run is counted at most once, in exactly one of
// three ways: its start is measured (on time when its lateness is at most
// within), it is reported missed (late), or its first container has not
// run NotStartedGrace after within (late). status.startObjective's
// countedThrough, written in the same status update as the counts, is
// what keeps a run counted by the third way from being counted again when
// it starts later: a run of a Job scheduled at or before it is never
// counted again, and a status write that fails writes neither.
package objective

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// NotStartedGrace is how long after its objective's within a run whose
// first container has not been seen running is counted late: long enough
// for a start made just in time to reach the pods' status and the watch
// (seconds), short enough to count a run that never starts at once.
const NotStartedGrace = time.Minute

// dateLayout is ObjectiveDay.Date's form.
const dateLayout = "2006-01-02"

// Seen is what one reconcile saw of a ScheduledJob's runs.
type Seen struct {
	// Started is the run whose start was measured by this reconcile, if
	// any.
	Started *v1alpha1.RunStart
	// NotStarted is the scheduled time of the run Overdue named, when this
	// reconcile read its pods and found no container started; zero
	// otherwise.
	NotStarted time.Time
	// Missed is how many runs this reconcile reported missed, the latest
	// of them scheduled at MissedAt.
	Missed   int
	MissedAt time.Time
}

// Counted is what Count decided.
type Counted struct {
	// Status is the new status.startObjective; nil without an objective.
	Status *v1alpha1.StartObjectiveStatus
	// Runs and Late are how many runs were counted now, and how many of
	// them late, for the metrics.
	Runs, Late int
	// LateStart is the run counted late now whose start was measured, and
	// LateNotStarted the scheduled time of one counted late unstarted:
	// each gets a LateStart event.
	LateStart      *v1alpha1.RunStart
	LateNotStarted time.Time
}

// Count adds what a reconcile saw to status (the stored
// status.startObjective, nil at first) under objective, and drops the days
// that left the window at now. Nil objective: nil status, nothing counted.
func Count(objective *v1alpha1.StartObjective, status *v1alpha1.StartObjectiveStatus, seen Seen, now time.Time) Counted {
	if objective == nil {
		return Counted{}
	}
	st := &v1alpha1.StartObjectiveStatus{}
	if status != nil {
		st = status.DeepCopy()
	}
	var c Counted
	if s := seen.Started; s != nil && after(s.ScheduledTime.Time, st.CountedThrough) {
		onTime := objective.OnTime(s.Lateness.Duration)
		c.add(st, s.ScheduledTime.Time, 1, onTime)
		st.CountedThrough = &metav1.Time{Time: s.ScheduledTime.Time}
		if !onTime {
			c.LateStart = s
		}
	}
	if at := seen.NotStarted; !at.IsZero() && after(at, st.CountedThrough) {
		c.add(st, at, 1, false)
		st.CountedThrough = &metav1.Time{Time: at}
		c.LateNotStarted = at
	}
	if seen.Missed > 0 {
		c.add(st, seen.MissedAt, seen.Missed, false)
	}
	keepWindow(st, objective.Days(), now)
	summarize(st, objective)
	c.Status = st
	return c
}

// after reports whether a run scheduled at t is after countedThrough.
func after(t time.Time, countedThrough *metav1.Time) bool {
	return countedThrough == nil || t.After(countedThrough.Time)
}

// add counts n runs scheduled on at's day, on time or late.
func (c *Counted) add(st *v1alpha1.StartObjectiveStatus, at time.Time, n int, onTime bool) {
	date := at.UTC().Format(dateLayout)
	i := slices.IndexFunc(st.Days, func(d v1alpha1.ObjectiveDay) bool { return d.Date == date })
	if i < 0 {
		st.Days = append(st.Days, v1alpha1.ObjectiveDay{Date: date})
		// Newest first; dates in this form sort as strings.
		slices.SortFunc(st.Days, func(a, b v1alpha1.ObjectiveDay) int { return cmp.Compare(b.Date, a.Date) })
		i = slices.IndexFunc(st.Days, func(d v1alpha1.ObjectiveDay) bool { return d.Date == date })
	}
	st.Days[i].Runs += int32(n)
	c.Runs += n
	if onTime {
		st.Days[i].OnTime += int32(n)
	} else {
		c.Late += n
	}
}

// keepWindow drops the days before the window of days ending today (UTC).
func keepWindow(st *v1alpha1.StartObjectiveStatus, days int, now time.Time) {
	today := now.UTC().Truncate(24 * time.Hour)
	oldest := today.AddDate(0, 0, 1-days).Format(dateLayout)
	st.Days = slices.DeleteFunc(st.Days, func(d v1alpha1.ObjectiveDay) bool { return d.Date < oldest })
	if len(st.Days) == 0 {
		st.Days = nil
	}
}

// summarize writes the window's totals, attainment and met.
func summarize(st *v1alpha1.StartObjectiveStatus, objective *v1alpha1.StartObjective) {
	st.Runs, st.OnTime = 0, 0
	for _, d := range st.Days {
		st.Runs += d.Runs
		st.OnTime += d.OnTime
	}
	st.Attainment, st.Met = "", true
	if st.Runs == 0 {
		return
	}
	attained := float64(st.OnTime) / float64(st.Runs)
	st.Attainment = strconv.FormatFloat(100*attained, 'f', 2, 64)
	if target, err := objective.Ratio(); err == nil {
		// Compared in whole runs: onTime ≥ target × runs, without the
		// rounding of attainment's two decimals.
		st.Met = float64(st.OnTime) >= target*float64(st.Runs)-1e-9
	}
}

// Overdue returns the Job of the latest scheduled run not yet counted or
// measured (scheduled after countedThrough and after measured, the last
// run whose start was measured), and when it is counted late if its first
// container has not run: its scheduled time plus within and
// NotStartedGrace. Nil without an objective or such a run. Runs asked for
// by hand are not counted.
func Overdue(objective *v1alpha1.StartObjective, status *v1alpha1.StartObjectiveStatus, measured time.Time, jobs []*batchv1.Job, now time.Time) (*batchv1.Job, time.Time) {
	if objective == nil {
		return nil, time.Time{}
	}
	var countedThrough *metav1.Time
	if status != nil {
		countedThrough = status.CountedThrough
	}
	var latest *batchv1.Job
	var latestAt time.Time
	for _, job := range jobs {
		at, ok := v1alpha1.ScheduledTime(job)
		if ok && !v1alpha1.IsTriggered(job) && !at.After(now) && at.After(latestAt) {
			latest, latestAt = job, at
		}
	}
	if latest == nil || !latestAt.After(measured) || !after(latestAt, countedThrough) {
		return nil, time.Time{}
	}
	return latest, latestAt.Add(objective.Within.Duration + NotStartedGrace)
}

// LateStartMessage is a LateStart event's message for a run that started
// late beyond the objective: how late, and where most of that time went.
func LateStartMessage(objective *v1alpha1.StartObjective, start v1alpha1.RunStart) string {
	msg := fmt.Sprintf("the run of %s started %s after its time, beyond the start objective's %s",
		start.ScheduledTime.UTC().Format(time.RFC3339), start.Lateness.Duration, objective.Within.Duration)
	if dominant, ok := start.Dominant(); ok {
		msg += fmt.Sprintf(", most of it (%s) in phase %s", dominant.Duration.Duration, dominant.Name)
	}
	return msg + "; ontime explain sj/NAME says what would have prevented it"
}

// NotStartedMessage is a LateStart event's message for a run counted late
// without having started.
func NotStartedMessage(objective *v1alpha1.StartObjective, scheduled, now time.Time) string {
	return fmt.Sprintf("the run of %s has not started %s after its time, beyond the start objective's %s: its pods have not run a container",
		scheduled.UTC().Format(time.RFC3339), now.Sub(scheduled).Truncate(time.Second), objective.Within.Duration)
}
