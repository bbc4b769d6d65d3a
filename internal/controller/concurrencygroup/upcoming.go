package concurrencygroup

import (
	"context"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/concurrency"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
)

// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch

// upcoming are the members' next runs, from the cache (by the index of
// members): a ScheduledJob's at its status.nextScheduleTime, a member
// CronJob's (cronJobs, listed by Reconcile) at the first time its schedule
// fires after now, as the CronJob controller reads it. The group predicts their admissions
// (status.upcoming), so that members due at the same minute learn which of
// them will wait.
func (c *Controller) upcoming(ctx context.Context, group client.Object, cronJobs []batchv1.CronJob, now time.Time) ([]concurrency.Upcoming, error) {
	value := v1alpha1.GroupIndexValue(c.kind, client.ObjectKeyFromObject(group))
	var list v1alpha1.ScheduledJobList
	if err := c.cached.List(ctx, &list, client.MatchingFields{jobcontrol.ScheduledJobGroupKey: value}, client.UnsafeDisableDeepCopy); err != nil {
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
	for i := range cronJobs {
		if run, ok := nextCronJobRun(&cronJobs[i], now); ok {
			runs = append(runs, run)
		}
	}
	return runs, nil
}

// nextCronJobRun is a member CronJob's next run: the first time its
// schedule fires after now, in its time zone, named as the CronJob
// controller names its Job; none while it is suspended or its schedule
// cannot be read (the CronJob controller reports that). Its priority is
// the annotation the Job webhook copies to its Jobs (0 if not a number
// from -1000 to 1000: the webhook refuses those Jobs).
func nextCronJobRun(cj *batchv1.CronJob, now time.Time) (concurrency.Upcoming, bool) {
	if ptr.Deref(cj.Spec.Suspend, false) {
		return concurrency.Upcoming{}, false
	}
	parser, err := v1alpha1.ScheduleParser(v1alpha1.KindCronJob, cj.Namespace+"/"+cj.Name, ptr.Deref(cj.Spec.TimeZone, ""), "")
	if err != nil {
		return concurrency.Upcoming{}, false
	}
	spec, err := parser.Parse(cj.Spec.Schedule)
	if err != nil {
		return concurrency.Upcoming{}, false
	}
	next := spec.Next(now)
	if next.IsZero() {
		return concurrency.Upcoming{}, false
	}
	run := concurrency.Upcoming{Namespace: cj.Namespace, JobName: v1alpha1.RunJobName(cj.Name, next), Scheduled: next}
	if priority, err := strconv.Atoi(cj.Annotations[v1alpha1.GroupPriorityAnnotation]); err == nil && priority >= -1000 && priority <= 1000 {
		run.Priority = int32(priority)
	}
	return run, true
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

// groupsOfCronJob is the group of this controller's kind a CronJob joins,
// to predict its next run again. On a change, controller-runtime maps the
// CronJob before and after it, so a CronJob that moves to another group
// reconciles both.
func (c *Controller) groupsOfCronJob(_ context.Context, obj client.Object) []reconcile.Request {
	ref, ok := v1alpha1.CronJobGroupRef(obj.GetAnnotations())
	if !ok || (ref.Kind == v1alpha1.KindClusterConcurrencyGroup) != (c.kind == v1alpha1.KindClusterConcurrencyGroup) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: ref.Key(obj.GetNamespace())}}
}

// cronJobRunMoved passes a CronJob's changes that move its upcoming run:
// its schedule, time zone, suspension, or group and priority (its
// annotations).
var cronJobRunMoved = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*batchv1.CronJob)
		updated, okNew := e.ObjectNew.(*batchv1.CronJob)
		if !okOld || !okNew {
			return false
		}
		// Not any annotation: CronJob warm-up writes its state in one.
		oldRef, _ := v1alpha1.CronJobGroupRef(old.Annotations)
		newRef, _ := v1alpha1.CronJobGroupRef(updated.Annotations)
		return old.Spec.Schedule != updated.Spec.Schedule || ptr.Deref(old.Spec.TimeZone, "") != ptr.Deref(updated.Spec.TimeZone, "") ||
			ptr.Deref(old.Spec.Suspend, false) != ptr.Deref(updated.Spec.Suspend, false) || oldRef != newRef ||
			old.Annotations[v1alpha1.GroupPriorityAnnotation] != updated.Annotations[v1alpha1.GroupPriorityAnnotation]
	},
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
