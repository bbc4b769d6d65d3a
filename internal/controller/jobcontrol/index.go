package jobcontrol

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// ScheduledJobOwnerKey indexes Jobs by the UID of the ScheduledJob that
// controls them, so each reconcile lists only its own Jobs from the cache.
const ScheduledJobOwnerKey = ".metadata.controller.uid"

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

// ScheduledJobGroupKey indexes the ScheduledJobs by the concurrency group
// they join (v1alpha1.GroupIndexValue): the group lists its members' next
// runs with it, and a group's change reconciles its members with warm-up.
const ScheduledJobGroupKey = ".spec.concurrencyGroup"

// IndexScheduledJobGroup is ScheduledJobGroupKey's index function.
func IndexScheduledJobGroup(obj client.Object) []string {
	sj := obj.(*v1alpha1.ScheduledJob)
	if ref := sj.Spec.ConcurrencyGroup; ref != nil {
		return []string{v1alpha1.GroupIndexValue(ref.Kind, ref.Key(sj.Namespace))}
	}
	return nil
}

// CronJobGroupKey indexes the CronJobs by the concurrency group their
// annotation joins (v1alpha1.GroupIndexValue): a group lists its member
// CronJobs' next runs with it, and a group's change reconciles the members
// whose warm-up reads its predictions.
const CronJobGroupKey = ".metadata.annotations.concurrencyGroup"

// CronJobOwnerKey indexes Jobs by the UID of the CronJob that controls
// them: CronJob warm-up lists a CronJob's runs by it, and a concurrency
// group the runs of its member CronJobs that the Job webhook did not see.
const CronJobOwnerKey = ".metadata.cronjob.uid"

// IndexCronJobs adds CronJobGroupKey's and CronJobOwnerKey's indexes. A
// process adds them once, for all of their readers
// (internal/controller.Register).
func IndexCronJobs(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &batchv1.CronJob{}, CronJobGroupKey, IndexCronJobGroup); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &batchv1.Job{}, CronJobOwnerKey, IndexCronJobOwner)
}

// IndexCronJobOwner is CronJobOwnerKey's index function.
var IndexCronJobOwner = ControllerUID(batchv1.SchemeGroupVersion.String(), "CronJob")

// IndexCronJobGroup is CronJobGroupKey's index function.
func IndexCronJobGroup(obj client.Object) []string {
	if ref, ok := v1alpha1.CronJobGroupRef(obj.GetAnnotations()); ok {
		return []string{v1alpha1.GroupIndexValue(ref.Kind, ref.Key(obj.GetNamespace()))}
	}
	return nil
}
