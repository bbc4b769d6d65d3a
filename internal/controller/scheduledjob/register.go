package scheduledjob

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/owners"
	"github.com/ontime-dev/ontime/internal/controller/spreadledger"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
)

// Registration: what the controller watches, its RBAC, its indexes and
// its retry backoff.

// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs/status,verbs=patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get

// Register adds the controller to mgr. Workers is the number of
// ScheduledJobs reconciled at once.
func (c *Controller) Register(ctx context.Context, mgr ctrl.Manager, workers int) error {
	if err := Index(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	informer, err := mgr.GetCache().GetInformer(ctx, &v1alpha1.ScheduledJob{})
	if err != nil {
		return err
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, updated any) { c.known.observed(updated) },
	}); err != nil {
		return err
	}
	return c.loop.Register(mgr, owners.Registration{
		Name:      c.Name(),
		OwnerKind: "ScheduledJob",
		// Status writes change neither generation nor annotations, so they
		// do not trigger another reconcile (upstream re-syncs on every one
		// of its own status updates).
		Predicates: []predicate.Predicate{predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})},
		Options: controller.Options{
			MaxConcurrentReconciles: workers,
			RateLimiter:             jobcontrol.FailureBackoff(),
		},
		Watch: func(b *builder.Builder) *builder.Builder {
			// Concurrency groups: their predictions place members' warm-up
			// and their runs' predicted finish.
			b = warmupobjects.WatchGroups(mgr, b, func(ctx context.Context, value string) []reconcile.Request {
				return membersReadingGroup(ctx, mgr.GetClient(), value)
			})
			return b.
				// A measurement of a lead pool's provisioning time: its
				// peers' next warm-ups may begin earlier or later.
				Watches(&v1alpha1.ScheduledJob{}, handler.EnqueueRequestsFromMapFunc(c.leadPeersOf), builder.WithPredicates(leadMeasured)).
				// Spread groups' ledgers: a rebalance moves their members.
				Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(spreadledger.Members), builder.WithPredicates(spreadledger.Rebalanced))
		},
	})
}

// Index adds the indexes the controller lists with: Jobs by their
// ScheduledJob, ScheduledJobs by their concurrency group, and those with
// lead Auto by their lead pool.
func Index(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &batchv1.Job{}, jobcontrol.ScheduledJobOwnerKey, jobcontrol.ControllerUID(v1alpha1.GroupVersion.String(), "ScheduledJob")); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &v1alpha1.ScheduledJob{}, jobcontrol.ScheduledJobGroupKey, jobcontrol.IndexScheduledJobGroup); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &v1alpha1.ScheduledJob{}, leadPoolKey, indexLeadPool)
}
