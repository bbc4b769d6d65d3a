package scheduledjob

import (
	"cmp"
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
)

// A concurrency group's member with warm-up places it before the group's
// predicted start of each run (status.upcoming, status.queue,
// status.newRunAdmission; warmup.PredictAdmission): its reconcile reads the
// group, and a change of the group's status reconciles its members with
// warm-up.

// MemberKey indexes the ScheduledJobs by the concurrency group they join
// (MemberIndexValue): the group lists its members' next runs with it, and
// a group's change reconciles its members with warm-up.
const MemberKey = ".spec.concurrencyGroup"

// IndexMember is MemberKey's index function.
func IndexMember(obj client.Object) []string {
	sj := obj.(*v1alpha1.ScheduledJob)
	if ref := sj.Spec.ConcurrencyGroup; ref != nil {
		return []string{MemberIndexValue(ref.Kind, ref.Key(sj.Namespace))}
	}
	return nil
}

// MemberIndexValue is MemberKey's value for the group of kind at key:
// "Kind/namespace/name" (no namespace for a cluster group).
func MemberIndexValue(kind string, key types.NamespacedName) string {
	return cmp.Or(kind, v1alpha1.KindConcurrencyGroup) + "/" + key.Namespace + "/" + key.Name
}

// groupStatus reads, for a member with warm-up, the status of its
// concurrency group from the cache; nil when it is not such a member, the
// group is not there, or its API is not served.
func (c *Controller) groupStatus(ctx context.Context, sj *v1alpha1.ScheduledJob) (*v1alpha1.ConcurrencyGroupStatus, error) {
	if sj.Spec.ConcurrencyGroup == nil || sj.Spec.WarmUp == nil {
		return nil, nil
	}
	return warmupobjects.GroupStatus(ctx, c.kubeClient, *sj.Spec.ConcurrencyGroup, sj.Namespace)
}

// watchGroups reconciles a group's members with warm-up when the group
// changes, for the group kinds the API server serves (a cluster upgraded
// without the new CRDs runs without them).
func watchGroups(mgr ctrl.Manager, b *builder.Builder) *builder.Builder {
	for _, group := range []client.Object{&v1alpha1.ConcurrencyGroup{}, &v1alpha1.ClusterConcurrencyGroup{}} {
		gvks, _, err := mgr.GetScheme().ObjectKinds(group)
		if err != nil || len(gvks) == 0 {
			continue
		}
		if _, err := mgr.GetRESTMapper().RESTMapping(gvks[0].GroupKind(), gvks[0].Version); err != nil {
			continue // not served: registerGroups says so
		}
		kind := gvks[0].Kind
		b = b.Watches(group, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			return warmedMembersOf(ctx, mgr.GetClient(), MemberIndexValue(kind, client.ObjectKeyFromObject(obj)))
		}))
	}
	return b
}

// warmedMembersOf lists the members with warm-up of the group with this
// index value.
func warmedMembersOf(ctx context.Context, c client.Reader, value string) []reconcile.Request {
	var list v1alpha1.ScheduledJobList
	if err := c.List(ctx, &list, client.MatchingFields{MemberKey: value}, client.UnsafeDisableDeepCopy); err != nil {
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
