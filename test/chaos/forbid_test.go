//go:build chaos

package chaos

import (
	"fmt"
	"testing"
	"time"
)

// TestForbidStart: when a one-at-a-time run could start, from the runs of
// its ScheduledJob before it, scheduled or asked for by hand. The case
// that made it count runs by hand: in CI on 2026-11-28 a leader that took
// over at 00:07:55 started the request of 00:07:20 then; that run finished
// at 00:08:26, and the run of 00:08:00, rightly held until then, was
// counted 26.9 s late.
func TestForbidStart(t *testing.T) {
	at := func(clock string) time.Time {
		v, err := time.Parse(time.TimeOnly, clock)
		if err != nil {
			t.Fatal(err)
		}
		return time.Date(2026, 11, 28, v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC)
	}
	run := func(clock string) string { return fmt.Sprintf("job-0019-%d", at(clock).Unix()/60) }
	const byHand = "job-0019-m04a5ba8"
	for _, tc := range []struct {
		name      string
		created   map[string]string
		finished  map[string]string
		wantStart string
		wantHeld  bool
	}{
		{"the run before finished in time", map[string]string{run("00:07:00"): "00:07:09", run("00:08:00"): "00:08:00.3"},
			map[string]string{run("00:07:00"): "00:07:25"}, "00:08:00", false},
		{"the run before finished late", map[string]string{run("00:07:00"): "00:07:09", run("00:08:00"): "00:08:12.3"},
			map[string]string{run("00:07:00"): "00:08:12"}, "00:08:12", false},
		{"a run by hand created before it finished late", map[string]string{run("00:07:00"): "00:07:09", byHand: "00:07:55.4", run("00:08:00"): "00:08:26.9"},
			map[string]string{run("00:07:00"): "00:07:25", byHand: "00:08:26"}, "00:08:26", false},
		{"a run by hand created after it does not hold it", map[string]string{run("00:07:00"): "00:07:09", run("00:08:00"): "00:08:00.3", byHand: "00:08:20"},
			map[string]string{run("00:07:00"): "00:07:25", byHand: "00:08:40"}, "00:08:00", false},
		{"a run by hand still running holds a run never created", map[string]string{byHand: "00:07:55.4"},
			map[string]string{}, "00:08:00", true},
		{"a run by hand that finished past the window less the grace holds it", map[string]string{byHand: "00:07:55.4"},
			map[string]string{byHand: "00:08:57"}, "00:08:57", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created, finished := map[string][]time.Time{}, map[string]time.Time{}
			for name, clock := range tc.created {
				created[name] = []time.Time{at(clock)}
			}
			for name, clock := range tc.finished {
				finished[name] = at(clock)
			}
			start, held := forbidStart("job-0019", at("00:08:00"), triggeredJobs(created)["job-0019"], created, finished, time.Minute, 5*time.Second)
			if !start.Equal(at(tc.wantStart)) || held != tc.wantHeld {
				t.Errorf("startable from %s, held %t; want %s, %t", start.Format(time.TimeOnly), held, tc.wantStart, tc.wantHeld)
			}
		})
	}
}

// TestForbidOverlaps: a run created before a run created earlier, by hand
// or scheduled, finished is an overlap; one created after is not.
func TestForbidOverlaps(t *testing.T) {
	minute := time.Date(2026, 11, 28, 0, 8, 0, 0, time.UTC)
	scheduled := fmt.Sprintf("job-0019-%d", minute.Unix()/60)
	const byHand = "job-0019-m04a5ba8"
	created := map[string][]time.Time{byHand: {minute.Add(-5 * time.Second)}, scheduled: {minute.Add(27 * time.Second)}}
	from, to := minute, minute.Add(time.Minute)
	if got := forbidOverlaps("job-0019", from, to, []string{byHand}, created, map[string]time.Time{byHand: minute.Add(26 * time.Second)}); len(got) != 0 {
		t.Errorf("a run created after the run by hand finished: overlaps %q, want none", got)
	}
	if got := forbidOverlaps("job-0019", from, to, []string{byHand}, created, map[string]time.Time{byHand: minute.Add(28 * time.Second)}); len(got) != 1 {
		t.Errorf("a run created before the run by hand finished: overlaps %q, want it", got)
	}
	if got := forbidOverlaps("job-0019", from, to, []string{byHand}, created, map[string]time.Time{}); len(got) != 1 {
		t.Errorf("a run created beside a run by hand never finished: overlaps %q, want it", got)
	}
}
