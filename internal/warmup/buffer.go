package warmup

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// The CapacityBuffer API of SIG Autoscaling: a buffer names a PodTemplate
// and a number of replicas, and the autoscaler keeps room for that many
// pods of that shape, with virtual pods of its own (nothing runs, nothing
// is preempted). Karpenter implements it behind the feature gate
// CapacityBuffer, cluster-autoscaler with --capacity-buffer-controller-enabled
// and --capacity-buffer-pod-injection-enabled.
const (
	BufferGroup    = "autoscaling.x-k8s.io"
	BufferKind     = "CapacityBuffer"
	BufferResource = "capacitybuffers"
	// bufferProvisioning is the condition the autoscaler sets True once
	// the buffer's pods fit the nodes that exist (reason
	// FitsExistingCapacity), and False while it needs new ones. Karpenter
	// 1.14 counts the NodeClaims it launched as existing: True comes
	// seconds after the launch, before the nodes are Ready.
	bufferProvisioning = "Provisioning"
	// bufferReadyForProvisioning is False when the autoscaler cannot use
	// the buffer (its PodTemplate cannot be read, say).
	bufferReadyForProvisioning = "ReadyForProvisioning"
)

// BufferVersions are the versions of the API ontime speaks, preferred
// first: the request and status fields it uses (podTemplateRef, replicas,
// conditions) are the same in each. Karpenter 1.14 serves v1beta1 (its
// Go constant still says v1alpha1: ask the API server, not the constant).
var BufferVersions = []string{"v1", "v1beta1", "v1alpha1"}

// BufferPoll is how often a buffer whose capacity is not ready yet is read
// again: the controllers do not watch CapacityBuffers (the API may not be
// served when they start, or ever), and autoscalers update the condition
// on a period of their own (Karpenter every 30 s, and after each
// provisioning pass).
const BufferPoll = 5 * time.Second

// BufferAPI is what the cluster serves of the CapacityBuffer API.
type BufferAPI struct {
	// Version is the version to use; "" when none is usable.
	Version string
	// Problem says why none is usable, for the condition and event.
	Problem string
}

// GroupVersionKind is the kind to create buffers as.
func (a BufferAPI) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: BufferGroup, Version: a.Version, Kind: BufferKind}
}

// ChooseBufferAPI picks the version to use among the versions the API
// server serves for autoscaling.x-k8s.io, each with whether its
// capacitybuffers resource is namespaced (ontime creates buffers in the
// owner's namespace, beside the PodTemplate they name).
func ChooseBufferAPI(served map[string]bool) BufferAPI {
	for _, version := range BufferVersions {
		namespaced, ok := served[version]
		switch {
		case !ok:
		case namespaced:
			return BufferAPI{Version: version}
		default:
			return BufferAPI{Problem: fmt.Sprintf("%s/%s %s is cluster-scoped: ontime needs a version whose buffers live in a namespace (v1beta1, served by Karpenter 1.14 and later cluster-autoscaler releases)",
				BufferGroup, version, BufferResource)}
		}
	}
	return BufferAPI{Problem: fmt.Sprintf("the cluster does not serve %s %s (%s): install an autoscaler that implements it and enable it, such as Karpenter with the feature gate CapacityBuffer=true and its CRD; see docs/warmup.md",
		BufferKind, BufferResource, BufferGroup)}
}

// Buffer is a CapacityBuffer ontime created for one run, as last read.
type Buffer struct {
	Namespace, Name string
	// Run is the run's RunLabel value.
	Run      string
	Created  time.Time
	Deleting bool
	// ReadyAt is when the autoscaler reported the buffer's capacity in
	// place (condition Provisioning True): the condition's transition, in
	// whole seconds. Zero until then.
	ReadyAt time.Time
	// Blocked is why the autoscaler cannot use the buffer
	// (ReadyForProvisioning False), "" when nothing is known against it.
	Blocked string
}

// BufferOf reads what warm-up needs of a CapacityBuffer.
func BufferOf(u *unstructured.Unstructured) Buffer {
	b := Buffer{Namespace: u.GetNamespace(), Name: u.GetName(), Run: u.GetLabels()[v1alpha1.RunLabel], Created: u.GetCreationTimestamp().Time, Deleting: u.GetDeletionTimestamp() != nil}
	conditions := bufferConditions(u)
	if c := meta.FindStatusCondition(conditions, bufferProvisioning); c != nil && c.Status == metav1.ConditionTrue {
		b.ReadyAt = c.LastTransitionTime.Time
		if b.ReadyAt.IsZero() {
			b.ReadyAt = b.Created
		}
	}
	if c := meta.FindStatusCondition(conditions, bufferReadyForProvisioning); c != nil && c.Status == metav1.ConditionFalse {
		b.Blocked = c.Reason + ": " + c.Message
	}
	return b
}

// bufferConditions reads status.conditions; a malformed status reads as
// none (an autoscaler's bug must not stop warm-up).
func bufferConditions(u *unstructured.Unstructured) []metav1.Condition {
	items, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	conditions := make([]metav1.Condition, 0, len(items))
	for _, item := range items {
		fields, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fields, &c); err == nil {
			conditions = append(conditions, c)
		}
	}
	return conditions
}

// BufferName names the CapacityBuffer, and its PodTemplate, of the run
// whose Job is jobName: deterministic, so that a second create fails with
// AlreadyExists instead of asking twice.
func BufferName(jobName string) string { return jobName + "-buffer" }

// BufferRequest is a CapacityBuffer to create and the PodTemplate it
// names, created first.
type BufferRequest struct {
	Template *corev1.PodTemplate
	Buffer   *unstructured.Unstructured
}

// NewBufferRequest builds the PodTemplate and CapacityBuffer of the run
// scheduled at scheduled, whose Job is jobName: the template is shaped
// like a placeholder (Placeholders), the buffer asks for as many of it as
// the run places at once. Both are owned by the owner, so that they go
// with it, and labeled like warm-up pods.
func NewBufferRequest(api BufferAPI, owner Owner, jobName string, scheduled time.Time, opts Options) BufferRequest {
	name := BufferName(jobName)
	shape := placeholder(owner, name, scheduled, opts)
	labels := warmUpLabels(owner, v1alpha1.WarmUpCapacityBufferObject, scheduled)
	template := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: owner.Namespace, Labels: labels, OwnerReferences: []metav1.OwnerReference{owner.Reference}},
		// The placeholder's labels, not the buffer's: the autoscaler's
		// virtual pods count for the run's affinity and spread like the
		// placeholders do, and are not warm-up pods ontime watches.
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: withoutWarmUpLabel(shape.Labels), Annotations: shape.Annotations}, Spec: shape.Spec},
	}
	buffer := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"podTemplateRef": map[string]any{"name": name},
			"replicas":       int64(PodsPerRun(&owner.Template.Spec)),
		},
	}}
	buffer.SetGroupVersionKind(api.GroupVersionKind())
	buffer.SetName(name)
	buffer.SetNamespace(owner.Namespace)
	buffer.SetLabels(labels)
	buffer.SetOwnerReferences([]metav1.OwnerReference{owner.Reference})
	return BufferRequest{Template: template, Buffer: buffer}
}

func withoutWarmUpLabel(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if k != v1alpha1.WarmUpLabel {
			out[k] = v
		}
	}
	return out
}

// bufferOf returns the run's buffer among buffers, if any is not being
// deleted.
func bufferOf(buffers []Buffer, run string) (Buffer, bool) {
	i := slices.IndexFunc(buffers, func(b Buffer) bool { return b.Run == run && !b.Deleting })
	if i < 0 {
		return Buffer{}, false
	}
	return buffers[i], true
}

// warmWithBuffer asks the autoscaler for the next run's capacity with a
// CapacityBuffer, and follows what it reports. Without a watch on
// buffers, it looks again every BufferPoll until the capacity is ready.
func (d *Decision) warmWithBuffer(in Input, n int32) {
	run := v1alpha1.RunLabelValue(in.Next)
	buffer, exists := bufferOf(in.Buffers, run)
	switch {
	case exists:
		d.BufferProblem = buffer.Blocked
	case in.BufferAPI.Version == "":
		d.BufferProblem, d.BufferUnavailable = in.BufferAPI.Problem, true
	default:
		d.CreateBuffers = append(d.CreateBuffers, NewBufferRequest(in.BufferAPI, in.Owner, v1alpha1.RunJobName(in.Owner.Name, in.Next), in.Next, in.Options))
	}
	if d.State == nil || !d.State.ScheduledTime.Time.Equal(in.Next) {
		start := in.Now
		if exists && buffer.Created.Before(start) {
			start = buffer.Created
		}
		d.State = &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(in.Next), Strategy: v1alpha1.WarmUpCapacityBuffer, StartTime: metav1.NewTime(start), Pods: n,
			Lead: in.Lead.DeepCopy()}
		if d.BufferUnavailable {
			d.Events = append(d.Events, bufferUnavailableEvent(in.Next, d.BufferProblem))
		} else if !exists {
			d.Events = append(d.Events, warmUpStartedEvent(in, n))
		}
	}
	d.followBuffer(buffer, exists)
	if d.State.ReadyTime == nil {
		poll := BufferPoll
		if d.BufferUnavailable {
			poll = RefusedRetry // the API is looked up again at most every minute
		}
		d.Wake = append(d.Wake, in.Now.Add(poll))
	}
}

// followBuffer records when the autoscaler first reported the buffer's
// capacity in place.
func (d *Decision) followBuffer(buffer Buffer, exists bool) {
	if !exists || buffer.ReadyAt.IsZero() || d.State.ReadyTime != nil {
		return
	}
	d.State.ScheduledPods = d.State.Pods
	// The condition's time is in whole seconds: never before warm-up began.
	ready := buffer.ReadyAt
	if ready.Before(d.State.StartTime.Time) {
		ready = d.State.StartTime.Time
	}
	d.State.ReadyTime = &metav1.Time{Time: ready}
	after := ready.Sub(d.State.StartTime.Time)
	d.ReadyAfter = &after
	d.Events = append(d.Events, warmUpReadyEvent(d.State))
}

// deleteUnkeptBuffers deletes every CapacityBuffer but the one of the run
// warm-up prepares now (warming), and all of them once the strategy is
// another. A run's buffer goes as the run starts, not once its pods are
// placed as placeholders do: while the buffer exists, the autoscaler
// places the run's pending pods on the buffer's empty nodes in its
// simulation and launches new nodes for the buffer (at N = 100, 0.77
// extra nodes per run with Karpenter 1.14.1). The run's pods, created
// then, find the nodes empty. Deleting the buffer of a run that has not
// started is a cancellation.
func (d *Decision) deleteUnkeptBuffers(in Input, warming string) {
	for _, buffer := range in.Buffers {
		if buffer.Deleting || (in.Options.Strategy == v1alpha1.WarmUpCapacityBuffer && buffer.Run == warming) {
			continue
		}
		d.DeleteBuffers = append(d.DeleteBuffers, buffer)
		if at, canceled := in.cancels(buffer.Run); canceled {
			d.Events = append(d.Events, bufferCanceledEvent(at))
		}
	}
	slices.SortFunc(d.DeleteBuffers, func(a, b Buffer) int { return strings.Compare(a.Name, b.Name) })
}
