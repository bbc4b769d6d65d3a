//go:build integration

package concurrencygroup

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestClusterGroupSelectsNamespaces: a ClusterConcurrencyGroup whose
// namespaceSelector selects the platform team's namespace admits its run,
// and refuses the tenant's: the ScheduledJob's run is marked missed (its
// controller records the miss), the CronJob's marked and deleted, each
// with a NotSelectedByGroup event, and neither takes a slot. Once the
// tenant's namespace is labeled in, its next run is admitted at once,
// though the cache still shows the namespace unlabeled: a refusal is
// confirmed by the API server.
func TestClusterGroupSelectsNamespaces(t *testing.T) {
	h := harness(t)
	platform, tenant := h.NewNamespace(t), h.NewNamespace(t)
	label(t, h, platform, "team", "platform")
	now := h.Clock.Now().Truncate(time.Second)
	h.Clock.SetTime(now)
	group := platformGroup(t, h, "shared-"+platform)
	ref := v1alpha1.ConcurrencyGroupRef{Kind: v1alpha1.KindClusterConcurrencyGroup, Name: group.Name}
	// The tenant's runs are due first: by order alone they would start.
	h.newRun(t, tenant, "tenant-report", now.Add(-30*time.Second), sjOwner, ref, nil)
	h.newRun(t, tenant, "tenant-legacy", now.Add(-20*time.Second), cronJobOwner, ref, nil)
	h.newRun(t, platform, "platform-report", now.Add(-10*time.Second), sjOwner, ref, nil)

	// The cache keeps the tenant's namespace as it was before the label
	// below, as a watch behind would.
	c := staleController(t, h, tenant)
	h.DrainEvents()
	step := func() {
		t.Helper()
		if _, err := c.Reconcile(h.Ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: group.Name}}); err != nil {
			t.Fatal(err)
		}
		for _, ns := range []string{platform, tenant} {
			for _, job := range h.jobs(t, ns) {
				h.WaitForCache(t, job)
			}
		}
	}

	step()
	wantRunning(t, h, platform, "platform-report")
	wantRunning(t, h, tenant)
	wantRefused(t, h, tenant, group.Name)

	label(t, h, tenant, "team", "platform")
	h.Complete(t, platform, "platform-report", now)
	h.newRun(t, tenant, "tenant-next", now, sjOwner, ref, nil)
	step()
	wantRunning(t, h, tenant, "tenant-next")
}

// TestJobsLabeledOutsideTheSelectorTakeNoSlot: Jobs labeled by hand with
// a ClusterConcurrencyGroup's name, running in a namespace its
// namespaceSelector does not select, do not fill it: a member's run is
// admitted beside them. Once that namespace is labeled in (the cache still
// showing it unlabeled: the API server is asked before a running Job
// stops counting), they count, and the next run waits.
func TestJobsLabeledOutsideTheSelectorTakeNoSlot(t *testing.T) {
	h := harness(t)
	platform, outsider := h.NewNamespace(t), h.NewNamespace(t)
	label(t, h, platform, "team", "platform")
	now := h.Clock.Now().Truncate(time.Second)
	h.Clock.SetTime(now)
	group := platformGroup(t, h, "guarded-"+platform)
	for _, name := range []string{"squatter-1", "squatter-2"} {
		labeledByHand(t, h, outsider, name, v1alpha1.ClusterGroupLabel, group.Name)
	}
	ref := v1alpha1.ConcurrencyGroupRef{Kind: v1alpha1.KindClusterConcurrencyGroup, Name: group.Name}
	h.newRun(t, platform, "platform-report", now.Add(-10*time.Second), sjOwner, ref, nil)

	c := staleController(t, h, outsider)
	step := func() {
		t.Helper()
		if _, err := c.Reconcile(h.Ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: group.Name}}); err != nil {
			t.Fatal(err)
		}
		for _, job := range h.jobs(t, platform) {
			h.WaitForCache(t, job)
		}
	}
	step()
	wantRunning(t, h, platform, "platform-report")

	label(t, h, outsider, "team", "platform")
	h.Complete(t, platform, "platform-report", now)
	h.newRun(t, platform, "platform-next", now, sjOwner, ref, nil)
	step()
	wantRunning(t, h, platform)
	current := &v1alpha1.ClusterConcurrencyGroup{}
	if err := h.Live.Get(h.Ctx, types.NamespacedName{Name: group.Name}, current); err != nil {
		t.Fatal(err)
	}
	if current.Status.ActiveCount != 2 || current.Status.Waiting != 1 {
		t.Errorf("once their namespace is selected: active %d, waiting %d; want the two Jobs labeled by hand active and the run waiting", current.Status.ActiveCount, current.Status.Waiting)
	}
}

// TestNamespacedGroupCountsItsNamespaceOnly: a ConcurrencyGroup counts
// only the Jobs of its own namespace: Jobs running in another namespace
// with its name in their label (written by hand, or a group of the same
// name there) take none of its slots, and its member's run starts.
func TestNamespacedGroupCountsItsNamespaceOnly(t *testing.T) {
	h := harness(t)
	team, other := h.NewNamespace(t), h.NewNamespace(t)
	now := h.Clock.Now().Truncate(time.Second)
	h.Clock.SetTime(now)
	group := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: team}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}}
	h.Create(t, group)
	for _, name := range []string{"elsewhere-1", "elsewhere-2"} {
		labeledByHand(t, h, other, name, v1alpha1.GroupLabel, "db")
	}
	h.newRun(t, team, "report", now.Add(-10*time.Second), sjOwner, v1alpha1.ConcurrencyGroupRef{Name: "db"}, nil)
	c := New(v1alpha1.KindConcurrencyGroup, h.Cached, h.Reader, h.Clock, h.Recorder, nil)
	got := h.reconcile(t, c, group)
	wantRunning(t, h, team, "report")
	if got.Status.ActiveCount != 1 {
		t.Errorf("active %d, want 1: the other namespace's Jobs counted", got.Status.ActiveCount)
	}
}

// wantRefused: the tenant's two runs were refused (the ScheduledJob's
// marked missed and left suspended, the CronJob's deleted), each with a
// NotSelectedByGroup event naming the namespace, and took no slot.
func wantRefused(t *testing.T, h *harnessT, tenant, group string) {
	t.Helper()
	report := &batchv1.Job{}
	if err := h.Live.Get(h.Ctx, types.NamespacedName{Namespace: tenant, Name: "tenant-report"}, report); err != nil {
		t.Fatal(err)
	}
	if _, missed := v1alpha1.MissedInGroup(report); !missed || !suspended(report) {
		t.Errorf("the tenant's ScheduledJob run: suspended %v, annotations %v; want suspended and marked missed", suspended(report), report.Annotations)
	}
	legacy := &batchv1.Job{}
	if err := h.Live.Get(h.Ctx, types.NamespacedName{Namespace: tenant, Name: "tenant-legacy"}, legacy); !apierrors.IsNotFound(err) && legacy.DeletionTimestamp == nil {
		t.Errorf("the tenant's CronJob run: %v, annotations %v; want deleted", err, legacy.Annotations)
	}
	var refused int
	for _, event := range h.DrainEvents() {
		if strings.Contains(event, v1alpha1.ReasonNotSelected) && strings.Contains(event, "does not select namespace "+tenant) {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("%d NotSelectedByGroup events naming namespace %s, want 2", refused, tenant)
	}
	current := &v1alpha1.ClusterConcurrencyGroup{}
	if err := h.Live.Get(h.Ctx, types.NamespacedName{Name: group}, current); err != nil {
		t.Fatal(err)
	}
	if current.Status.ActiveCount != 1 || current.Status.Waiting != 0 {
		t.Errorf("active %d, waiting %d; want 1, 0", current.Status.ActiveCount, current.Status.Waiting)
	}
}

// platformGroup creates a ClusterConcurrencyGroup of one slot that
// selects the namespaces labeled team=platform.
func platformGroup(t *testing.T, h *harnessT, name string) *v1alpha1.ClusterConcurrencyGroup {
	t.Helper()
	group := &v1alpha1.ClusterConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ClusterConcurrencyGroupSpec{ConcurrencyGroupSpec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "platform"}}}}
	h.Create(t, group)
	t.Cleanup(func() { _ = h.Live.Delete(context.Background(), group) })
	return group
}

// staleController is the cluster groups' controller whose cache keeps
// namespace as it is now, as a watch behind would.
func staleController(t *testing.T, h *harnessT, namespace string) *Controller {
	t.Helper()
	stale := &corev1.Namespace{}
	if err := h.Live.Get(h.Ctx, types.NamespacedName{Name: namespace}, stale); err != nil {
		t.Fatal(err)
	}
	return New(v1alpha1.KindClusterConcurrencyGroup, staleNamespace{Client: h.Cached, namespace: stale}, h.Reader, h.Clock, h.Recorder, nil)
}

// labeledByHand creates a running Job carrying a group's label, owned by
// no member.
func labeledByHand(t *testing.T, h *harnessT, namespace, name, label, value string) {
	t.Helper()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{label: value}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	h.Create(t, job)
	h.WaitForCache(t, job)
}

// label sets a label of a namespace.
func label(t *testing.T, h *harnessT, namespace, key, value string) {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := h.Live.Get(h.Ctx, types.NamespacedName{Name: namespace}, ns); err != nil {
		t.Fatal(err)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[key] = value
	if err := h.Live.Update(h.Ctx, ns); err != nil {
		t.Fatal(err)
	}
}

// staleNamespace is a cache that shows one namespace as it was.
type staleNamespace struct {
	client.Client
	namespace *corev1.Namespace
}

func (s staleNamespace) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if ns, ok := obj.(*corev1.Namespace); ok && key.Name == s.namespace.Name {
		s.namespace.DeepCopyInto(ns)
		return nil
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

// TestNamespaceLabelsReconcileSelectiveGroups: a namespace whose labels
// change reconciles the cluster groups with a namespaceSelector (whether
// they select it may have changed), not those without one.
func TestNamespaceLabelsReconcileSelectiveGroups(t *testing.T) {
	h := harness(t)
	ns := h.NewNamespace(t)
	selective := &v1alpha1.ClusterConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "selective-" + ns},
		Spec: v1alpha1.ClusterConcurrencyGroupSpec{ConcurrencyGroupSpec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "platform"}}}}
	open := &v1alpha1.ClusterConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "open-" + ns},
		Spec: v1alpha1.ClusterConcurrencyGroupSpec{ConcurrencyGroupSpec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}}}
	for _, group := range []*v1alpha1.ClusterConcurrencyGroup{selective, open} {
		h.Create(t, group)
		t.Cleanup(func() { _ = h.Live.Delete(context.Background(), group) })
		h.WaitForCache(t, group)
	}
	c := New(v1alpha1.KindClusterConcurrencyGroup, h.Cached, h.Reader, h.Clock, h.Recorder, nil)
	requests := c.groupsWithSelector(h.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if !slices.Contains(requests, reconcile.Request{NamespacedName: types.NamespacedName{Name: selective.Name}}) ||
		slices.Contains(requests, reconcile.Request{NamespacedName: types.NamespacedName{Name: open.Name}}) {
		t.Errorf("reconciled %v; want %s and not %s", requests, selective.Name, open.Name)
	}
}
