package wakeup

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/handler"
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

// TestAfterRanksWithEvents: a wake-up's result names the priority of an
// event's reconcile, so that the controller's queue does not keep the
// request's own (the first listing's, below the events').
func TestAfterRanksWithEvents(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Millisecond, time.Hour} {
		result := After(delay)
		if result.RequeueAfter != delay {
			t.Errorf("After(%v): requeue after %v", delay, result.RequeueAfter)
		}
		if result.Priority == nil || *result.Priority != 0 || *result.Priority <= handler.LowPriority {
			t.Errorf("After(%v): priority %v, want an event's 0, above the first listing's %d", delay, result.Priority, handler.LowPriority)
		}
	}
}
