//go:build integration

package concurrencygroup

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestDeletedGroupLeavesNoSeries: a group's gauges report it while it
// exists; once it is deleted, the reconcile that finds it gone drops its
// series, so no dashboard shows a deleted group as running or waiting.
// Another group's series stay.
func TestDeletedGroupLeavesNoSeries(t *testing.T) {
	h := harness(t)
	ns := h.NewNamespace(t)
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	c := New(v1alpha1.KindConcurrencyGroup, h.Cached, h.Reader, h.Clock, h.Recorder, metrics)
	reconcileGroup := func(name string) {
		t.Helper()
		if _, err := c.Reconcile(h.Ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	kept, deleted := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: ns}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}},
		&v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "deleted", Namespace: ns}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}}
	h.Create(t, kept)
	h.Create(t, deleted)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "run", Namespace: ns,
		Annotations:     map[string]string{v1alpha1.ScheduledTimestampAnnotation: h.Clock.Now().Format(time.RFC3339)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ScheduledJob", Name: "report", UID: "sj-uid", Controller: ptr.To(true)}}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	v1alpha1.JoinGroup(job, v1alpha1.ConcurrencyGroupRef{Name: "deleted"}, nil)
	h.Create(t, job)
	h.WaitForCache(t, job)
	reconcileGroup("kept")
	reconcileGroup("deleted")
	if got := testutil.ToFloat64(metrics.active.WithLabelValues(v1alpha1.KindConcurrencyGroup, ns, "deleted")); got != 1 {
		t.Fatalf("ontime_concurrency_group_active of the group: %v, want 1", got)
	}
	if got := testutil.CollectAndCount(metrics.active); got != 2 {
		t.Fatalf("%d active series, want one per group", got)
	}

	if err := h.Live.Delete(h.Ctx, deleted); err != nil {
		t.Fatal(err)
	}
	reconcileGroup("deleted")
	// The kept group has gauges and has released nothing; the deleted one
	// had released its run.
	for name, want := range map[string]struct {
		vec    prometheus.Collector
		series int
	}{"active": {metrics.active, 1}, "waiting": {metrics.waiting, 1}, "wait_seconds": {metrics.wait, 0}} {
		if got := testutil.CollectAndCount(want.vec); got != want.series {
			t.Errorf("ontime_concurrency_group_%s: %d series after the group was deleted, want %d (the kept group's)", name, got, want.series)
		}
	}
}
