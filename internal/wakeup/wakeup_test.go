package wakeup

import (
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		wake []time.Time
		want time.Duration
	}{
		"nothing to wait for": {want: 0},
		"the soonest":         {wake: []time.Time{now.Add(time.Hour), now.Add(time.Minute), now.Add(2 * time.Minute)}, want: time.Minute},
		"already past":        {wake: []time.Time{now.Add(-time.Second), now.Add(time.Minute)}, want: time.Millisecond},
		"a zero time is none": {wake: []time.Time{{}, now.Add(time.Minute)}, want: time.Minute},
		"only zero times":     {wake: []time.Time{{}}, want: 0},
	}
	for name, tc := range tests {
		if got := Delay(now, tc.wake...); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
