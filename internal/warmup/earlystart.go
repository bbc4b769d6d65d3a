package warmup

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// WaitContainerName is the init container of EarlyStart pods: it either
// holds the pod until the scheduled time or installs ontime-wait for the
// run's containers to wait in (HoldUntil).
const WaitContainerName = "ontime-wait"

// WaitCommand is ontime-wait (cmd/ontime-wait) in ontime's image: the
// standard library only, about 2 MB, where /ontime is 57 MB.
const WaitCommand = "/ontime-wait"

// waitVolume is the emptyDir WaitContainerName copies ontime-wait into
// when the run's containers wait in it; waitBinary is the copy.
const (
	waitVolume    = v1alpha1.EarlyStartWaitVolume
	waitMountPath = "/.ontime-wait"
	waitBinary    = waitMountPath + "/ontime-wait"
)

// HoldUntil turns job, the run scheduled at scheduled, into an EarlyStart
// run created at now, held until the scheduled time in one of two ways:
//
//   - In the run's containers (InContainerWait): the init container copies
//     ontime-wait from image into an emptyDir and exits, and each
//     container's command becomes `ontime-wait --until <scheduled> --
//     <command> <args>`, which execs the command at the scheduled time by
//     the node's clock. The containers are created, and their images
//     pulled, during the lead, so the command starts within milliseconds
//     of its time.
//   - Otherwise, in the init container: `ontime-wait --until <scheduled>`,
//     first among the init containers, keeps the pod's containers from
//     starting before the scheduled time; they start after it by the
//     kubelet's reaction time (it notices the exit at its next relist,
//     once a second, then creates and starts them).
//
// Either way the pods hold their nodes from now, carry the warm-up labels
// (so the controller sees them placed), ReleaseAtAnnotation and the
// autoscalers' do-not-disrupt annotations, a disrupted pod is replaced
// without counting as a failure (ignoreDisruptions), and
// activeDeadlineSeconds, which counts from the Job's start, grows by the
// wait, so that the run gets the time it would have had.
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
	keepFromAutoscalers(pod.Annotations)
	ignoreDisruptions(&job.Spec)
	if InContainerWait(&pod.Spec) {
		waitInContainers(&pod.Spec, image, release)
	} else {
		pod.Spec.InitContainers = append([]corev1.Container{waitContainer(image, "--until", release)}, pod.Spec.InitContainers...)
	}
	if deadline := job.Spec.ActiveDeadlineSeconds; deadline != nil {
		waitSeconds := int64((max(scheduled.Sub(now), 0) + time.Second - 1) / time.Second)
		*deadline += waitSeconds
	}
}

// keepFromAutoscalers asks Karpenter and cluster-autoscaler not to take the
// pod's node away: through the lead the pod waits, idle, and a node that
// looks underutilized would be consolidated under it (seen on make dev's
// Karpenter, consolidateAfter 30s: the Job then ended with three pods for
// one run). The annotations stay for the run, which a Job's pod should have
// anyway; a value the owner set is kept.
func keepFromAutoscalers(annotations map[string]string) {
	for k, v := range doNotDisrupt() {
		if _, set := annotations[k]; !set {
			annotations[k] = v
		}
	}
}

// maxPodFailurePolicyRules is the API server's limit on a Job's
// podFailurePolicy.rules.
const maxPodFailurePolicyRules = 20

// ignoreDisruptions adds, last, a podFailurePolicy rule that ignores a pod
// failed by a disruption (an eviction by a drain or an autoscaler,
// preemption; the pod's DisruptionTarget condition): the Job replaces it
// without counting it against backoffLimit, and the replacement waits
// until the same time, so the run is not late if there is room for it.
// The owner's rules come first and win. A Job may have a podFailurePolicy
// only with restartPolicy Never; with OnFailure a disrupted pod counts as
// one failure, as in any Job.
func ignoreDisruptions(job *batchv1.JobSpec) {
	if job.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		return
	}
	if job.PodFailurePolicy == nil {
		job.PodFailurePolicy = &batchv1.PodFailurePolicy{}
	}
	if len(job.PodFailurePolicy.Rules) >= maxPodFailurePolicyRules {
		return
	}
	job.PodFailurePolicy.Rules = append(job.PodFailurePolicy.Rules, batchv1.PodFailurePolicyRule{
		Action:          batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
	})
}

// InContainerWait says whether an EarlyStart run of pods shaped by spec can
// wait in its own containers, which then run during the lead
// (v1alpha1.EarlyStartHeldInInitContainer says why not).
func InContainerWait(spec *corev1.PodSpec) bool {
	return v1alpha1.EarlyStartHeldInInitContainer(spec) == ""
}

// waitInContainers adds the init container that installs ontime-wait from
// image into the wait volume and makes every container's command wait there
// until release, then exec what it was.
func waitInContainers(spec *corev1.PodSpec, image, release string) {
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: waitVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	install := waitContainer(image, "--until", release, "--install", waitBinary)
	install.VolumeMounts = []corev1.VolumeMount{{Name: waitVolume, MountPath: waitMountPath}}
	spec.InitContainers = []corev1.Container{install}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		c.Args = append(append([]string{"--until", release, "--"}, c.Command...), c.Args...)
		c.Command = []string{waitBinary}
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: waitVolume, MountPath: waitMountPath, ReadOnly: true})
	}
}

// waitContainer is the init container running ontime-wait from image with
// args.
func waitContainer(image string, args ...string) corev1.Container {
	// Small, so that the pod asks the scheduler for no more than its own
	// containers do; requests equal to limits keep a Guaranteed pod
	// Guaranteed. ontime-wait starts and copies itself (2 MB, through the
	// page cache, which counts toward the memory) in well under 10m's
	// share of a second.
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}
	return corev1.Container{
		Name:            WaitContainerName,
		Image:           image,
		Command:         []string{WaitCommand},
		Args:            args,
		Resources:       corev1.ResourceRequirements{Requests: small, Limits: small.DeepCopy()},
		SecurityContext: restrictedContainer(),
	}
}
