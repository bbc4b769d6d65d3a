package scheduledjob

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
)

// A concurrency group's member with warm-up places it before the group's
// predicted start of each run (status.upcoming, status.queue,
// status.newRunAdmission; warmup.PredictAdmission), and a member with a
// deadline predicts a waiting run's start there: its reconcile reads the
// group, and a change of the group's status reconciles those members.

// membersReadingGroup are the members with warm-up or a deadline of the
// group whose index value is value, to reconcile when the group changes.
func membersReadingGroup(ctx context.Context, c client.Reader, value string) []reconcile.Request {
	var list v1alpha1.ScheduledJobList
	if err := c.List(ctx, &list, client.MatchingFields{jobcontrol.ScheduledJobGroupKey: value}, client.UnsafeDisableDeepCopy); err != nil {
		return nil // each learns it at its next reconcile
	}
	var requests []reconcile.Request
	for i := range list.Items {
		if spec := list.Items[i].Spec; spec.WarmUp != nil || spec.Deadline != nil {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return requests
}
