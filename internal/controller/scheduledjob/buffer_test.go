//go:build integration

package scheduledjob

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// buffers lists the CapacityBuffers of a namespace, as the API server has
// them (v1beta1, the version Karpenter's CRD serves).
func buffers(t *testing.T, namespace string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("autoscaling.x-k8s.io/v1beta1")
	list.SetKind("CapacityBufferList")
	if err := env.Live.List(env.Ctx, list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// reportProvisioned sets the buffer's conditions as Karpenter's
// provisioner does once its virtual pods fit the nodes.
func reportProvisioned(t *testing.T, buffer *unstructured.Unstructured, at time.Time) {
	t.Helper()
	conditions := []any{
		map[string]any{"type": "ReadyForProvisioning", "status": "True", "reason": "Resolved", "message": "Pod template resolved successfully", "lastTransitionTime": at.UTC().Format(time.RFC3339)},
		map[string]any{"type": "Provisioning", "status": "True", "reason": "FitsExistingCapacity", "message": "All 2 virtual pods fit on existing capacity", "lastTransitionTime": at.UTC().Format(time.RFC3339)},
	}
	if err := unstructured.SetNestedSlice(buffer.Object, conditions, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := env.Live.Status().Update(env.Ctx, buffer); err != nil {
		t.Fatal(err)
	}
}

// warmUpWithBuffer creates a ScheduledJob like newWarmUpJob's under the
// CapacityBuffer strategy and reconciles it, events drained, at its first
// run's warm-up start; it returns it fresh, the run's time and the
// reconcile's result.
func warmUpWithBuffer(t *testing.T, namespace, name string) (*v1alpha1.ScheduledJob, time.Time, reconcile.Result) {
	t.Helper()
	sj := newWarmUpJob(namespace, name)
	sj.Spec.WarmUp.Strategy = v1alpha1.WarmUpCapacityBuffer
	create(t, sj)
	sj = get(t, sj)
	run := hourRun(sj)
	drainEvents()
	return sj, run, reconcileAt(t, sj, run.Add(-10*time.Minute))
}

// TestCapacityBufferWarmUp follows one run under the CapacityBuffer
// strategy: at lead before it, a PodTemplate shaped like its pods and a
// CapacityBuffer asking for two of them, both owned by the ScheduledJob;
// ready once the autoscaler says so; both gone as the run starts, and no
// pod created by ontime at any point.
func TestCapacityBufferWarmUp(t *testing.T) {
	ns := newNamespace(t)
	sj, run, result := warmUpWithBuffer(t, ns, "buffered")
	list := buffers(t, ns)
	if len(list) != 1 {
		t.Fatalf("%d CapacityBuffers at the warm-up's start, want 1", len(list))
	}
	checkBuffer(t, &list[0], get(t, sj))
	if n := len(warmUpPods(t, ns)); n != 0 {
		t.Errorf("%d warm-up pods: CapacityBuffer creates none", n)
	}
	if result.RequeueAfter > warmup.BufferPoll {
		t.Errorf("requeue after %v while the buffer is not ready, want at most %v (no watch on buffers)", result.RequeueAfter, warmup.BufferPoll)
	}
	if sj = get(t, sj); capacityOf(sj) != "False/WarmingUp" || sj.Status.WarmUp == nil || sj.Status.WarmUp.Strategy != v1alpha1.WarmUpCapacityBuffer {
		t.Errorf("warming: CapacityReady %s, warmUp %+v", capacityOf(sj), sj.Status.WarmUp)
	}

	reconcileAt(t, sj, run.Add(-10*time.Minute+time.Second))
	if n := len(buffers(t, ns)); n != 1 {
		t.Errorf("a second reconcile left %d buffers", n)
	}
	reportProvisioned(t, &list[0], run.Add(-9*time.Minute))
	reconcileAt(t, sj, run.Add(-9*time.Minute+3*time.Second))
	if sj = get(t, sj); capacityOf(sj) != "True/CapacityReady" || sj.Status.WarmUp.ReadyTime == nil || !sj.Status.WarmUp.ReadyTime.Time.Equal(run.Add(-9*time.Minute)) {
		t.Errorf("reported: CapacityReady %s, warmUp %+v; want ready at the condition's time", capacityOf(sj), sj.Status.WarmUp)
	}
	events := drainEvents()
	for _, want := range []string{"WarmUpStarted", "WarmUpReady"} {
		if !hasEvent(events, want) {
			t.Errorf("no %s event in %v", want, events)
		}
	}

	checkBufferHandOff(t, sj, run, list[0].GetName())
}

// checkBufferHandOff: the run's Job as without warm-up, and the buffer
// gone with its PodTemplate as the run starts (reconcileAt follows the
// reconcile that creates the Job with the one it defers the rest to).
func checkBufferHandOff(t *testing.T, sj *v1alpha1.ScheduledJob, run time.Time, name string) {
	t.Helper()
	ns := sj.Namespace
	reconcileAt(t, sj, run.Add(100*time.Millisecond))
	if created := jobs(t, ns); len(created) != 1 || created[0].Name != sj.JobName(run) {
		t.Fatalf("jobs %v, want %s", created, sj.JobName(run))
	}
	if n := len(buffers(t, ns)); n != 0 {
		t.Errorf("%d buffers once the run started, want 0", n)
	}
	template := &corev1.PodTemplate{}
	if err := env.Live.Get(env.Ctx, client.ObjectKey{Namespace: ns, Name: name}, template); !apierrors.IsNotFound(err) {
		t.Errorf("the PodTemplate after the hand-off: %v, want it deleted", err)
	}
}

// checkBuffer checks what the API server stored of a run's buffer and its
// PodTemplate: owned by the ScheduledJob, two of the run's shape.
func checkBuffer(t *testing.T, buffer *unstructured.Unstructured, sj *v1alpha1.ScheduledJob) {
	t.Helper()
	if !metav1.IsControlledBy(buffer, sj) || buffer.GetLabels()[v1alpha1.RunLabel] != v1alpha1.RunLabelValue(hourRun(sj)) {
		t.Errorf("buffer owners %v labels %v", buffer.GetOwnerReferences(), buffer.GetLabels())
	}
	ref, _, _ := unstructured.NestedString(buffer.Object, "spec", "podTemplateRef", "name")
	replicas, _, _ := unstructured.NestedInt64(buffer.Object, "spec", "replicas")
	if ref != buffer.GetName() || replicas != 2 {
		t.Errorf("buffer asks for %d of %q, want 2 of its PodTemplate", replicas, ref)
	}
	template := &corev1.PodTemplate{}
	if err := env.Live.Get(env.Ctx, client.ObjectKey{Namespace: sj.Namespace, Name: ref}, template); err != nil {
		t.Fatal(err)
	}
	spec := template.Template.Spec
	if cpu := spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; cpu.String() != "500m" || spec.NodeSelector["pool"] != "batch" || !metav1.IsControlledBy(template, sj) {
		t.Errorf("PodTemplate requests %s on %v, owners %v; want 500m on pool=batch, the ScheduledJob", cpu.String(), spec.NodeSelector, template.OwnerReferences)
	}
}

// TestCapacityBufferCanceledAndSwitchedAway: suspending during warm-up
// deletes the buffer; a strategy changed back to Placeholder cleans up a
// buffer the status recorded.
func TestCapacityBufferCanceledAndSwitchedAway(t *testing.T) {
	ns := newNamespace(t)
	sj, run, _ := warmUpWithBuffer(t, ns, "canceled")
	if n := len(buffers(t, ns)); n != 1 {
		t.Fatalf("%d buffers at the warm-up's start", n)
	}
	drainEvents()
	update(t, sj, func(sj *v1alpha1.ScheduledJob) { sj.Spec.Suspend = ptr.To(true) })
	reconcileAt(t, sj, run.Add(-9*time.Minute))
	if n := len(buffers(t, ns)); n != 0 || !hasEvent(drainEvents(), "WarmUpCanceled") {
		t.Errorf("suspended: %d buffers left, or no WarmUpCanceled event", n)
	}

	update(t, sj, func(sj *v1alpha1.ScheduledJob) { sj.Spec.Suspend = ptr.To(false) })
	reconcileAt(t, sj, run.Add(-8*time.Minute))
	if n := len(buffers(t, ns)); n != 1 {
		t.Fatalf("resumed: %d buffers, want 1", n)
	}
	update(t, sj, func(sj *v1alpha1.ScheduledJob) { sj.Spec.WarmUp.Strategy = v1alpha1.WarmUpPlaceholder })
	reconcileAt(t, sj, run.Add(-7*time.Minute))
	if nb, np := len(buffers(t, ns)), len(warmUpPods(t, ns)); nb != 0 || np != 2 {
		t.Errorf("switched to Placeholder: %d buffers, %d placeholders; want 0 and 2", nb, np)
	}
}

// TestCapacityBufferRefusedByTheAutoscaler: a buffer the autoscaler cannot
// use (ReadyForProvisioning False) is named in the condition.
func TestCapacityBufferRefusedByTheAutoscaler(t *testing.T) {
	ns := newNamespace(t)
	sj, run, _ := warmUpWithBuffer(t, ns, "blocked")
	buffer := buffers(t, ns)[0]
	if err := unstructured.SetNestedSlice(buffer.Object, []any{map[string]any{"type": "ReadyForProvisioning", "status": "False", "reason": "PodTemplateNotFound",
		"message": "podtemplates not found", "lastTransitionTime": run.Add(-10 * time.Minute).UTC().Format(time.RFC3339)}}, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if err := env.Live.Status().Update(env.Ctx, &buffer); err != nil {
		t.Fatal(err)
	}
	reconcileAt(t, sj, run.Add(-9*time.Minute))
	c := meta.FindStatusCondition(get(t, sj).Status.Conditions, v1alpha1.ConditionCapacityReady)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "PodTemplateNotFound") {
		t.Errorf("CapacityReady %+v, want False naming the autoscaler's reason", c)
	}
}

// TestCapacityBufferRefusedByPolicy: a namespace whose admission policy
// refuses warm-up PodTemplates gets no buffer; the ScheduledJob says so
// once, and the run starts at its time.
func TestCapacityBufferRefusedByPolicy(t *testing.T) {
	ns := newNamespace(t)
	env.RefuseWarmUpByPolicy(t, ns, v1alpha1.WarmUpLabel)
	sj, run, result := warmUpWithBuffer(t, ns, "refused")
	if n := len(buffers(t, ns)); n != 0 {
		t.Errorf("%d buffers without their PodTemplate", n)
	}
	if result.RequeueAfter <= 0 || result.RequeueAfter > warmup.RefusedRetry {
		t.Errorf("next look in %v, want within %v", result.RequeueAfter, warmup.RefusedRetry)
	}
	checkRefusalReported(t, get(t, sj), testenv.PolicyMessage)
	reconcileAt(t, sj, run)
	if got := jobsOf(t, ns, sj); len(got) != 1 {
		t.Errorf("Jobs at the run's time %v, want the run's", got)
	}
}
