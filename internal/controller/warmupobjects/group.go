package warmupobjects

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// +kubebuilder:rbac:groups=ontime.dev,resources=concurrencygroups;clusterconcurrencygroups,verbs=get;list;watch

// GroupStatus reads the status of the concurrency group ref names, for an
// owner in namespace, whose predictions place the owner's warm-up
// (warmup.PredictAdmission); nil when the group is not there or its API
// is not served.
func GroupStatus(ctx context.Context, c client.Reader, ref v1alpha1.ConcurrencyGroupRef, namespace string) (*v1alpha1.ConcurrencyGroupStatus, error) {
	key := ref.Key(namespace)
	var err error
	var status *v1alpha1.ConcurrencyGroupStatus
	if ref.Kind == v1alpha1.KindClusterConcurrencyGroup {
		group := &v1alpha1.ClusterConcurrencyGroup{}
		err, status = c.Get(ctx, key, group), &group.Status
	} else {
		group := &v1alpha1.ConcurrencyGroup{}
		err, status = c.Get(ctx, key, group), &group.Status
	}
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return status, nil
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
