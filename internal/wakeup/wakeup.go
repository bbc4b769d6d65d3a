// Package wakeup says when a controller looks at an object again without
// an event: at the soonest of the times its decision named. It is pure:
// the reconcile result that carries the delay is internal/controller/requeue's.
package wakeup

import "time"

// Delay is the delay from now until the soonest of the wake-up times, at
// least a millisecond (a time already past is looked at again at once), or
// 0 when there is none (a zero time is none): the controller then waits
// for a change to the object. Every controller computes its requeue with
// it.
func Delay(now time.Time, wake ...time.Time) time.Duration {
	var after time.Duration
	for _, t := range wake {
		if t.IsZero() {
			continue
		}
		if d := max(t.Sub(now), time.Millisecond); after == 0 || d < after {
			after = d
		}
	}
	return after
}
