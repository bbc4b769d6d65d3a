package requeue

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/handler"
)

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
