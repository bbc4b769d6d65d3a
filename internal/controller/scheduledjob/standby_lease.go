package scheduledjob

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
)

// A leader stopped gracefully (a rolling update, a drain: SIGTERM) releases
// the leader election Lease once its controllers have stopped. From then on
// no replica leads until a standby's next attempt to take the Lease, up to
// --leader-elect-retry-period (2 s) later, and the new leader's controller
// then starts by reconciling every ScheduledJob. Meanwhile nothing but the
// standby starts runs, so waiting its grace for a leader that is gone only
// makes them late: measured in make chaos's TestGracefulHandover, a stop
// 300 ms before the minute made that minute's runs up to 1.33 s later than
// the undisturbed minutes'. So the standby watches the Lease, and while it
// names no holder the standby acts at each run's time, without its grace.

// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,verbs=list;watch

// FollowLease makes s watch the leader election Lease key and act without
// its grace while the Lease is released. Call it before Register.
func (s *Standby) FollowLease(key types.NamespacedName) *Standby {
	s.lease = &key
	return s
}

// currentGrace is how long after a run's time the standby starts it.
func (s *Standby) currentGrace() time.Duration {
	if s.leaseReleased.Load() {
		return 0
	}
	return s.grace
}

// leaseSource watches the one Lease s follows, through a cache of its own:
// the manager's would watch every Lease of the cluster (each node renews
// one every 10 s).
func (s *Standby) leaseSource(mgr manager.Manager) (source.Source, error) {
	leases, err := recovery.NewCache(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		DefaultNamespaces: map[string]cache.Config{s.lease.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&coordinationv1.Lease{}: {Field: fields.OneTermEqualSelector("metadata.name", s.lease.Name)},
		},
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(startedWithCaches{leases}); err != nil {
		return nil, err
	}
	return source.Kind(leases, &coordinationv1.Lease{}, handler.TypedEnqueueRequestsFromMapFunc(s.leaseChanged)), nil
}

// leaseChanged records whether the Lease is released and, when it has just
// been, queues every ScheduledJob: their runs due now were planned for
// after the grace.
func (s *Standby) leaseChanged(ctx context.Context, lease *coordinationv1.Lease) []reconcile.Request {
	holder := lease.Spec.HolderIdentity
	released := holder == nil || *holder == ""
	if wasReleased := s.leaseReleased.Swap(released); !released || wasReleased {
		return nil
	}
	all := &v1alpha1.ScheduledJobList{}
	if err := s.kubeClient.List(ctx, all); err != nil {
		return nil // the cache lists without error once synced
	}
	requests := make([]reconcile.Request, 0, len(all.Items))
	for _, sj := range all.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&sj)})
	}
	return requests
}

// startedWithCaches has the manager start a cache with its own, on every
// replica: a Runnable it does not know as a cache runs only on the leader,
// and the standby's Lease source would never sync.
type startedWithCaches struct{ cache.Cache }

func (c startedWithCaches) GetCache() cache.Cache { return c.Cache }
