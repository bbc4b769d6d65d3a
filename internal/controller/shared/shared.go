// Package shared holds what ontime's controllers share: reading an owner's
// warm-up pods and a run's pods, the watches that map warm-up pods and
// Jobs to their owner, and recording events. Each controller keeps its
// own decisions; nothing here decides.
package shared

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Pointers returns pointers to a list's items, which the deciders take.
func Pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// WarmUpPods lists an owner's warm-up pods (placeholders and EarlyStart
// pods, label ontime.dev/owner-uid) from the cache, which holds no others.
func WarmUpPods(ctx context.Context, c client.Reader, owner metav1.Object) ([]*corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(owner.GetNamespace()), client.MatchingLabels{v1alpha1.OwnerUIDLabel: string(owner.GetUID())}); err != nil {
		return nil, err
	}
	return Pointers(pods.Items), nil
}

// RunPods reads the pods of a run's Job from the API server: the cache
// holds warm-up pods only, so a run's pods are read once, when the Job
// says one is ready or finished.
func RunPods(ctx context.Context, apiReader client.Reader, job *batchv1.Job) ([]*corev1.Pod, error) {
	var pods corev1.PodList
	if err := apiReader.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return nil, err
	}
	return Pointers(pods.Items), nil
}

// WarmUpPodOwner maps a warm-up pod to its owner of the given kind
// ("ScheduledJob" or "CronJob"), for a controller's watch on pods.
func WarmUpPodOwner(kind string) handler.MapFunc {
	return func(_ context.Context, pod client.Object) []reconcile.Request {
		labels := pod.GetLabels()
		if labels[v1alpha1.OwnerKindLabel] != kind || labels[v1alpha1.OwnerNameLabel] == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.GetNamespace(), Name: labels[v1alpha1.OwnerNameLabel]}}}
	}
}

// ControllerUID indexes objects by the UID of their controller of the
// given API version and kind, so each reconcile lists only its own Jobs.
func ControllerUID(apiVersion, kind string) client.IndexerFunc {
	return func(o client.Object) []string {
		owner := metav1.GetControllerOf(o)
		if owner == nil || owner.Kind != kind || owner.APIVersion != apiVersion {
			return nil
		}
		return []string{string(owner.UID)}
	}
}

// Emit records events on obj.
func Emit(recorder record.EventRecorder, obj client.Object, events []warmup.Event) {
	for _, e := range events {
		recorder.Event(obj, e.Type, e.Reason, e.Message)
	}
}
