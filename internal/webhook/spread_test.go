package webhook

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/internal/spread"
)

// TestStartsMemo: the memoized load is the load computed from scratch, on
// the first admission and the next, and follows a zone's UTC offset.
func TestStartsMemo(t *testing.T) {
	schedules := []schedule{
		{key: "a/every-hour", expression: "7 * * * *"},
		{key: "a/hashed", expression: "H 3 * * *"},
		{key: "b/new-york", expression: "30 2 * * *", timeZone: ptr.To("America/New_York")},
		{key: "b/run-once", expression: ""},
		{key: "b/bad", expression: "61 * * * *"},
	}
	memo := &startsMemo{}
	for _, now := range []time.Time{
		time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 15, 12, 1, 0, 0, time.UTC), // memoized
		time.Date(2026, 7, 15, 12, 0, 0, 0, time.UTC), // New York on daylight saving time
	} {
		var members []spread.Member
		for _, s := range schedules {
			if m, ok := memberOf(s.key, s.expression, s.timeZone); ok {
				if _, err := m.Parse(); err == nil {
					members = append(members, m)
				}
			}
		}
		want, err := spread.LoadOf(members, now)
		if err != nil {
			t.Fatal(err)
		}
		if got := memo.load(schedules, now); *got != *want {
			t.Errorf("at %s: the memoized load differs from the computed one", now)
		}
	}
	if len(memo.minutes) != 5 {
		t.Errorf("memoized %d schedules, want 5: four parsed or refused once, New York again for its summer offset", len(memo.minutes))
	}
}
