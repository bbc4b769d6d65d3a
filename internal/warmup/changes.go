package warmup

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Changes are the warm-up objects a decision creates and deletes, for the
// one executor that carries them out for every kind of owner
// (internal/controller/warmupobjects).
type Changes struct {
	// CreatePods and DeletePods are placeholder pods.
	CreatePods []*corev1.Pod
	DeletePods []*corev1.Pod
	// CreateBuffers and DeleteBuffers are CapacityBuffers, each with its
	// PodTemplate; BufferAPI is the version of their API to delete with.
	CreateBuffers []BufferRequest
	DeleteBuffers []Buffer
	BufferAPI     BufferAPI
}

// RemoveAll deletes every placeholder pod and CapacityBuffer of an owner
// that no longer warms up (warm-up turned off, the owner being deleted or
// unreadable). EarlyStart pods are not warm-up's to delete: they belong to
// a run's Job.
func RemoveAll(pods []*corev1.Pod, buffers []Buffer, api BufferAPI) Changes {
	changes := Changes{BufferAPI: api}
	for _, pod := range pods {
		if pod.Labels[v1alpha1.WarmUpLabel] == v1alpha1.WarmUpPlaceholderPod && pod.DeletionTimestamp == nil {
			changes.DeletePods = append(changes.DeletePods, pod)
		}
	}
	for _, buffer := range buffers {
		if !buffer.Deleting {
			changes.DeleteBuffers = append(changes.DeleteBuffers, buffer)
		}
	}
	return changes
}

// Applied is what became of carrying out Changes.
type Applied struct {
	// Failed are the warm-up objects that could not be created, in the
	// order they were tried.
	Failed []Failure
	// Refused is set when the cluster refused one (Refused): the pods after
	// it were not tried, and warm-up is tried again at RefusedRetry.
	Refused bool
}

// Failure is a warm-up object that could not be created, and why.
type Failure struct {
	// Object names it: "placeholder pod NAME" or "CapacityBuffer NAME".
	Object string
	Err    error
}

// Events reports each failure: a refusal says the run starts without its
// warm-up; any other failure is retried with the reconcile's backoff.
func (a Applied) Events() []Event {
	events := make([]Event, 0, len(a.Failed))
	for _, f := range a.Failed {
		events = append(events, f.Event())
	}
	return events
}

// Event reports the failure.
func (f Failure) Event() Event {
	if Refused(f.Err) {
		return RefusedEvent(f.Err)
	}
	return FailedEvent(f.Err)
}

// Message says what failed, for a condition.
func (f Failure) Message() string {
	if Refused(f.Err) {
		return f.Object + " refused, the run starts at its time without warm-up: " + f.Err.Error()
	}
	return "creating " + f.Object + " failed: " + f.Err.Error()
}
