package concurrencygroup

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/concurrency"
	"github.com/ontime-dev/ontime/internal/controller/scheduledjob"
)

// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs,verbs=get;list;watch

// upcoming are the next runs of the ScheduledJobs that join the group, at
// their status.nextScheduleTime, from the cache (by the ScheduledJob
// controller's index of members): the group predicts their admissions
// (status.upcoming), so that members due at the same minute learn which of
// them will wait. Plain CronJobs publish no next run.
func (c *Controller) upcoming(ctx context.Context, group client.Object) ([]concurrency.Upcoming, error) {
	var list v1alpha1.ScheduledJobList
	members := client.MatchingFields{scheduledjob.MemberKey: scheduledjob.MemberIndexValue(c.kind, client.ObjectKeyFromObject(group))}
	if err := c.cached.List(ctx, &list, members, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	var runs []concurrency.Upcoming
	for i := range list.Items {
		sj := &list.Items[i]
		next := sj.Status.NextScheduleTime
		if next == nil || ptr.Deref(sj.Spec.Suspend, false) {
			continue
		}
		runs = append(runs, concurrency.Upcoming{Namespace: sj.Namespace, JobName: sj.JobName(next.Time), Scheduled: next.Time, Priority: sj.Spec.ConcurrencyGroup.Priority})
	}
	return runs, nil
}

// joinsOwnKind reports whether the ScheduledJob joins a group of this
// controller's kind.
func (c *Controller) joinsOwnKind(sj *v1alpha1.ScheduledJob) bool {
	ref := sj.Spec.ConcurrencyGroup
	return ref != nil && (ref.Kind == v1alpha1.KindClusterConcurrencyGroup) == (c.kind == v1alpha1.KindClusterConcurrencyGroup)
}

// groupOfMember is the group of this controller's kind a ScheduledJob
// joins, to predict its next run again.
func (c *Controller) groupOfMember(_ context.Context, obj client.Object) []reconcile.Request {
	sj, ok := obj.(*v1alpha1.ScheduledJob)
	if !ok {
		return nil
	}
	if !c.joinsOwnKind(sj) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: sj.Spec.ConcurrencyGroup.Key(sj.Namespace)}}
}

// nextRunMoved passes a ScheduledJob's changes that move its upcoming run:
// its next scheduled time, its group, its suspension.
var nextRunMoved = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*v1alpha1.ScheduledJob)
		updated, okNew := e.ObjectNew.(*v1alpha1.ScheduledJob)
		if !okOld || !okNew {
			return false
		}
		return !old.Status.NextScheduleTime.Equal(updated.Status.NextScheduleTime) ||
			ptr.Deref(old.Spec.Suspend, false) != ptr.Deref(updated.Spec.Suspend, false) ||
			!equality.Semantic.DeepEqual(old.Spec.ConcurrencyGroup, updated.Spec.ConcurrencyGroup)
	},
}
