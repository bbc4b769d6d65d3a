//go:build integration

package scheduledjob

import (
	"slices"
	"testing"
	"time"
)

// TestSeveralSchedulesRunAtTheirUnion: a ScheduledJob with spec.schedules
// every 2 and every 3 minutes, reconciled at each minute of a quarter of
// an hour on a fake clock, starts a run at each minute either has, one at
// the minutes both have, and its status lists the entries.
func TestSeveralSchedulesRunAtTheirUnion(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "listed", "")
	sj.Spec.Schedules = []string{"*/2 * * * *", "*/3 * * * *"}
	create(t, sj)
	sj = get(t, sj)
	start := sj.CreationTimestamp.Time.Truncate(6 * time.Minute).Add(6 * time.Minute) // both have it
	var want []string
	for m := 0; m < 15; m++ {
		at := start.Add(time.Duration(m) * time.Minute)
		reconcileAt(t, get(t, sj), at.Add(100*time.Millisecond))
		if m%2 == 0 || m%3 == 0 {
			want = append(want, sj.JobName(at))
		}
	}
	got := jobsOf(t, ns, sj)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Jobs %v\nwant %v", got, want)
	}
	if effective := get(t, sj).Status.EffectiveSchedule; effective != "*/2 * * * *; */3 * * * *" {
		t.Errorf("effectiveSchedule %q", effective)
	}
}
