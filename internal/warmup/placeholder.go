package warmup

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Annotations that keep autoscalers from taking a placeholder's node away
// while it waits for its run.
const (
	// karpenterDoNotDisrupt stops Karpenter's consolidation and drift from
	// disrupting the node.
	karpenterDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	// clusterAutoscalerSafeToEvict "false" stops cluster-autoscaler from
	// scaling the node down.
	clusterAutoscalerSafeToEvict = "cluster-autoscaler.kubernetes.io/safe-to-evict"
)

// doNotDisrupt are the annotations that ask Karpenter and cluster-autoscaler
// to leave a pod's node alone.
func doNotDisrupt() map[string]string {
	return map[string]string{karpenterDoNotDisrupt: "true", clusterAutoscalerSafeToEvict: "false"}
}

// PlaceholderName names placeholder i of the run whose Job is jobName.
// Names are deterministic, so that creating one twice fails with
// AlreadyExists instead of placing two.
func PlaceholderName(jobName string, i int) string {
	return jobName + "-placeholder-" + strconv.Itoa(i)
}

// Placeholders builds the placeholder pods of the run scheduled at
// scheduled, whose Job is named jobName: one per pod the run places at once
// (PodsPerRun), each requesting what one of the run's pods requests and
// constrained to the same nodes.
func Placeholders(owner Owner, jobName string, scheduled time.Time, opts Options) []*corev1.Pod {
	n := int(PodsPerRun(&owner.Template.Spec))
	pods := make([]*corev1.Pod, 0, n)
	for i := range n {
		pods = append(pods, placeholder(owner, PlaceholderName(jobName, i), scheduled, opts))
	}
	return pods
}

func placeholder(owner Owner, name string, scheduled time.Time, opts Options) *corev1.Pod {
	template := &owner.Template.Spec.Template
	requests := EffectiveRequests(&template.Spec)
	labels := map[string]string{}
	// The run's pod labels too, so that pod affinity, anti-affinity and
	// topology spread constraints count placeholders as the run's pods.
	for k, v := range template.Labels {
		labels[k] = v
	}
	for k, v := range warmUpLabels(owner, v1alpha1.WarmUpPlaceholderPod, scheduled) {
		labels[k] = v
	}
	// A copy: the pod is decoded into when created, and must not share
	// maps with the (cached) owner.
	spec := template.Spec.DeepCopy()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       owner.Namespace,
			Labels:          labels,
			Annotations:     doNotDisrupt(),
			OwnerReferences: []metav1.OwnerReference{owner.Reference},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "placeholder",
				Image: opts.Image,
				// Limits equal requests: extended resources such as GPUs
				// require it, and the pause container uses neither.
				Resources:       corev1.ResourceRequirements{Requests: requests, Limits: requests.DeepCopy()},
				SecurityContext: restrictedContainer(),
			}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			PriorityClassName:             opts.PriorityClassName,
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			// Where the run's pods may go: the same nodes, zones and
			// runtime (whose overhead admission adds to both alike).
			NodeSelector:              spec.NodeSelector,
			Affinity:                  spec.Affinity,
			Tolerations:               spec.Tolerations,
			TopologySpreadConstraints: spec.TopologySpreadConstraints,
			RuntimeClassName:          spec.RuntimeClassName,
			SchedulerName:             spec.SchedulerName,
			NodeName:                  spec.NodeName,
			ImagePullSecrets:          spec.ImagePullSecrets,
		},
	}
}

// warmUpLabels are the labels every warm-up pod carries: what it is, whose
// it is and which run it is for.
func warmUpLabels(owner Owner, kind string, scheduled time.Time) map[string]string {
	return map[string]string{
		v1alpha1.WarmUpLabel:    kind,
		v1alpha1.OwnerKindLabel: owner.Kind,
		v1alpha1.OwnerNameLabel: owner.Name,
		v1alpha1.OwnerUIDLabel:  owner.UID,
		v1alpha1.RunLabel:       v1alpha1.RunLabelValue(scheduled),
	}
}

// EffectiveRequests is what the scheduler reserves for one pod of spec:
// the larger of the largest init container (with the sidecars started
// before it) and the sum of the containers and sidecars, or the pod-level
// requests, computed by Kubernetes' own helper. Pod overhead is left out:
// a placeholder with the same runtimeClassName gets the same overhead at
// admission. Limits without requests count as requests, as the API server
// defaults them.
func EffectiveRequests(spec *corev1.PodSpec) corev1.ResourceList {
	pod := &corev1.Pod{Spec: *spec.DeepCopy()}
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			defaultRequestsToLimits(&containers[i].Resources)
		}
	}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{ExcludeOverhead: true})
}

func defaultRequestsToLimits(r *corev1.ResourceRequirements) {
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; ok {
			continue
		}
		if r.Requests == nil {
			r.Requests = corev1.ResourceList{}
		}
		r.Requests[name] = limit.DeepCopy()
	}
}

// restrictedContainer passes the "restricted" Pod Security Standard, so
// that warm-up pods run in namespaces that enforce it.
func restrictedContainer() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To[int64](65535),
		ReadOnlyRootFilesystem:   ptr.To(true),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}
