// Package shared holds what ontime's controllers share: reading an owner's
// warm-up pods and a run's pods, the watches that map warm-up pods and
// Jobs to their owner, and recording events. Each controller keeps its
// own decisions; nothing here decides.
package shared

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// ScheduledJobOwnerKey indexes Jobs by the UID of the ScheduledJob that
// controls them, so each reconcile lists only its own Jobs from the cache.
const ScheduledJobOwnerKey = ".metadata.controller.uid"

// ScheduledJobJobs lists a ScheduledJob's Jobs from the cache and reads
// those its status.active names that the cache lacks (just created, or the
// cache is behind) from the API server, so that a slow cache is never
// taken for a deleted Job: a name status.active lists is missing from the
// result only if the API server does not have it.
func ScheduledJobJobs(ctx context.Context, cached, live client.Reader, sj *v1alpha1.ScheduledJob) ([]*batchv1.Job, error) {
	var list batchv1.JobList
	if err := cached.List(ctx, &list, client.InNamespace(sj.Namespace), client.MatchingFields{ScheduledJobOwnerKey: string(sj.UID)}); err != nil {
		return nil, err
	}
	jobs := make([]*batchv1.Job, 0, len(list.Items))
	cachedNames := map[string]bool{}
	for i := range list.Items {
		jobs = append(jobs, &list.Items[i])
		cachedNames[list.Items[i].Name] = true
	}
	for _, ref := range sj.Status.Active {
		// A claim (no UID) names a Job that may not exist yet: the
		// planner creates it, or finds it by name when the create fails.
		if cachedNames[ref.Name] || ref.UID == "" {
			continue
		}
		job := &batchv1.Job{}
		err := live.Get(ctx, types.NamespacedName{Namespace: sj.Namespace, Name: ref.Name}, job)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		case metav1.IsControlledBy(job, sj):
			jobs = append(jobs, job)
		}
	}
	return jobs, nil
}
