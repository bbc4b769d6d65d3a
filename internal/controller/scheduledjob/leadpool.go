package scheduledjob

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// ScheduledJobs with lead Auto whose pods land on the same nodes share what
// they measure (warmup.LeadPool, warmup.ChooseSharedLead).

// leadPoolKey indexes ScheduledJobs with lead Auto by their lead pool, so
// each one's reconcile finds the peers whose measurements it shares.
const leadPoolKey = ".spec.warmUp.leadPool"

func indexLeadPool(obj client.Object) []string {
	if pool := leadPoolOf(obj.(*v1alpha1.ScheduledJob)); pool != "" {
		return []string{pool}
	}
	return nil
}

// leadPoolOf is the lead pool of a ScheduledJob with lead Auto, or "".
func leadPoolOf(sj *v1alpha1.ScheduledJob) string {
	if w := sj.Spec.WarmUp; w == nil || !w.Lead.Auto {
		return ""
	}
	return warmup.LeadPool(&sj.Spec.JobTemplate.Spec.Template.Spec)
}

// gatherLeadPeers reads, for a ScheduledJob with lead Auto, the last
// warm-ups of the others in its lead pool, in every namespace the cache
// holds: node pools are the cluster's. Read without copies (the planner
// only reads them).
func (c *Controller) gatherLeadPeers(ctx context.Context, sj *v1alpha1.ScheduledJob) ([]warmup.Peer, error) {
	pool := leadPoolOf(sj)
	if pool == "" {
		return nil, nil
	}
	var list v1alpha1.ScheduledJobList
	if err := c.kubeClient.List(ctx, &list, client.MatchingFields{leadPoolKey: pool}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	var peers []warmup.Peer
	for i := range list.Items {
		peer := &list.Items[i]
		if peer.UID == sj.UID || peer.Status.WarmUp == nil {
			continue
		}
		peers = append(peers, warmup.Peer{Name: peer.Namespace + "/" + peer.Name, Last: peer.Status.WarmUp, LastStart: peer.Status.LastRunStart})
	}
	return peers, nil
}

// leadMeasured passes a ScheduledJob's status update that measured its
// lead pool's provisioning time: its warm-up's capacity came, it was
// late, or its run's start was measured.
var leadMeasured = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, updated := e.ObjectOld.(*v1alpha1.ScheduledJob), e.ObjectNew.(*v1alpha1.ScheduledJob)
		if leadPoolOf(updated) == "" || updated.Status.WarmUp == nil {
			return false
		}
		before, after := old.Status.WarmUp, updated.Status.WarmUp
		if before == nil {
			before = &v1alpha1.WarmUpStatus{}
		}
		return !equality.Semantic.DeepEqual(before.ReadyTime, after.ReadyTime) || before.Late != after.Late ||
			!equality.Semantic.DeepEqual(old.Status.LastRunStart, updated.Status.LastRunStart)
	},
}

// leadPeersOf enqueues the other ScheduledJobs of obj's lead pool.
func (c *Controller) leadPeersOf(ctx context.Context, obj client.Object) []reconcile.Request {
	sj := obj.(*v1alpha1.ScheduledJob)
	var list v1alpha1.ScheduledJobList
	if err := c.kubeClient.List(ctx, &list, client.MatchingFields{leadPoolKey: leadPoolOf(sj)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil // the peers learn it at their next reconcile
	}
	var requests []reconcile.Request
	for i := range list.Items {
		if peer := &list.Items[i]; peer.UID != sj.UID {
			requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: peer.Namespace, Name: peer.Name}})
		}
	}
	return requests
}
