// Package backfill is the Backfill controller: it reads a Backfill, its
// ScheduledJob and the Jobs of its times, has internal/backfillplan decide, and
// writes. It runs on the leader only.
package backfill

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/backfillplan"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/requeue"
	"github.com/ontime-dev/ontime/internal/controller/statuswrite"
	"github.com/ontime-dev/ontime/internal/wakeup"
)

// +kubebuilder:rbac:groups=ontime.dev,resources=backfills,verbs=get;list;watch
// +kubebuilder:rbac:groups=ontime.dev,resources=backfills/status,verbs=patch
// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete

// Controller reconciles Backfills.
type Controller struct {
	// cached reads Jobs and ScheduledJobs; live reads the Backfill and the
	// Jobs of its claims (what starts a time must not come from a cache
	// behind).
	cached   client.Client
	live     client.Reader
	jobs     jobcontrol.Writer
	clock    clock.PassiveClock
	recorder record.EventRecorder
}

// NewController returns a Backfill controller.
func NewController(cached client.Client, live client.Reader, clk clock.PassiveClock, recorder record.EventRecorder) *Controller {
	return &Controller{cached: cached, live: live, jobs: jobcontrol.NewWriter(cached, live), clock: clk, recorder: recorder}
}

// Register adds the controller to mgr: it reconciles a Backfill when it
// changes, when one of its Jobs does, and when its ScheduledJob does.
func (c *Controller) Register(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("backfill").
		For(&v1alpha1.Backfill{}).
		Owns(&batchv1.Job{}).
		Watches(&v1alpha1.ScheduledJob{}, handler.EnqueueRequestsFromMapFunc(c.backfillsOf)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, RateLimiter: jobcontrol.FailureBackoff()}).
		Complete(c)
}

// backfillsOf are the Backfills of a ScheduledJob.
func (c *Controller) backfillsOf(ctx context.Context, obj client.Object) []reconcile.Request {
	var list v1alpha1.BackfillList
	if err := c.cached.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var requests []reconcile.Request
	for _, bf := range list.Items {
		if bf.Spec.ScheduledJobName == obj.GetName() {
			requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: bf.Namespace, Name: bf.Name}})
		}
	}
	return requests
}

// Reconcile plans one step of a Backfill and carries it out: the status
// first (conditional on the resourceVersion read), then deletions and
// creations, which the status write has made this actor's to do.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	bf := &v1alpha1.Backfill{}
	if err := c.live.Get(ctx, req.NamespacedName, bf); err != nil || bf.DeletionTimestamp != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	in, err := c.gather(ctx, bf)
	if err != nil {
		return reconcile.Result{}, err
	}
	plan := backfillplan.Decide(in)
	read := bf.DeepCopy()
	bf.Status = plan.Status
	if _, err := statuswrite.Write(ctx, c.cached, read, bf, nil); err != nil {
		// A conflict: someone wrote since; plan again from what they
		// wrote.
		return reconcile.Result{}, err
	}
	for _, e := range plan.Events {
		c.recorder.Event(bf, e.Type, e.Reason, e.Message)
	}
	if err := c.carryOut(ctx, bf, plan); err != nil {
		return reconcile.Result{}, err
	}
	if len(plan.Deletes) > 0 {
		// A deleted Job of the live schedule sends this controller no
		// event: look again for the time it frees.
		return requeue.After(time.Second), nil
	}
	return requeue.After(wakeup.Delay(c.clock.Now(), plan.Wake)), nil
}

// gather reads what a plan is made from.
func (c *Controller) gather(ctx context.Context, bf *v1alpha1.Backfill) (backfillplan.Input, error) {
	in := backfillplan.Input{Backfill: bf, Now: c.clock.Now(), Jobs: map[string]*batchv1.Job{}}
	sj := &v1alpha1.ScheduledJob{}
	switch err := c.cached.Get(ctx, types.NamespacedName{Namespace: bf.Namespace, Name: bf.Spec.ScheduledJobName}, sj); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return in, err
	default:
		in.ScheduledJob = sj
	}
	// A claim's Job is read from the API server, so that a Job a
	// predecessor created is recorded at once (not created again, to
	// AlreadyExists), and a Job gone (deleted by hand, or by its TTL) is
	// counted as gone, not as the cache last showed it. Exactly once does
	// not rest on it: the claim and the history fence do.
	claims := make([]jobcontrol.Recorded, len(bf.Status.Active))
	for i, ref := range bf.Status.Active {
		claims[i] = jobcontrol.Recorded{NamespacedName: types.NamespacedName{Namespace: bf.Namespace, Name: ref.Name}}
	}
	opts := []client.ListOption{client.InNamespace(bf.Namespace), client.MatchingLabels{v1alpha1.ScheduledJobLabel: bf.Spec.ScheduledJobName}}
	jobs, _, err := jobcontrol.CachedAndRecorded(ctx, c.cached, c.live, opts, claims, jobcontrol.Always, nil)
	if err != nil {
		return in, err
	}
	for _, job := range jobs {
		in.Jobs[job.Name] = job
	}
	return in, nil
}

// carryOut deletes, then creates. A Job being replaced (redo) is created
// in a later pass, once its predecessor is gone.
func (c *Controller) carryOut(ctx context.Context, bf *v1alpha1.Backfill, plan backfillplan.Step) error {
	for _, job := range plan.Deletes {
		if _, err := c.jobs.Delete(ctx, job); err != nil {
			return err
		}
	}
	for _, job := range plan.Creates {
		// A Job of its name already there (jobcontrol.Exists, not read)
		// is the time's, created before (the claim made it this actor's),
		// or another's: either way nothing is created again, and the next
		// gather, which reads the claims' Jobs live, records it.
		if creation, _, err := c.jobs.Create(ctx, nil, job); creation == jobcontrol.Refused {
			// A quota, a policy, a bad template: said on the Backfill,
			// and retried; the time stays claimed.
			c.recorder.Eventf(bf, corev1.EventTypeWarning, v1alpha1.ReasonFailedCreate, "creating Job %s: %v", job.Name, err)
			return err
		}
	}
	return nil
}
