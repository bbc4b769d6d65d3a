package owners

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
)

// Registration is how the owners of one kind are watched.
type Registration struct {
	// Name names the controller in logs and metrics.
	Name string
	// OwnerKind is the owners' Kind, as their warm-up pods' owner
	// references name it.
	OwnerKind string
	// Predicates pass the changes of an owner worth a reconcile.
	Predicates []predicate.Predicate
	Options    controller.Options
	// Watch adds the kind's own watches, if any.
	Watch func(*builder.Builder) *builder.Builder
}

// Register adds the reconciler to mgr. Every kind of owner is reconciled
// when it changes, when a Job it controls changes and when one of its
// warm-up pods does; and a reconcile that failed while the API server did
// not answer is retried as soon as it answers again, not at the backoff.
func (r *Reconciler[O]) Register(mgr ctrl.Manager, reg Registration) error {
	retrier, err := recovery.AddRetrier(mgr)
	if err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(reg.Name).
		For(r.kind.New(), builder.WithPredicates(reg.Predicates...)).
		Owns(&batchv1.Job{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(warmupobjects.PodOwner(reg.OwnerKind))).
		WithOptions(reg.Options).
		WatchesRawSource(retrier.Source())
	if reg.Watch != nil {
		b = reg.Watch(b)
	}
	return b.Complete(retrier.Reconciler(r))
}
