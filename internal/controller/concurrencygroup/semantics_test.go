//go:build integration

package concurrencygroup

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestRunsPastTheWebhookCount is issue #44's case against a real API
// server with no webhook: a group of one shared by a ScheduledJob and an
// annotated CronJob, whose Jobs the API server creates as no replica
// serves the Job webhook (unsuspended, without the group's label).
//   - While the CronJob's run runs, the ScheduledJob's waits; the status
//     counts the CronJob's; the Job's events reconcile the group.
//   - Once it finished, the waiting run is released.
//   - A second CronJob run started beside the admitted one puts the group
//     over its limit: OverLimit names it, and the next waiting run is not
//     released, even once the admitted run finished, until the group is
//     back within its limit; past its start-by that run is missed.
//   - The CronJob's annotation moved to another group: its running Job
//     counts there, and no longer in the first.
func TestRunsPastTheWebhookCount(t *testing.T) {
	h := harness(t)
	ns := h.NewNamespace(t)
	now := h.Clock.Now().Truncate(time.Second)
	h.Clock.SetTime(now)
	group := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}}
	h.Create(t, group)
	other := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}}
	h.Create(t, other)
	cronJob := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: ns, Annotations: map[string]string{v1alpha1.GroupLabel: "db"}},
		Spec: batchv1.CronJobSpec{Schedule: "0 0 1 1 *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
	h.Create(t, cronJob)
	h.WaitForCache(t, cronJob)
	owner := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "CronJob", Name: cronJob.Name, UID: cronJob.UID, Controller: ptr.To(true)}

	c := New(v1alpha1.KindConcurrencyGroup, h.Cached, h.Reader, h.Clock, h.Recorder, nil)
	step := func(g *v1alpha1.ConcurrencyGroup) v1alpha1.ConcurrencyGroupStatus {
		t.Helper()
		return h.reconcile(t, c, g).Status
	}
	wantStatus := func(status v1alpha1.ConcurrencyGroupStatus, active, waiting int32) {
		t.Helper()
		if status.ActiveCount != active || status.Waiting != waiting {
			t.Fatalf("activeCount %d, waiting %d; want %d, %d", status.ActiveCount, status.Waiting, active, waiting)
		}
	}
	overLimitEvents := func() []string {
		var found []string
		for _, e := range h.DrainEvents() {
			if strings.Contains(e, v1alpha1.ReasonOverLimit) {
				found = append(found, e)
			}
		}
		return found
	}

	h.DrainEvents() // other tests'
	h.newRun(t, ns, "sj-1", now, sjOwner, v1alpha1.ConcurrencyGroupRef{Name: "db"}, nil)
	h.pastTheWebhook(t, ns, "legacy-1", owner)
	wantRequests(t, c, h.job(t, ns, "legacy-1"), "db")
	wantStatus(step(group), 1, 1)
	wantRunning(t, h, ns, "legacy-1")
	if events := overLimitEvents(); len(events) > 0 {
		t.Errorf("over limit at one run: %v", events)
	}

	h.Complete(t, ns, "legacy-1", h.Clock.Now())
	wantStatus(step(group), 1, 0)
	wantRunning(t, h, ns, "sj-1")

	// sj-2 waits behind sj-1; legacy-2 starts past the webhook beside
	// sj-1, and must hold sj-2 until it has finished too.
	h.Clock.Step(10 * time.Second)
	h.newRun(t, ns, "sj-2", h.Clock.Now(), sjOwner, v1alpha1.ConcurrencyGroupRef{Name: "db"}, ptr.To(h.Clock.Now().Add(time.Minute)))
	h.pastTheWebhook(t, ns, "legacy-2", owner)
	wantStatus(step(group), 2, 1)
	wantRunning(t, h, ns, "legacy-2", "sj-1")
	if events := overLimitEvents(); len(events) != 1 || !strings.Contains(events[0], ns+"/legacy-2") {
		t.Errorf("OverLimit events %v, want one naming %s/legacy-2", events, ns)
	}
	h.Complete(t, ns, "sj-1", h.Clock.Now())
	wantStatus(step(group), 1, 1)
	wantRunning(t, h, ns, "legacy-2")

	h.Clock.Step(61 * time.Second) // past sj-2's start-by
	wantStatus(step(group), 1, 0)
	if missed := h.job(t, ns, "sj-2"); missed.Annotations[v1alpha1.MissedAnnotation] == "" || !ptr.Deref(missed.Spec.Suspend, false) {
		t.Fatalf("sj-2 past its start-by: annotations %v, suspend %v; want it marked missed, never run", missed.Annotations, missed.Spec.Suspend)
	}

	// The CronJob moves to the other group: legacy-2, still running and
	// never labeled, now counts there.
	cronJob.Annotations[v1alpha1.GroupLabel] = "other"
	if err := h.Live.Update(h.Ctx, cronJob); err != nil {
		t.Fatal(err)
	}
	h.WaitForCache(t, cronJob)
	wantRequests(t, c, h.job(t, ns, "legacy-2"), "other")
	wantStatus(step(group), 0, 0)
	wantStatus(step(other), 1, 0)
}

// pastTheWebhook creates a CronJob's run as the API server does while no
// replica serves the Job webhook: unsuspended, without the group's label.
func (h *harnessT) pastTheWebhook(t *testing.T, ns, name string, owner metav1.OwnerReference) {
	t.Helper()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: []metav1.OwnerReference{owner},
		Annotations: map[string]string{v1alpha1.ScheduledTimestampAnnotation: h.Clock.Now().UTC().Format(time.RFC3339)}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	h.Create(t, job)
	h.WaitForCache(t, job)
}

func (h *harnessT) job(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	if err := h.Live.Get(h.Ctx, types.NamespacedName{Namespace: ns, Name: name}, job); err != nil {
		t.Fatal(err)
	}
	return job
}

// wantRequests: the Job's events reconcile exactly the named groups.
func wantRequests(t *testing.T, c *Controller, job *batchv1.Job, groups ...string) {
	t.Helper()
	var got []string
	for _, request := range c.groupOf(t.Context(), job) {
		got = append(got, request.Name)
	}
	if !slices.Equal(got, groups) {
		t.Errorf("%s's events reconcile %v, want %v", job.Name, got, groups)
	}
}

// TestRunsWaitForTheirGroup: a run of a group that does not exist yet
// waits (its Job stays suspended) and is admitted once the group is
// created; deleting the group leaves a waiting run waiting, neither
// released nor missed, whatever its start-by.
func TestRunsWaitForTheirGroup(t *testing.T) {
	h := harness(t)
	ns := h.NewNamespace(t)
	now := h.Clock.Now().Truncate(time.Second)
	h.Clock.SetTime(now)
	c := New(v1alpha1.KindConcurrencyGroup, h.Cached, h.Reader, h.Clock, h.Recorder, nil)
	key := types.NamespacedName{Namespace: ns, Name: "later"}
	step := func() {
		t.Helper()
		if _, err := c.Reconcile(h.Ctx, reconcile.Request{NamespacedName: key}); err != nil {
			t.Fatal(err)
		}
		for _, job := range h.jobs(t, ns) {
			h.WaitForCache(t, job)
		}
	}
	ref := v1alpha1.ConcurrencyGroupRef{Name: key.Name}
	h.newRun(t, ns, "first", now, sjOwner, ref, nil)
	step()
	wantRunning(t, h, ns)

	group := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}}
	h.Create(t, group)
	h.WaitForCache(t, group)
	step()
	wantRunning(t, h, ns, "first")

	h.newRun(t, ns, "second", now, sjOwner, ref, ptr.To(now.Add(time.Minute)))
	if err := h.Live.Delete(h.Ctx, group); err != nil {
		t.Fatal(err)
	}
	h.WaitForCache(t, group)
	h.Complete(t, ns, "first", now)
	h.Clock.Step(2 * time.Minute) // past second's start-by
	step()
	second := h.job(t, ns, "second")
	if !ptr.Deref(second.Spec.Suspend, false) || second.Annotations[v1alpha1.MissedAnnotation] != "" {
		t.Errorf("the run waiting in a deleted group: suspend %v, annotations %v; want it still waiting", second.Spec.Suspend, second.Annotations)
	}
}
