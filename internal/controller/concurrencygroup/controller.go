// Package concurrencygroup is the controller of ConcurrencyGroups and
// ClusterConcurrencyGroups: it reads a group from the API server and its
// members' Jobs, has internal/concurrency decide, writes the group's status
// (conditional), then releases, marks missed and deletes Jobs. It runs on
// every replica, leader or not: its writes are conditional, so any number
// of them may decide at once, and a freed slot is handed over without
// waiting for a new leader.
package concurrencygroup

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/concurrency"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/requeue"
	"github.com/ontime-dev/ontime/internal/controller/statuswrite"
	"github.com/ontime-dev/ontime/internal/wakeup"
)

// +kubebuilder:rbac:groups=ontime.dev,resources=concurrencygroups;clusterconcurrencygroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=ontime.dev,resources=concurrencygroups/status;clusterconcurrencygroups/status,verbs=patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;update;delete

// Controller reconciles the groups of one kind.
type Controller struct {
	kind string
	// cached reads the groups' Jobs and writes; live reads the group and
	// the Jobs of its entries the cache lacks.
	cached   client.Client
	live     client.Reader
	jobs     jobcontrol.Writer
	clock    clock.PassiveClock
	recorder record.EventRecorder
	metrics  *Metrics
}

// New returns the controller of the groups of kind
// (v1alpha1.KindConcurrencyGroup or KindClusterConcurrencyGroup).
func New(kind string, cached client.Client, live client.Reader, clk clock.PassiveClock, recorder record.EventRecorder, metrics *Metrics) *Controller {
	return &Controller{kind: kind, cached: cached, live: live, jobs: jobcontrol.NewWriter(cached, live), clock: clk, recorder: recorder, metrics: metrics}
}

// Register adds the controller to mgr, on every replica: it reconciles a
// group when it changes, when one of its Jobs does, when a member's next
// run moves, and a cluster group with a namespaceSelector when a
// namespace's labels change.
func (c *Controller) Register(mgr ctrl.Manager, workers int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(map[string]string{v1alpha1.KindConcurrencyGroup: "concurrencygroup", v1alpha1.KindClusterConcurrencyGroup: "clusterconcurrencygroup"}[c.kind]).
		For(c.newGroup()).
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(c.groupOf)).
		Watches(&v1alpha1.ScheduledJob{}, handler.EnqueueRequestsFromMapFunc(c.groupOfMember), builder.WithPredicates(nextRunMoved)).
		Watches(&batchv1.CronJob{}, handler.EnqueueRequestsFromMapFunc(c.groupsOfCronJob), builder.WithPredicates(cronJobRunMoved))
	if c.kind == v1alpha1.KindClusterConcurrencyGroup {
		b = b.Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(c.groupsWithSelector), builder.WithPredicates(predicate.LabelChangedPredicate{}))
	}
	return b.
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, NeedLeaderElection: ptr.To(false),
			RateLimiter: jobcontrol.FailureBackoff()}).
		Complete(c)
}

func (c *Controller) newGroup() client.Object {
	if c.kind == v1alpha1.KindClusterConcurrencyGroup {
		return &v1alpha1.ClusterConcurrencyGroup{}
	}
	return &v1alpha1.ConcurrencyGroup{}
}

// parts are a group's spec and status, whichever its kind.
func parts(group client.Object) (*v1alpha1.ConcurrencyGroupSpec, *v1alpha1.ConcurrencyGroupStatus) {
	switch g := group.(type) {
	case *v1alpha1.ClusterConcurrencyGroup:
		return &g.Spec.ConcurrencyGroupSpec, &g.Status
	case *v1alpha1.ConcurrencyGroup:
		return &g.Spec, &g.Status
	}
	panic(fmt.Sprintf("not a concurrency group: %T", group))
}

// groupOf is the group of a member's Job, of this controller's kind: the
// group its label names, else (a Job the Job webhook did not see) the
// group its CronJob's annotation names now.
func (c *Controller) groupOf(ctx context.Context, obj client.Object) []reconcile.Request {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return nil
	}
	if kind, name, labeled := v1alpha1.GroupOf(job); labeled {
		if kind != c.kind {
			return nil
		}
		return []reconcile.Request{{NamespacedName: v1alpha1.ConcurrencyGroupRef{Kind: kind, Name: name}.Key(job.Namespace)}}
	}
	owner := metav1.GetControllerOf(job)
	if owner == nil || owner.Kind != "CronJob" || owner.APIVersion != batchv1.SchemeGroupVersion.String() {
		return nil
	}
	cronJob := &batchv1.CronJob{}
	if err := c.cached.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: owner.Name}, cronJob); err != nil || cronJob.UID != owner.UID {
		return nil
	}
	return c.groupsOfCronJob(ctx, cronJob)
}

// Reconcile plans one step of a group and carries it out: the status
// first (conditional on the resourceVersion read), then the releases, the
// misses and the deletions, which the status write has made this
// controller's to do.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	group := c.newGroup()
	if err := c.live.Get(ctx, req.NamespacedName, group); err != nil {
		if apierrors.IsNotFound(err) {
			c.metrics.forget(c.kind, req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	spec, status := parts(group)
	var cronJobs batchv1.CronJobList
	value := v1alpha1.GroupIndexValue(c.kind, client.ObjectKeyFromObject(group))
	if err := c.cached.List(ctx, &cronJobs, client.MatchingFields{jobcontrol.CronJobGroupKey: value}, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, err
	}
	jobs, err := c.gather(ctx, group, status, cronJobs.Items)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := c.clock.Now()
	upcoming, err := c.upcoming(ctx, group, cronJobs.Items, now)
	if err != nil {
		return reconcile.Result{}, err
	}
	excluded, err := c.excluded(ctx, group, jobs, upcoming)
	if err != nil {
		return reconcile.Result{}, err
	}
	plan := concurrency.Decide(concurrency.Input{Spec: *spec, Status: *status, Generation: group.GetGeneration(), Jobs: jobs, Upcoming: upcoming, Excluded: excluded, Now: now})
	read := group.DeepCopyObject().(client.Object)
	*status = plan.Status
	if _, err := statuswrite.Write(ctx, c.cached, read, group, nil); err != nil {
		// A conflict: another controller decided since; plan again from
		// what it wrote.
		return reconcile.Result{}, err
	}
	c.metrics.observe(c.kind, group, plan)
	if plan.OverLimit != "" {
		c.recorder.Event(group, corev1.EventTypeWarning, v1alpha1.ReasonOverLimit, plan.OverLimit)
	}
	if err := c.carryOut(ctx, group, plan); err != nil {
		return reconcile.Result{}, err
	}
	return requeue.After(wakeup.Delay(c.clock.Now(), plan.Wake)), nil
}

// gather lists the group's Jobs from the cache, and reads from the API
// server the Jobs of the entries the cache lacks: a cache behind must not
// free a slot whose run is still running. The member CronJobs' running
// Jobs that carry no group's label count too (pastTheWebhook).
func (c *Controller) gather(ctx context.Context, group client.Object, status *v1alpha1.ConcurrencyGroupStatus, cronJobs []batchv1.CronJob) ([]*batchv1.Job, error) {
	label := v1alpha1.GroupLabel
	opts := []client.ListOption{client.InNamespace(group.GetNamespace())}
	if c.kind == v1alpha1.KindClusterConcurrencyGroup {
		label, opts = v1alpha1.ClusterGroupLabel, nil
	}
	admitted := make([]jobcontrol.Recorded, len(status.Active))
	for i, entry := range status.Active {
		admitted[i] = jobcontrol.Recorded{NamespacedName: types.NamespacedName{Namespace: entry.Namespace, Name: entry.Name}, UID: entry.UID}
	}
	jobs, _, err := jobcontrol.CachedAndRecorded(ctx, c.cached, c.live, append(opts, client.MatchingLabels{label: group.GetName()}), admitted, jobcontrol.WhenUncached, nil)
	if err != nil {
		return nil, err
	}
	bypassed, err := c.pastTheWebhook(ctx, cronJobs)
	return append(jobs, bypassed...), err
}

// pastTheWebhook are the running Jobs of the member CronJobs that carry no
// group's label: created while no replica served the Job webhook
// (failurePolicy Ignore), or before their CronJob joined. They run
// without an admission, so they count in the group the CronJob's
// annotation names now. A suspended one is not the group's to release
// (suspended by someone else), and a labeled one counts in the group of
// its label, wherever its CronJob has moved since.
func (c *Controller) pastTheWebhook(ctx context.Context, cronJobs []batchv1.CronJob) ([]*batchv1.Job, error) {
	var bypassed []*batchv1.Job
	for i := range cronJobs {
		var list batchv1.JobList
		if err := c.cached.List(ctx, &list, client.InNamespace(cronJobs[i].Namespace), client.MatchingFields{jobcontrol.CronJobOwnerKey: string(cronJobs[i].UID)}); err != nil {
			return nil, err
		}
		for j := range list.Items {
			job := &list.Items[j]
			if _, _, labeled := v1alpha1.GroupOf(job); labeled || ptr.Deref(job.Spec.Suspend, false) {
				continue
			}
			if _, done := v1alpha1.JobFinished(job); !done && job.DeletionTimestamp == nil {
				bypassed = append(bypassed, job)
			}
		}
	}
	return bypassed, nil
}

// carryOut releases the admitted runs, then marks the missed ones and
// deletes the missed CronJobs' Jobs.
func (c *Controller) carryOut(ctx context.Context, group client.Object, plan concurrency.Dispatch) error {
	waited := map[types.UID]time.Duration{}
	for _, admission := range plan.Admitted {
		waited[admission.Job.UID] = admission.Waited
	}
	for _, job := range plan.Release {
		released, err := c.jobs.Release(ctx, job)
		if err != nil {
			return err
		}
		if wait, admitted := waited[job.UID]; released && admitted {
			c.metrics.waited(c.kind, group, wait)
			c.recorder.Eventf(concurrency.Owner(job), corev1.EventTypeNormal, v1alpha1.ReasonAdmitted,
				"started Job %s after waiting %s in %s %s", job.Name, wait.Round(time.Millisecond), c.kind, group.GetName())
		}
	}
	for _, job := range plan.Miss {
		deleteAlso, err := c.markMissed(ctx, group, job, v1alpha1.ReasonMissedInGroup,
			fmt.Sprintf("Job %s waited in %s %s past its starting deadline (%s): not run", job.Name, c.kind, group.GetName(), job.Annotations[v1alpha1.StartByAnnotation]))
		if err != nil {
			return err
		}
		plan.Delete = append(plan.Delete, deleteAlso...)
	}
	for _, job := range plan.Refuse {
		deleteAlso, err := c.markMissed(ctx, group, job, v1alpha1.ReasonNotSelected,
			fmt.Sprintf("Job %s not run: %s %s's spec.namespaceSelector does not select namespace %s", job.Name, c.kind, group.GetName(), job.Namespace))
		if err != nil {
			return err
		}
		plan.Delete = append(plan.Delete, deleteAlso...)
	}
	for _, job := range plan.Delete {
		if _, err := c.jobs.Delete(ctx, job); err != nil {
			return err
		}
	}
	return nil
}

// markMissed marks a waiting run's Job missed, so that it never runs, and
// says why on its owner. It returns the Job to delete: a CronJob's, whose
// controller does not (a ScheduledJob's controller records the miss, then
// deletes it). Nothing is done if the Job was released or deleted since.
func (c *Controller) markMissed(ctx context.Context, group client.Object, job *batchv1.Job, reason, message string) ([]*batchv1.Job, error) {
	marked, err := c.jobs.MarkMissed(ctx, job, c.clock.Now())
	if marked == nil {
		return nil, err
	}
	c.metrics.missed(c.kind, group)
	c.recorder.Event(concurrency.Owner(job), corev1.EventTypeWarning, reason, message)
	if concurrency.OwnedByScheduledJob(job) {
		return nil, nil
	}
	return []*batchv1.Job{marked}, nil
}
