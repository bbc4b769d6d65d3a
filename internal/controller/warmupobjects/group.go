package warmupobjects

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
