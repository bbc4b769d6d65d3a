package standby

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
)

// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,verbs=list;watch

// Register adds the standby to mgr, on every replica (it needs no
// leadership). lease, when set, is the leader election Lease: while it
// names no holder the standby acts at each run's time. rateLimiter is the
// leader controller's, for the same retries.
func (s *Standby) Register(mgr ctrl.Manager, workers int, lease *types.NamespacedName, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) error {
	retrier, err := recovery.AddRetrier(mgr)
	if err != nil {
		return err
	}
	if err := s.followJobCreations(mgr); err != nil {
		return err
	}
	bldr := ctrl.NewControllerManagedBy(mgr)
	if lease != nil {
		leases, err := s.leaseSource(mgr, *lease)
		if err != nil {
			return err
		}
		bldr = bldr.WatchesRawSource(leases)
	}
	return bldr.
		Named(s.Name()).
		For(&v1alpha1.ScheduledJob{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&batchv1.Job{}).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: workers,
			NeedLeaderElection:      ptr.To(false),
			RateLimiter:             rateLimiter,
		}).
		WatchesRawSource(retrier.Source()).
		Complete(retrier.Reconciler(s))
}

// followJobCreations has the standby told when its cache shows a run's Job
// created (leaderBusyFor). The informer's first list adds the Jobs that
// exist: only those created a moment ago count.
func (s *Standby) followJobCreations(mgr ctrl.Manager) error {
	informer, err := mgr.GetCache().GetInformer(context.Background(), &batchv1.Job{})
	if err != nil {
		return err
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		job, ok := obj.(*batchv1.Job)
		if ok && job.Labels[v1alpha1.ScheduledJobLabel] != "" && s.clock.Since(job.CreationTimestamp.Time) < 2*time.Second {
			s.JobCreated(client.ObjectKeyFromObject(job))
		}
	}})
	return err
}

// leaseSource watches the one Lease, through a cache of its own: the
// manager's would watch every Lease of the cluster (each node renews one
// every 10 s).
func (s *Standby) leaseSource(mgr ctrl.Manager, lease types.NamespacedName) (source.Source, error) {
	leases, err := recovery.NewCache(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		DefaultNamespaces: map[string]cache.Config{lease.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&coordinationv1.Lease{}: {Field: fields.OneTermEqualSelector("metadata.name", lease.Name)},
		},
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(startedWithCaches{leases}); err != nil {
		return nil, err
	}
	all := func(ctx context.Context) []reconcile.Request {
		list := &v1alpha1.ScheduledJobList{}
		if err := mgr.GetClient().List(ctx, list); err != nil {
			return nil // the cache lists without error once synced
		}
		requests := make([]reconcile.Request, 0, len(list.Items))
		for _, sj := range list.Items {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&sj)})
		}
		return requests
	}
	var lastRenewal time.Time // the Lease's events come one at a time
	return source.Kind(leases, &coordinationv1.Lease{}, handler.TypedEnqueueRequestsFromMapFunc(
		func(ctx context.Context, lease *coordinationv1.Lease) []reconcile.Request {
			// A renewal seen, not the renewTime itself: the holder's clock
			// is not the standby's. The first one seen may be old.
			if renewed := lease.Spec.RenewTime; renewed != nil {
				if !lastRenewal.IsZero() && !renewed.Time.Equal(lastRenewal) {
					s.LeaseRenewed()
				}
				lastRenewal = renewed.Time
			}
			if s.LeaseChanged(lease.Spec.HolderIdentity) {
				return all(ctx)
			}
			return nil
		})), nil
}

// LeaseRenewed tells the standby its Lease watch shows the holder just
// renewed the Lease: the leader is alive (leaderBusy).
func (s *Standby) LeaseRenewed() { s.memory.leaseRenewedAt(s.clock.Now()) }

// LeaseChanged records whether the Lease names a holder, and reports
// whether it has just been released: every ScheduledJob's due run was
// planned for after the grace, and is now due at once.
func (s *Standby) LeaseChanged(holder *string) (justReleased bool) {
	released := holder == nil || *holder == ""
	return released && !s.memory.leaseChanged(released)
}

// startedWithCaches has the manager start a cache with its own, on every
// replica: a Runnable it does not know as a cache runs only on the leader,
// and the standby's Lease source would never sync.
type startedWithCaches struct{ cache.Cache }

func (c startedWithCaches) GetCache() cache.Cache { return c.Cache }
