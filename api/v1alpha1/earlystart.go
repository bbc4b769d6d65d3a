package v1alpha1

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// EarlyStartWaitVolume is the emptyDir into which an EarlyStart pod's init
// container installs `ontime-wait` when the run's containers wait in it.
const EarlyStartWaitVolume = "ontime-wait"

// EarlyStartHeldInInitContainer says why an EarlyStart run of pods shaped
// by spec is held in an init container rather than in its own containers,
// naming the pod spec's field; "" when it is not. Containers wait only when nothing
// the user wrote would run before the scheduled time or notice the wait:
// every container names its command (the image's entrypoint is not known
// here, and `ontime-wait` must exec it), none has a liveness or startup
// probe (which would fail, and kill it, during the wait) or a postStart
// hook, and the pod has no init containers of its own (which must run
// after the scheduled time, as they would without warm-up).
func EarlyStartHeldInInitContainer(spec *corev1.PodSpec) string {
	if len(spec.InitContainers) > 0 {
		return "initContainers is set"
	}
	if slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == EarlyStartWaitVolume }) {
		return "volumes has one named " + EarlyStartWaitVolume
	}
	for i, c := range spec.Containers {
		container := fmt.Sprintf("containers[%d] (%s)", i, c.Name)
		switch {
		case len(c.Command) == 0:
			return container + " names no command"
		case c.LivenessProbe != nil:
			return container + " has a livenessProbe"
		case c.StartupProbe != nil:
			return container + " has a startupProbe"
		case c.Lifecycle != nil && c.Lifecycle.PostStart != nil:
			return container + " has a postStart hook"
		}
	}
	return ""
}
