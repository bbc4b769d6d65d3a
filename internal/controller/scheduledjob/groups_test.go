//go:build integration

package scheduledjob

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestGroupMemberWarmUpReadsItsGroup: a member of a concurrency group with
// warm-up reads its group's prediction from the cache: with the next run
// predicted to start 20 minutes late, no placeholder is made lead before
// the run's time; its warm-up is announced for lead before the predicted
// start, and made then. The members index finds it from the group.
func TestGroupMemberWarmUpReadsItsGroup(t *testing.T) {
	ns := newNamespace(t)
	group := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}}
	create(t, group)
	sj := newWarmUpJob(ns, "warm")
	sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Name: "db"}
	create(t, sj)
	sj = get(t, sj)
	run := hourRun(sj)
	predicted := run.Add(20 * time.Minute)
	group.Status.NewRunAdmission = &metav1.Time{Time: predicted}
	if err := env.Live.Status().Update(env.Ctx, group); err != nil {
		t.Fatal(err)
	}
	env.WaitForCache(t, group)

	reconcileAt(t, sj, run.Add(-10*time.Minute))
	if n := len(warmUpPods(t, ns)); n != 0 {
		t.Errorf("%d placeholders lead before the run's time, want none: it is predicted to start at %s", n, predicted)
	}
	if got := get(t, sj).Status.NextWarmUpTime; got == nil || !got.Time.Equal(predicted.Add(-10*time.Minute)) {
		t.Errorf("nextWarmUpTime %v, want %s", got, predicted.Add(-10*time.Minute))
	}
	reconcileAt(t, get(t, sj), predicted.Add(-10*time.Minute))
	if n := len(warmUpPods(t, ns)); n != 2 {
		t.Errorf("%d placeholders lead before the predicted start, want 2", n)
	}

	members := membersReadingGroup(env.Ctx, env.Cached, v1alpha1.GroupIndexValue(v1alpha1.KindConcurrencyGroup, client.ObjectKeyFromObject(group)))
	if len(members) != 1 || members[0].NamespacedName != (types.NamespacedName{Namespace: ns, Name: "warm"}) {
		t.Errorf("members of the group %v, want %s/warm", members, ns)
	}
}

// TestGroupMemberNotWarmedWhereItsGroupRefuses: a member with warm-up of a
// ClusterConcurrencyGroup whose namespaceSelector leaves its namespace out
// (its runs will be refused) makes no placeholder lead before its run, and
// says why in CapacityReady; once its namespace is labeled, the next
// reconcile warms the run up.
func TestGroupMemberNotWarmedWhereItsGroupRefuses(t *testing.T) {
	ns := newNamespace(t)
	group := &v1alpha1.ClusterConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "licensed-" + ns}, Spec: v1alpha1.ClusterConcurrencyGroupSpec{
		ConcurrencyGroupSpec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1},
		NamespaceSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"ontime.dev/licensed": "true"}}}}
	create(t, group)
	t.Cleanup(func() { _ = env.Live.Delete(env.Ctx, group) })
	env.WaitForCache(t, group)
	sj := newWarmUpJob(ns, "warm")
	sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Kind: v1alpha1.KindClusterConcurrencyGroup, Name: group.Name}
	create(t, sj)
	sj = get(t, sj)
	run := hourRun(sj)

	reconcileAt(t, sj, run.Add(-10*time.Minute))
	if n := len(warmUpPods(t, ns)); n != 0 {
		t.Errorf("%d placeholders for a run its group refuses, want none", n)
	}
	sj = get(t, sj)
	c := meta.FindStatusCondition(sj.Status.Conditions, v1alpha1.ConditionCapacityReady)
	if c == nil || c.Reason != v1alpha1.ReasonNotSelected || sj.Status.NextWarmUpTime != nil {
		t.Errorf("CapacityReady %+v, nextWarmUpTime %v; want reason %s and no warm-up announced", c, sj.Status.NextWarmUpTime, v1alpha1.ReasonNotSelected)
	}

	namespace := &corev1.Namespace{}
	if err := env.Live.Get(env.Ctx, client.ObjectKey{Name: ns}, namespace); err != nil {
		t.Fatal(err)
	}
	namespace.Labels["ontime.dev/licensed"] = "true"
	if err := env.Live.Update(env.Ctx, namespace); err != nil {
		t.Fatal(err)
	}
	env.WaitForCache(t, namespace)
	reconcileAt(t, sj, run.Add(-10*time.Minute))
	if n := len(warmUpPods(t, ns)); n != 2 {
		t.Errorf("%d placeholders once the group selects the namespace, want 2", n)
	}
}
