package planner

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestSeveralSchedules: a ScheduledJob with spec.schedules runs at the
// union of its entries' times, in order; a time two entries share is one
// run (one Job name); status.effectiveSchedule lists the entries and
// nextScheduleTime is the earliest next run of any.
func TestSeveralSchedules(t *testing.T) {
	w := newCatchUpWorld(v1alpha1.AllowConcurrent, 0, nil)
	w.sj.Spec.Schedule, w.sj.Spec.Schedules = "", []string{"*/2 * * * *", "*/3 * * * *"}
	w.until(topOfTheHour.Add(time.Second), topOfTheHour.Add(10*time.Minute))
	// 10:02, 10:03, 10:04, 10:06 (both), 10:08, 10:09.
	if want := minutes(topOfTheHour, 2, 3, 4, 6, 8, 9); !slices.Equal(w.started, want) {
		t.Errorf("started %s\nwant    %s", formatTimes(w.started), formatTimes(want))
	}
	if got := w.sj.Status.EffectiveSchedule; got != "*/2 * * * *; */3 * * * *" {
		t.Errorf("effectiveSchedule %q", got)
	}
	if next := w.sj.Status.NextScheduleTime; next == nil || !next.Time.Equal(topOfTheHour.Add(10*time.Minute)) {
		t.Errorf("nextScheduleTime %v, want 10:10", next)
	}
}

// TestSeveralSchedulesWithABadEntry: an entry that cannot run (stored
// without admission) stops the ScheduledJob with Ready naming the entry.
func TestSeveralSchedulesWithABadEntry(t *testing.T) {
	sj := scheduledJob("", justBeforeTheHour)
	sj.Spec.Schedules = []string{"0 * * * *", "0 0 30 2 *"}
	out := succeed(Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(time.Second)}))
	c := ready(out.Status)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonInvalidSchedule || c.Message != `spec.schedules[1] "0 0 30 2 *": never fires: no allowed month has an allowed day` {
		t.Errorf("Ready %+v", c)
	}
}
