// Package requeue is how a controller asks to look at an object again: a
// reconcile's result at the priority of a wake-up. The time itself comes
// from internal/wakeup, which knows nothing of controller-runtime.
package requeue

import (
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Priority is a wake-up's place in a controller's work queue: that of the
// reconciles events ask for (0), first come first served, as in
// client-go's work queue. Named because controller-runtime's priority
// queue (the default since v0.23) keeps an item's priority when its
// reconcile names none, so that every wake-up after a restart would keep
// the low priority of the cache's first listing (handler.LowPriority):
// twenty runs due at one instant then waited behind the status writes of
// the runs started before them. Not above the events': a wake-up that
// comes back at once (a run held, a cache that lags) would then starve
// them.
const Priority = 0

// After is the result of a reconcile that looks again after delay (0: only
// on an event), at the priority of a wake-up.
func After(delay time.Duration) reconcile.Result {
	return reconcile.Result{RequeueAfter: delay, Priority: ptr.To(Priority)}
}
