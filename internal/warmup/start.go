package warmup

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// FirstStart returns when the first of the pods' containers started
// running (init containers do not count: an EarlyStart pod's wait is not
// its start), in whole seconds as the pods report it.
func FirstStart(pods []*corev1.Pod) (time.Time, bool) {
	var first time.Time
	for _, pod := range pods {
		for _, status := range pod.Status.ContainerStatuses {
			var started time.Time
			switch state := status.State; {
			case state.Running != nil:
				started = state.Running.StartedAt.Time
			case state.Terminated != nil:
				started = state.Terminated.StartedAt.Time
			}
			if !started.IsZero() && (first.IsZero() || started.Before(first)) {
				first = started
			}
		}
	}
	return first, !first.IsZero()
}
