package warmupobjects

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// +kubebuilder:rbac:groups=ontime.dev,resources=concurrencygroups;clusterconcurrencygroups,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Group reads, from c, the concurrency group ref names for an owner in
// namespace: its status, whose predictions place the owner's warm-up
// (warmup.PredictAdmission), and whether it refuses the owner's runs (a
// ClusterConcurrencyGroup whose namespaceSelector does not select
// namespace). The zero Group when the group is not there or its API is not
// served. A namespace read from a cache a moment behind its labels only
// warms up a run the group refuses, or not one it takes, for that moment:
// the run itself is decided by the group's controller, which confirms a
// refusal with the API server.
func Group(ctx context.Context, c client.Reader, ref v1alpha1.ConcurrencyGroupRef, namespace string) (warmup.Group, error) {
	key := ref.Key(namespace)
	if ref.Kind != v1alpha1.KindClusterConcurrencyGroup {
		group := &v1alpha1.ConcurrencyGroup{}
		if err := c.Get(ctx, key, group); err != nil {
			return warmup.Group{}, absentIsNone(err)
		}
		return warmup.Group{Status: &group.Status}, nil
	}
	group := &v1alpha1.ClusterConcurrencyGroup{}
	if err := c.Get(ctx, key, group); err != nil {
		return warmup.Group{}, absentIsNone(err)
	}
	refuses, err := refuses(ctx, c, group, namespace)
	return warmup.Group{Status: &group.Status, Refuses: refuses}, err
}

// refuses reports whether the cluster group's namespaceSelector leaves
// namespace out. A selector admission would refuse refuses nothing: the
// group's controller reports it, and its runs wait as before.
func refuses(ctx context.Context, c client.Reader, group *v1alpha1.ClusterConcurrencyGroup, namespace string) (bool, error) {
	selector, err := group.Spec.Namespaces()
	if err != nil || selector.Empty() {
		return false, nil
	}
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return !selector.Matches(labels.Set(ns.Labels)), nil
}

// absentIsNone is nil for a group that is not there or whose API is not
// served: the owner's warm-up goes on without predictions.
func absentIsNone(err error) error {
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	}
	return err
}

// WatchGroups adds to b a watch of the concurrency group kinds the API
// server serves (a cluster upgraded without their CRDs runs on without
// them; the groups' registration says so): when a group changes, the
// owners membersOf returns for its index value (v1alpha1.GroupIndexValue)
// are reconciled, so that their warm-up follows the group's predictions.
func WatchGroups(mgr ctrl.Manager, b *builder.Builder, membersOf func(ctx context.Context, value string) []reconcile.Request) *builder.Builder {
	for _, group := range []client.Object{&v1alpha1.ConcurrencyGroup{}, &v1alpha1.ClusterConcurrencyGroup{}} {
		gvks, _, err := mgr.GetScheme().ObjectKinds(group)
		if err != nil || len(gvks) == 0 {
			continue
		}
		if _, err := mgr.GetRESTMapper().RESTMapping(gvks[0].GroupKind(), gvks[0].Version); err != nil {
			continue
		}
		kind := gvks[0].Kind
		b = b.Watches(group, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return membersOf(ctx, v1alpha1.GroupIndexValue(kind, client.ObjectKeyFromObject(obj)))
		}))
	}
	return b
}
