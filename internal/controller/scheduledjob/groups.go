package scheduledjob

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// A concurrency group's member with warm-up places it before the group's
// predicted start of each run (status.upcoming, status.queue,
// status.newRunAdmission; warmup.PredictAdmission): its reconcile reads the
// group, and a change of the group's status reconciles its members with
// warm-up.

// group reads, for a member with warm-up, its concurrency group from the
// cache (warmupobjects.Group); the zero Group when it is not such a
// member, the group is not there, or its API is not served.
func (c *Controller) group(ctx context.Context, sj *v1alpha1.ScheduledJob) (warmup.Group, error) {
	if sj.Spec.ConcurrencyGroup == nil || sj.Spec.WarmUp == nil {
		return warmup.Group{}, nil
	}
	return warmupobjects.Group(ctx, c.kubeClient, *sj.Spec.ConcurrencyGroup, sj.Namespace)
}

// warmedMembersOf are the members with warm-up of the group whose index
// value is value, to reconcile when the group changes.
func warmedMembersOf(ctx context.Context, c client.Reader, value string) []reconcile.Request {
	var list v1alpha1.ScheduledJobList
	if err := c.List(ctx, &list, client.MatchingFields{jobcontrol.ScheduledJobGroupKey: value}, client.UnsafeDisableDeepCopy); err != nil {
		return nil // each learns it at its next reconcile
	}
	var requests []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.WarmUp != nil {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return requests
}
