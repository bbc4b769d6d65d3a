//go:build integration

package webhook

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// TestClusterGroupNamespaceSelector: admission refuses a namespaceSelector
// that is not a selector, and a ScheduledJob joining a cluster group from
// a namespace its selector does not select, naming the field, the group
// and the namespace; from a selected namespace it is admitted. A member
// whose namespace is deselected later is only warned when it changes, so
// that it can still be suspended or moved.
func TestClusterGroupNamespaceSelector(t *testing.T) {
	ctx := context.Background()
	platform := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "platform-", Labels: map[string]string{"team": "platform"}}}
	tenant := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	for _, ns := range []*corev1.Namespace{platform, tenant} {
		if err := apiClient.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	bad := &v1alpha1.ClusterConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "bad-selector"},
		Spec: v1alpha1.ClusterConcurrencyGroupSpec{ConcurrencyGroupSpec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 2},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Is", Values: []string{"platform"}}}}}}
	want := `spec.namespaceSelector.matchExpressions[0].operator: Invalid value: "Is": not a valid selector operator`
	if err := apiClient.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a selector with operator Is: %v, want an error containing\n  %s", err, want)
	}
	group := &v1alpha1.ClusterConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "platform-only"},
		Spec: v1alpha1.ClusterConcurrencyGroupSpec{ConcurrencyGroupSpec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 2},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "platform"}}}}
	if err := apiClient.Create(ctx, group); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apiClient.Delete(context.Background(), group) })
	member := func(namespace string) *v1alpha1.ScheduledJob {
		sj := validScheduledJob("member")
		sj.Namespace = namespace
		sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Kind: v1alpha1.KindClusterConcurrencyGroup, Name: group.Name}
		return sj
	}

	err := apiClient.Create(ctx, member(tenant.Name))
	want = `spec.concurrencyGroup.name: Forbidden: ClusterConcurrencyGroup "platform-only"'s spec.namespaceSelector does not select namespace "` + tenant.Name + `": its runs would never run`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("joining from the tenant's namespace: %v, want an error containing\n  %s", err, want)
	}
	warnings.take()
	sj := member(platform.Name)
	if err := apiClient.Create(ctx, sj); err != nil {
		t.Fatalf("joining from the platform's namespace: %v", err)
	}
	if seen := warnings.take(); len(seen) > 0 {
		t.Errorf("joining from the platform's namespace: warnings %q, want none", seen)
	}

	// The platform's namespace loses its label: the member may still
	// change (here, be suspended), with a warning once the webhook's
	// cache has seen the label go.
	platform.Labels = nil
	if err := apiClient.Update(ctx, platform); err != nil {
		t.Fatal(err)
	}
	suspend := true
	testenv.Eventually(t, 30*time.Second, "the warning about the deselected namespace", func() bool {
		current := &v1alpha1.ScheduledJob{}
		if err := apiClient.Get(ctx, client.ObjectKeyFromObject(sj), current); err != nil {
			t.Fatal(err)
		}
		current.Spec.Suspend = &suspend
		suspend = !suspend // every try changes the spec, so admission looks again
		warnings.take()
		if err := apiClient.Update(ctx, current); err != nil {
			t.Fatalf("changing a member whose namespace was deselected: %v", err)
		}
		return strings.Contains(strings.Join(warnings.take(), "\n"), "does not select namespace \""+platform.Name+"\"")
	})
}

// TestMissingGroupWarns: a ScheduledJob that joins a group that does not
// exist (yet) is admitted, with a warning that names the group and says
// its runs wait until it does.
func TestMissingGroupWarns(t *testing.T) {
	ctx := context.Background()
	for name, kind := range map[string]string{"joins-missing-group": "", "joins-missing-cluster-group": v1alpha1.KindClusterConcurrencyGroup} {
		sj := validScheduledJob(name)
		sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Kind: kind, Name: "not-yet"}
		warnings.take()
		if err := apiClient.Create(ctx, sj); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { _ = apiClient.Delete(context.Background(), sj) })
		if kind == "" {
			kind = v1alpha1.KindConcurrencyGroup
		}
		want := `spec.concurrencyGroup: ` + kind + ` "not-yet" does not exist; runs wait (their Jobs suspended) until it does`
		if got := warnings.take(); len(got) != 1 || got[0] != want {
			t.Errorf("warnings %q, want %q", got, want)
		}
	}
}
