package warmup

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// FirstStart returns when the first of the pods' containers started
// running (init containers do not count: an EarlyStart pod's wait is not
// its start), in whole seconds as the pods report it.
func FirstStart(pods []*corev1.Pod) (time.Time, bool) {
	_, first, ok := firstStarted(pods)
	return first, ok
}

// firstStarted returns the pod whose container started running first, and
// when.
func firstStarted(pods []*corev1.Pod) (*corev1.Pod, time.Time, bool) {
	var first time.Time
	var firstPod *corev1.Pod
	for _, pod := range pods {
		if started, ok := containersStarted(pod); ok && (first.IsZero() || started.Before(first)) {
			first, firstPod = started, pod
		}
	}
	return firstPod, first, firstPod != nil
}

// containersStarted returns when the first of pod's containers started
// running.
func containersStarted(pod *corev1.Pod) (time.Time, bool) {
	var first time.Time
	for _, status := range pod.Status.ContainerStatuses {
		started := startedAt(status)
		if !started.IsZero() && (first.IsZero() || started.Before(first)) {
			first = started
		}
	}
	return first, !first.IsZero()
}

// startedAt is when a container started running, running still or
// finished; zero if it has not.
func startedAt(status corev1.ContainerStatus) time.Time {
	switch state := status.State; {
	case state.Running != nil:
		return state.Running.StartedAt.Time
	case state.Terminated != nil:
		return state.Terminated.StartedAt.Time
	}
	return time.Time{}
}

// startMeasureWindow bounds how long after a run's scheduled time its
// start is looked for: a run whose pods never ran is not measured.
const startMeasureWindow = time.Hour

// RunToMeasure returns, among a ScheduledJob's or CronJob's Jobs, the one
// of the latest scheduled run after measured (the last run whose start was
// recorded) and not in the future, once it reports a pod ready or finished,
// within an hour of its scheduled time; nil when there is none. Its pods
// then tell when it started (MeasureStart).
func RunToMeasure(jobs []*batchv1.Job, measured, now time.Time) *batchv1.Job {
	var latest *batchv1.Job
	var latestAt time.Time
	for _, job := range jobs {
		if at, ok := v1alpha1.ScheduledTime(job); ok && !v1alpha1.IsTriggered(job) && !at.After(now) && at.After(latestAt) {
			latest, latestAt = job, at
		}
	}
	if latest == nil || now.Sub(latestAt) > startMeasureWindow || !latestAt.After(measured) {
		return nil
	}
	s := latest.Status
	if (s.Ready != nil && *s.Ready > 0) || s.Succeeded > 0 || s.Failed > 0 {
		return latest
	}
	return nil
}

// MeasureStart says when the run of job started, from its pods (those the
// Job controls among pods), how late that was, and where the lateness went
// (Phases; node is the first-started pod's node when NodeToRead named one,
// or nil). A run never starts before its scheduled time: an EarlyStart
// container that waits in ontime-wait is running during the lead, and its
// command starts when the wait execs it, at the scheduled time, which is
// what is recorded then.
func MeasureStart(job *batchv1.Job, pods []*corev1.Pod, node *corev1.Node) (*v1alpha1.RunStart, bool) {
	if job == nil {
		return nil, false
	}
	scheduled, ok := v1alpha1.ScheduledTime(job)
	if !ok {
		return nil, false
	}
	pod, started, ok := firstStarted(ownPods(job, pods))
	if !ok {
		return nil, false
	}
	phases := Phases(scheduled, started, job, pod, node)
	if started.Before(scheduled) {
		started = scheduled
	}
	return &v1alpha1.RunStart{ScheduledTime: metav1.NewTime(scheduled), StartTime: metav1.NewTime(started),
		Lateness: metav1.Duration{Duration: started.Sub(scheduled)}, Phases: phases}, true
}

// ownPods returns the pods among pods that job controls.
func ownPods(job *batchv1.Job, pods []*corev1.Pod) []*corev1.Pod {
	var own []*corev1.Pod
	for _, pod := range pods {
		if metav1.IsControlledBy(pod, job) {
			own = append(own, pod)
		}
	}
	return own
}

// RecordRunStart returns recent (a status's recentRunStarts, newest
// first) with start in front, at most v1alpha1.MaxRecentRunStarts long; a
// run measured again replaces its entry.
func RecordRunStart(recent []v1alpha1.RunStart, start v1alpha1.RunStart) []v1alpha1.RunStart {
	out := []v1alpha1.RunStart{start}
	for _, r := range recent {
		if len(out) == v1alpha1.MaxRecentRunStarts {
			break
		}
		if !r.ScheduledTime.Equal(&start.ScheduledTime) {
			out = append(out, r)
		}
	}
	return out
}
