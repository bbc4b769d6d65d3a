package warmup

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// A run's lateness, from its scheduled time to its first container
// running, is split into phases by the instants at which each ended, as
// the Job, its first-started pod and that pod's node record them. The
// phases add up to the lateness by construction: each takes the part of
// [scheduled time, start] between the end of the phase before it and its
// own end. The instants are whole seconds written by different components
// (the API server, kube-controller-manager, the kubelet), so an earlier
// phase's end is never taken to be after a later one's: each end is
// bounded by the ends after it.

// phaseEnd is the instant at which a phase of a run's start ended.
type phaseEnd struct {
	phase v1alpha1.RunPhaseName
	at    time.Time
}

// schedulingWaitToReadNode is how long a pod must have waited to be
// scheduled for its node to be read: under it, no node can have been
// provisioned for it, and the run costs no extra request.
const schedulingWaitToReadNode = 2 * time.Second

// NodeToRead names the node whose creation and readiness split the first-
// started pod of job's run between waiting for a node and being scheduled,
// when that pod waited long enough to be scheduled for a new node to be
// the cause; "" when none is needed.
func NodeToRead(job *batchv1.Job, pods []*corev1.Pod) string {
	pod, _, ok := firstStarted(ownPods(job, pods))
	if !ok || pod.Spec.NodeName == "" {
		return ""
	}
	scheduled, ok := conditionTrueAt(pod.Status.Conditions, corev1.PodScheduled)
	if !ok || scheduled.Sub(pod.CreationTimestamp.Time) < schedulingWaitToReadNode {
		return ""
	}
	return pod.Spec.NodeName
}

// Phases splits the lateness of the run scheduled at scheduled, whose Job
// is job and whose first container ran in pod at started, into phases (see
// RunPhaseName), in order; only those that took time are returned. node is
// pod's node, or nil when it was not read: a wait for a node is then
// counted as Scheduling.
func Phases(scheduled, started time.Time, job *batchv1.Job, pod *corev1.Pod, node *corev1.Node) []v1alpha1.RunPhase {
	ends := phaseEnds(started, job, pod, node)
	boundEachByTheNext(ends)
	// Every end is at most started, so the cursor passes started only when
	// the run started before its time (EarlyStart), and nothing is spent.
	spent := map[v1alpha1.RunPhaseName]time.Duration{}
	cursor := scheduled
	for _, end := range ends {
		at := latest(end.at, cursor)
		spent[end.phase] += at.Sub(cursor)
		cursor = at
	}
	var phases []v1alpha1.RunPhase
	for _, name := range v1alpha1.RunPhases {
		if d := spent[name]; d > 0 {
			phases = append(phases, v1alpha1.RunPhase{Name: name, Duration: metav1.Duration{Duration: d}})
		}
	}
	return phases
}

// phaseEnds lists the instants ending each phase of pod's start, in the
// order they happen; the last is its first container running (started).
// Instants the objects do not record (an absent condition, a node that was
// there before the pod) end their phase where the one before it ended.
func phaseEnds(started time.Time, job *batchv1.Job, pod *corev1.Pod, node *corev1.Node) []phaseEnd {
	created := job.CreationTimestamp.Time
	admitted := created
	if s := job.Status.StartTime; s != nil {
		admitted = s.Time // set when the Job controller first runs it unsuspended
	}
	podCreated := pod.CreationTimestamp.Time
	scheduled, bound := conditionTrueAt(pod.Status.Conditions, corev1.PodScheduled)
	nodeReady := podCreated
	if node != nil && node.CreationTimestamp.After(podCreated) {
		nodeReady = nodeUp(node, scheduled, bound)
	}
	if !bound {
		scheduled = nodeReady
	}
	sandbox, ok := conditionTrueAt(pod.Status.Conditions, corev1.PodReadyToStartContainers)
	if !ok {
		sandbox = scheduled
	}
	ends := []phaseEnd{
		{v1alpha1.PhaseController, created},
		{v1alpha1.PhaseConcurrencyGroup, admitted},
		{v1alpha1.PhaseJobController, podCreated},
		{v1alpha1.PhaseNode, nodeReady},
		{v1alpha1.PhaseScheduling, scheduled},
		{v1alpha1.PhasePodSandbox, sandbox},
	}
	for _, init := range pod.Status.InitContainerStatuses {
		from, to := initContainerRan(init)
		if from.IsZero() {
			continue
		}
		ends = append(ends, phaseEnd{v1alpha1.PhaseImagePull, from}, phaseEnd{v1alpha1.PhaseInitContainers, to})
	}
	return append(ends, phaseEnd{v1alpha1.PhaseImagePull, started})
}

// initContainerRan returns when an init container started and finished;
// a sidecar (an init container that keeps running) counts until it
// started, when the next container may start.
func initContainerRan(status corev1.ContainerStatus) (from, to time.Time) {
	switch state := status.State; {
	case state.Terminated != nil:
		return state.Terminated.StartedAt.Time, state.Terminated.FinishedAt.Time
	case state.Running != nil:
		return state.Running.StartedAt.Time, state.Running.StartedAt.Time
	}
	return time.Time{}, time.Time{}
}

// boundEachByTheNext makes the ends non-decreasing, bounding each by every
// end after it: the last, the first container running, is the one instant
// the lateness is measured to.
func boundEachByTheNext(ends []phaseEnd) {
	for i := len(ends) - 2; i >= 0; i-- {
		if ends[i].at.After(ends[i+1].at) {
			ends[i].at = ends[i+1].at
		}
	}
}

// conditionTrueAt returns when a pod condition last became True.
func conditionTrueAt(conditions []corev1.PodCondition, kind corev1.PodConditionType) (time.Time, bool) {
	for _, c := range conditions {
		if c.Type == kind && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// nodeUp returns when node, created after the pod, was Ready: the pod
// waited for it until then. A node Ready again after a flap later than the
// pod's binding (scheduled, when bound) was up when it was created.
func nodeUp(node *corev1.Node, scheduled time.Time, bound bool) time.Time {
	ready, ok := conditionReadyAt(node)
	if !ok || (bound && ready.After(scheduled)) {
		return node.CreationTimestamp.Time
	}
	return ready
}

// conditionReadyAt returns when node last became Ready.
func conditionReadyAt(node *corev1.Node) (time.Time, bool) {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
