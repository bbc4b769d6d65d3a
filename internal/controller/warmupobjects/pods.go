package warmupobjects

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
)

// Pods lists an owner's warm-up pods (placeholders and EarlyStart pods,
// label ontime.dev/owner-uid) from the cache, which holds no others.
func Pods(ctx context.Context, c client.Reader, owner metav1.Object) ([]*corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(owner.GetNamespace()), client.MatchingLabels{v1alpha1.OwnerUIDLabel: string(owner.GetUID())}); err != nil {
		return nil, err
	}
	return jobcontrol.Pointers(pods.Items), nil
}

// PodOwner maps a warm-up pod to its owner of the given kind
// ("ScheduledJob" or "CronJob"), for a controller's watch on pods.
func PodOwner(kind string) handler.MapFunc {
	return func(_ context.Context, pod client.Object) []reconcile.Request {
		labels := pod.GetLabels()
		if labels[v1alpha1.OwnerKindLabel] != kind || labels[v1alpha1.OwnerNameLabel] == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.GetNamespace(), Name: labels[v1alpha1.OwnerNameLabel]}}}
	}
}
