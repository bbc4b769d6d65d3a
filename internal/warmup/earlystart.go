package warmup

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// WaitContainerName is the init container that holds EarlyStart pods.
const WaitContainerName = "ontime-wait"

// HoldUntil turns job, the run scheduled at scheduled, into an EarlyStart
// run created at now: an init container running `ontime wait --until
// <scheduled>` from image, first among the init containers, keeps its pods
// from starting before the scheduled time, while they already hold their
// nodes. The pods carry the warm-up labels (so the controller sees them
// placed) and ReleaseAtAnnotation. activeDeadlineSeconds, which counts from
// the Job's start, grows by the wait, so that the run gets the time it
// would have had.
func HoldUntil(job *batchv1.Job, owner Owner, scheduled, now time.Time, image string) {
	pod := &job.Spec.Template
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	for k, v := range warmUpLabels(owner, v1alpha1.WarmUpEarlyStartPod, scheduled) {
		pod.Labels[k] = v
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	release := scheduled.UTC().Format(time.RFC3339)
	pod.Annotations[v1alpha1.ReleaseAtAnnotation] = release
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
	wait := corev1.Container{
		Name:            WaitContainerName,
		Image:           image,
		Args:            []string{"wait", "--until", release},
		Resources:       corev1.ResourceRequirements{Requests: small, Limits: small.DeepCopy()},
		SecurityContext: restrictedContainer(),
	}
	pod.Spec.InitContainers = append([]corev1.Container{wait}, pod.Spec.InitContainers...)
	if deadline := job.Spec.ActiveDeadlineSeconds; deadline != nil {
		waitSeconds := int64((max(scheduled.Sub(now), 0) + time.Second - 1) / time.Second)
		*deadline += waitSeconds
	}
}
