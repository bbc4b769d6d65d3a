// Package warmup decides how capacity is brought up before a run, as pure
// functions of the owner (a ScheduledJob or an annotated CronJob), its runs
// and the pods already placed; the controllers do the I/O.
//
// Three strategies exist. Placeholder creates low-priority pods shaped like
// the run's pods at lead before the run (Placeholders); the autoscaler adds
// nodes for them, and the run's pods, created at the scheduled time exactly
// as without warm-up, preempt them: the scheduler nominates the node the
// preempted placeholder held, so no other pod can take the capacity in
// between. Remaining placeholders are deleted once the run's pods are all
// ready, and at the latest Options.Hold after the scheduled time. EarlyStart
// creates the run's Job lead early and holds its pods until the scheduled
// time (HoldUntil). CapacityBuffer asks the autoscaler for the room with a
// CapacityBuffer of a PodTemplate shaped like the run's pods, deleted as
// the run starts (NewBufferRequest).
//
// Under lead Auto, ChooseLead learns each warm-up's lead from the last
// one.
//
// Decide says which placeholders to create and delete, follows the
// warm-up's progress (State) and says what to report.
package warmup

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Options are a warm-up's settings, defaults applied: the spec's Meaning
// (v1alpha1.ScheduledJob.Meaning, v1alpha1.CronJobMeaning) works them out.
type Options = v1alpha1.WarmUpSettings

// Owner is what warm-up pods belong to: a ScheduledJob or a CronJob.
type Owner struct {
	Kind      string // "ScheduledJob" or "CronJob"
	Name      string
	Namespace string
	UID       string
	// Reference is the owner reference warm-up pods carry.
	Reference metav1.OwnerReference
	// Template is the Job template of the owner's runs.
	Template *batchv1.JobTemplateSpec
}

// OwnerOf returns the Owner for obj of the given kind. A ScheduledJob
// controls its placeholders; a CronJob only owns them (its controller
// manages Jobs, not pods), so that they are deleted with it.
func OwnerOf(obj metav1.Object, gvk schema.GroupVersionKind, template *batchv1.JobTemplateSpec) Owner {
	ref := *metav1.NewControllerRef(obj, gvk)
	if gvk.Kind != "ScheduledJob" {
		ref.Controller, ref.BlockOwnerDeletion = nil, nil
	}
	return Owner{Kind: gvk.Kind, Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: string(obj.GetUID()), Reference: ref, Template: template}
}

// PodsPerRun is how many pods a run places at once: the Job's parallelism
// (default 1), bounded by its completions.
func PodsPerRun(spec *batchv1.JobSpec) int32 {
	n := int32(1)
	if spec.Parallelism != nil {
		n = *spec.Parallelism
	}
	if spec.Completions != nil && *spec.Completions < n {
		n = *spec.Completions
	}
	return max(n, 0)
}

// PodSelector selects warm-up pods, and no others: the controllers' cache
// holds these pods only, so that its memory does not grow with the
// cluster's pods.
func PodSelector() labels.Selector {
	warmUpPods, err := labels.NewRequirement(v1alpha1.WarmUpLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid requirement
	}
	return labels.NewSelector().Add(*warmUpPods)
}
