// Package scheduledjob is the ScheduledJob controller: it gathers each
// ScheduledJob's Jobs, asks the planner what to do at the current time, and
// does it.
package scheduledjob

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/controller/shared"
	"github.com/ontime-dev/ontime/internal/controller/spreadledger"
	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Controller runs ScheduledJobs.
type Controller struct {
	kubeClient client.Client
	// apiReader reads from the API server, not the cache: it confirms that
	// an active Job missing from the cache is really gone.
	apiReader client.Reader
	clock     clock.PassiveClock
	recorder  record.EventRecorder
	// known holds what this controller read or wrote of each ScheduledJob
	// that its cache may not show yet.
	known knownObjects
	// reconciled are the ScheduledJobs reconciled since the controller
	// started (types.NamespacedName -> struct{}).
	reconciled sync.Map
	// listed are the namespaces whose ScheduledJobs it has listed from the
	// API server (string -> *namespaceListing).
	listed sync.Map
	// earlyStartImage runs `ontime wait` in EarlyStart pods.
	earlyStartImage string
	// defaults are the controller-wide defaults of warm-up.
	defaults v1alpha1.ControllerDefaults
	// ledgers place ScheduledJobs under a Balanced spread.
	ledgers *spreadledger.Store
	// undecodable are the ScheduledJobs stored with values this version
	// cannot decode, reported and left alone.
	undecodable undecodables
	// buffers are the CapacityBuffers of warm-up; set by Register.
	buffers *shared.Buffers
}

// Options configure the controller.
type Options struct {
	// EarlyStartImage is the image of EarlyStart's wait container.
	EarlyStartImage string
	// Defaults are the controller-wide defaults of warm-up
	// (--placeholder-image).
	Defaults v1alpha1.ControllerDefaults
	// SpreadNamespace is the namespace of the Balanced spread groups'
	// ConfigMaps: the controller's own.
	SpreadNamespace string
}

// NewController returns the controller. clk is its only source of time.
func NewController(kubeClient client.Client, apiReader client.Reader, clk clock.PassiveClock, recorder record.EventRecorder, opts Options) *Controller {
	return &Controller{kubeClient: kubeClient, apiReader: apiReader, clock: clk, recorder: recorder, earlyStartImage: opts.EarlyStartImage, defaults: opts.Defaults,
		ledgers: spreadledger.NewStore(kubeClient, apiReader, opts.SpreadNamespace)}
}

// Name identifies the controller in logs and metrics.
func (c *Controller) Name() string { return "scheduledjob.run" }

// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete

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
	if c.buffers, err = shared.NewBuffers(c.kubeClient, mgr.GetConfig(), c.clock); err != nil {
		return err
	}
	retrier, err := recovery.AddRetrier(mgr)
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(c.Name()).
		// Status writes change neither generation nor annotations, so they
		// do not trigger another reconcile (upstream re-syncs on every one
		// of its own status updates).
		For(&v1alpha1.ScheduledJob{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&batchv1.Job{}).
		// Warm-up pods only: the manager's cache holds no other pods.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(shared.WarmUpPodOwner("ScheduledJob"))).
		// A measurement of a lead pool's provisioning time: its peers'
		// next warm-ups may begin earlier or later.
		Watches(&v1alpha1.ScheduledJob{}, handler.EnqueueRequestsFromMapFunc(c.leadPeersOf), builder.WithPredicates(leadMeasured)).
		// Spread groups' ledgers: a rebalance moves their members.
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(spreadledger.Members), builder.WithPredicates(spreadledger.Rebalanced)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: workers,
			RateLimiter:             FailureBackoff(),
		}).
		// After an API outage, the failed reconciles are retried when the
		// API server answers, not up to 30 s later.
		WatchesRawSource(retrier.Source()).
		Complete(retrier.Reconciler(c))
}

// FailureBackoff retries a failed reconcile quickly and never waits longer
// than 30 s, so that a transient API error cannot push a run back by
// minutes (controller-runtime's default grows to 1000 s, and its overall
// 10-per-second bucket paced a standby's hundred retries after an outage
// over ten seconds).
func FailureBackoff() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](10*time.Millisecond, 30*time.Second)
}

// Index adds the indexes the controller lists with: Jobs by their
// ScheduledJob, and ScheduledJobs with lead Auto by their lead pool.
func Index(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &batchv1.Job{}, shared.ScheduledJobOwnerKey, shared.ControllerUID(v1alpha1.GroupVersion.String(), "ScheduledJob")); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &v1alpha1.ScheduledJob{}, leadPoolKey, indexLeadPool)
}

// Reconcile brings one ScheduledJob up to date. Its steps keep the
// invariants of docs/reliability.md ("Exactly once"): a run is started
// only from a status confirmed with the API server since this controller
// started; a Forbid run is claimed in status before its Job is created;
// and the status recording every run is written before any of their Jobs
// is deleted for history.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cached := &v1alpha1.ScheduledJob{}
	if err := c.kubeClient.Get(ctx, req.NamespacedName, cached); err != nil {
		if apierrors.IsNotFound(err) {
			c.known.forget(req.NamespacedName)
			c.undecodable.forget(req.NamespacedName)
			c.reconciled.Delete(req.NamespacedName)
			return reconcile.Result{}, c.ledgers.ForgetDeleted(ctx, req.NamespacedName)
		}
		return reconcile.Result{}, err
	}
	if cached.DecodeError != "" {
		c.undecodable.report(ctx, c, cached)
		return reconcile.Result{}, nil
	}
	c.undecodable.forget(req.NamespacedName)
	now := c.clock.Now()
	p, err := c.plan(ctx, cached, now, false)
	if err == nil && needsConfirmation(p.plan) && !c.known.isConfirmed(req.NamespacedName) {
		p, err = c.confirm(ctx, cached, now)
	}
	if err == nil && p.sj != nil && p.plan.Reports(v1alpha1.ReasonMissingJob) {
		// A Job reported missing is one the API server does not have; what
		// replaced it, if anything, must not be judged from a cache behind.
		p, err = c.plan(ctx, cached, now, true)
	}
	if err != nil || p.sj == nil {
		return reconcile.Result{}, err
	}
	result, err := c.carryOut(ctx, req.NamespacedName, p, now)
	if err == nil {
		c.reconciled.Store(req.NamespacedName, struct{}{})
	}
	return result, err
}

// planned is a plan and what it was made from: the ScheduledJob as the API
// server has it as far as this controller knows (stored), the same with
// the status not written yet (sj), and why its spread placement could not
// be read, if it could not.
type planned struct {
	stored, sj *v1alpha1.ScheduledJob
	plan       planner.Plan
	placeErr   error
}

// plan gathers what the planner reads and plans. It reads the ScheduledJob
// from the cache again: the copy the reconcile began with may be older
// than one the controller has since forgotten because the cache caught up.
func (c *Controller) plan(ctx context.Context, cached *v1alpha1.ScheduledJob, now time.Time, liveJobs bool) (planned, error) {
	stored, sj, err := c.view(ctx, client.ObjectKeyFromObject(cached))
	if err != nil || sj.UID != cached.UID || sj.DecodeError != "" {
		return planned{}, client.IgnoreNotFound(err) // gone or replaced: the next reconcile
	}
	in, err := c.gather(ctx, sj, now, liveJobs)
	if err != nil {
		return planned{}, err
	}
	// While its group's ledger cannot be read or written, a Balanced
	// ScheduledJob keeps the placement its status recorded, so runs go on;
	// one never placed is planned all the same, so its status says it waits
	// (SpreadPending), and the error retries.
	in.Placement, err = c.ledgers.Placement(ctx, sj, now)
	placeErr := err
	if placeErr != nil {
		in.Placement = sj.RecordedPlacement()
	}
	return planned{stored: stored, sj: sj, plan: planner.Compute(in), placeErr: placeErr}, nil
}

// view reads the ScheduledJob from the cache and lays over it what the
// controller knows (knownObjects.view), with no cache update forgotten in
// between.
func (c *Controller) view(ctx context.Context, key types.NamespacedName) (stored, current *v1alpha1.ScheduledJob, err error) {
	unlock := c.known.lock(key)
	defer unlock()
	cached := &v1alpha1.ScheduledJob{}
	if err := c.kubeClient.Get(ctx, key, cached); err != nil {
		return nil, nil, err
	}
	stored, current = c.known.view(cached)
	return stored, current, nil
}

// confirm reads the ScheduledJob from the API server and plans again: the
// first run this controller starts for it, or Job it reports missing, must
// be planned from a status no older than what the last leader wrote (a nil
// sj: it is gone). The first time, it lists the whole namespace instead:
// a new leader confirms all its ScheduledJobs with one request.
func (c *Controller) confirm(ctx context.Context, cached *v1alpha1.ScheduledJob, now time.Time) (planned, error) {
	key := client.ObjectKeyFromObject(cached)
	if err := c.confirmNamespace(ctx, cached.Namespace); err != nil {
		return planned{}, err
	}
	if !c.known.isConfirmed(key) {
		live := &v1alpha1.ScheduledJob{}
		if err := c.apiReader.Get(ctx, key, live); err != nil {
			return planned{}, client.IgnoreNotFound(err)
		}
		c.confirmWith(ctx, live)
	}
	if !c.known.isConfirmed(key) {
		return planned{}, nil // gone, or re-created: the next reconcile sees it
	}
	return c.plan(ctx, cached, now, false)
}

// confirmNamespace lists the namespace's ScheduledJobs from the API server
// once, however many reconciles ask at once.
func (c *Controller) confirmNamespace(ctx context.Context, namespace string) error {
	lock, _ := c.listed.LoadOrStore(namespace, &namespaceListing{})
	listing := lock.(*namespaceListing)
	listing.mu.Lock()
	defer listing.mu.Unlock()
	if listing.done {
		return nil
	}
	var list v1alpha1.ScheduledJobList
	if err := c.apiReader.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range list.Items {
		c.confirmWith(ctx, &list.Items[i])
	}
	listing.done = true
	return nil
}

// namespaceListing is whether a namespace's ScheduledJobs were listed.
type namespaceListing struct {
	mu   sync.Mutex
	done bool
}

// confirmWith records a ScheduledJob read from the API server, keeping a
// copy only while the cache is behind it.
func (c *Controller) confirmWith(ctx context.Context, live *v1alpha1.ScheduledJob) {
	if live.DecodeError != "" {
		return
	}
	c.known.saw(live)
	cached := &v1alpha1.ScheduledJob{}
	if err := c.kubeClient.Get(ctx, client.ObjectKeyFromObject(live), cached); err == nil {
		c.known.observed(cached)
	}
}

// needsConfirmation reports whether a plan must be made from a confirmed
// status: it creates a run's Job, or reports a Job missing that a cache
// behind the status may have shown.
func needsConfirmation(plan planner.Plan) bool {
	return plan.Create != nil || plan.Early != nil || plan.Trigger != nil || plan.Reports(v1alpha1.ReasonMissingJob)
}

// carryOut carries out the plan in the order the invariants need: claims,
// the runs, warm-up, the trigger's removal, the status, and only then the
// history cleanup. When it started a scheduled run it may stop after the
// runs and leave the rest to the next reconcile (deferStatus).
func (c *Controller) carryOut(ctx context.Context, key types.NamespacedName, p planned, now time.Time) (reconcile.Result, error) {
	results, err := c.claim(ctx, key, &p)
	if err != nil {
		return reconcile.Result{}, err
	}
	started, runErr := c.startRuns(ctx, p.sj, p.plan)
	results = append(results, started...)
	requeueAfter := c.remaining(now, p.plan.RequeueAfter)
	if runErr == nil && p.placeErr == nil && !p.plan.ConsumeTrigger && startedScheduledRun(results) {
		outcome := p.plan.Finish(results...)
		c.emit(p.sj, outcome.Events)
		return c.deferStatus(p.sj, outcome, requeueAfter), nil
	}
	return c.finish(ctx, key, p, results, runErr, requeueAfter)
}

// claim writes the status that claims the plan's Forbid runs, if any, and
// returns the claims' results.
func (c *Controller) claim(ctx context.Context, key types.NamespacedName, p *planned) ([]planner.Result, error) {
	claims := p.plan.Claims()
	if len(claims) == 0 {
		return nil, nil
	}
	if _, err := c.writeStatus(ctx, p.stored, p.plan.Finish(claims...).Status); err != nil {
		return nil, err
	}
	return claims, c.refresh(ctx, key, p)
}

// finish carries out the rest of the plan after its runs: warm-up, the
// trigger's removal, the status, then the history cleanup.
func (c *Controller) finish(ctx context.Context, key types.NamespacedName, p planned, results []planner.Result, runErr error, requeueAfter time.Duration) (reconcile.Result, error) {
	plan := p.plan
	warm, warmErr := c.executePods(ctx, plan)
	results = append(results, warm...)
	if warmUpRefused(results) {
		requeueAfter = min(cmp.Or(requeueAfter, warmup.RefusedRetry), warmup.RefusedRetry)
	}
	if runErr == nil && warmErr == nil && plan.ConsumeTrigger {
		runErr = c.consumeTrigger(ctx, p.sj)
		if err := c.refresh(ctx, key, &p); err != nil {
			return reconcile.Result{}, err
		}
	}
	outcome := plan.Finish(results...)
	written, err := c.writeStatus(ctx, p.stored, outcome.Status)
	if err != nil {
		// What the plan found (SawCompletedJob, MissSchedule, …) is found
		// again by the retry; only what was done is reported now.
		c.emit(p.sj, plan.ResultEvents(results...))
		return reconcile.Result{}, err
	}
	c.emit(p.sj, outcome.Events)
	c.known.undefer(key)
	if written {
		recordMetrics(outcome)
	}
	// The status just written records every run whose Job goes now.
	cleaned := c.deleteHistory(ctx, p.sj, plan)
	c.emit(p.sj, plan.Finish(append(results, cleaned...)...).Events[len(outcome.Events):])
	if err := cmp.Or(runErr, warmErr, p.placeErr); err != nil {
		return reconcile.Result{}, err
	}
	log.FromContext(ctx).V(1).Info("reconciled", "requeueAfter", requeueAfter, "active", len(outcome.Status.Active))
	return reconcile.Result{RequeueAfter: requeueAfter}, nil
}

// refresh views the ScheduledJob again after the reconcile wrote to it:
// the next write goes over what the last one produced.
func (c *Controller) refresh(ctx context.Context, key types.NamespacedName, p *planned) error {
	stored, sj, err := c.view(ctx, key)
	if err == nil {
		p.stored, p.sj = stored, sj
	}
	return err
}

// Reconciled reports whether the controller has reconciled the
// ScheduledJob since it started: the standby of the same replica leaves it
// to the controller from then on.
func (c *Controller) Reconciled(key types.NamespacedName) bool {
	_, ok := c.reconciled.Load(key)
	return ok
}

// remaining is what is left of the plan's requeue delay, planned at now,
// once the reconcile's requests are done: the wake-up then comes at the
// planned time however long they took, and the ScheduledJobs due at one
// instant come due together.
func (c *Controller) remaining(now time.Time, requeueAfter time.Duration) time.Duration {
	if requeueAfter == 0 {
		return 0
	}
	return max(requeueAfter-c.clock.Since(now), time.Millisecond)
}

// gather reads what the planner looks at: the ScheduledJob's Jobs, its
// warm-up pods, and the pods of the run whose start is being measured.
func (c *Controller) gather(ctx context.Context, sj *v1alpha1.ScheduledJob, now time.Time, liveJobs bool) (planner.Input, error) {
	in, err := c.gatherRuns(ctx, sj, now, liveJobs)
	if err != nil {
		return in, err
	}
	if in.BufferAPI, in.WarmUpBuffers, err = c.gatherBuffers(ctx, sj); err != nil {
		return in, err
	}
	if job := planner.RunToMeasure(sj, in.Jobs, now); job != nil {
		in.RunPods, err = shared.RunPods(ctx, c.apiReader, job)
	}
	return in, err
}

// gatherRuns reads what deciding the runs needs: the ScheduledJob's Jobs and
// its warm-up pods.
func (c *Controller) gatherRuns(ctx context.Context, sj *v1alpha1.ScheduledJob, now time.Time, liveJobs bool) (planner.Input, error) {
	in := planner.Input{ScheduledJob: sj, Now: now, EarlyStartImage: c.earlyStartImage, Defaults: c.defaults}
	var cached client.Reader = c.kubeClient
	if liveJobs {
		cached = liveOwnedJobs{Reader: c.apiReader, name: sj.Name}
	}
	jobs, err := shared.ScheduledJobJobs(ctx, cached, c.apiReader, sj)
	if err != nil {
		c.emit(sj, []planner.Event{planner.FailedGetEvent(err)})
		return in, err
	}
	in.Jobs, in.Deleted = c.known.withoutDeleted(sj, jobs, now)
	if in.Jobs, err = c.withoutSuperseded(ctx, sj, in.Jobs); err != nil {
		return in, err
	}
	if in.WarmUpPods, err = shared.WarmUpPods(ctx, c.kubeClient, sj); err != nil {
		return in, err
	}
	in.LeadPeers, err = c.gatherLeadPeers(ctx, sj)
	return in, err
}

// liveOwnedJobs lists a ScheduledJob's Jobs from the API server: the
// field index the cache has is a label there.
type liveOwnedJobs struct {
	client.Reader
	name string
}

func (r liveOwnedJobs) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	jobs, ok := list.(*batchv1.JobList)
	if !ok || o.FieldSelector == nil {
		return r.Reader.List(ctx, list, opts...)
	}
	uid, _ := o.FieldSelector.RequiresExactMatch(shared.ScheduledJobOwnerKey)
	var all batchv1.JobList
	if err := r.Reader.List(ctx, &all, client.InNamespace(o.Namespace), client.MatchingLabels{v1alpha1.ScheduledJobLabel: r.name}); err != nil {
		return err
	}
	jobs.Items = nil
	for _, job := range all.Items {
		if owner := metav1.GetControllerOf(&job); owner != nil && string(owner.UID) == uid {
			jobs.Items = append(jobs.Items, job)
		}
	}
	return nil
}

// withoutSuperseded reads from the API server the running Jobs the cache
// lists that status neither lists as active nor could have: runs older
// than status.lastScheduleTime, and runs asked for by hand (only a leader
// creates those, and records them). Such a Job is one a cache behind shows
// after another replica deleted it (a Replace, or a history cleanup): it
// is dropped when the API server no longer has it, instead of being listed
// in status.active again and reported missing later.
func (c *Controller) withoutSuperseded(ctx context.Context, sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job) ([]*batchv1.Job, error) {
	last := sj.Status.LastScheduleTime
	if last == nil {
		last = &metav1.Time{}
	}
	recorded := map[types.UID]bool{}
	for _, ref := range sj.Status.Active {
		recorded[ref.UID] = true
	}
	kept := jobs[:0:0]
	for _, job := range jobs {
		scheduled, ok := v1alpha1.ScheduledTime(job)
		superseded := ok && (v1alpha1.IsTriggered(job) || scheduled.Before(last.Time))
		if _, done := v1alpha1.JobFinished(job); done || recorded[job.UID] || !superseded {
			kept = append(kept, job)
			continue
		}
		live := &batchv1.Job{}
		switch err := c.apiReader.Get(ctx, client.ObjectKeyFromObject(job), live); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		case live.UID == job.UID:
			kept = append(kept, live)
		}
	}
	return kept, nil
}

// gatherBuffers reads the ScheduledJob's CapacityBuffers, and which version
// of their API to use, when it warms up with them or its last warm-up did
// (to clean up after the strategy changed); nothing otherwise.
func (c *Controller) gatherBuffers(ctx context.Context, sj *v1alpha1.ScheduledJob) (warmup.BufferAPI, []warmup.Buffer, error) {
	usesBuffers := sj.Spec.WarmUp != nil && sj.Spec.WarmUp.Strategy == v1alpha1.WarmUpCapacityBuffer
	usedBuffers := sj.Status.WarmUp != nil && sj.Status.WarmUp.Strategy == v1alpha1.WarmUpCapacityBuffer
	if c.buffers == nil || (!usesBuffers && !usedBuffers) {
		return warmup.BufferAPI{}, nil, nil
	}
	api, err := c.buffers.API()
	if err != nil {
		return api, nil, err
	}
	buffers, err := c.buffers.List(ctx, api, sj)
	return api, buffers, err
}

// startRuns carries out the plan's urgent actions, the deletions Replace
// needs and the runs' Job creations, and reports what became of each.
func (c *Controller) startRuns(ctx context.Context, sj *v1alpha1.ScheduledJob, plan planner.Plan) ([]planner.Result, error) {
	var results []planner.Result
	for _, deletion := range plan.Deletes {
		if deletion.Reason != planner.DeleteForReplace {
			continue
		}
		result, err := c.deleteJob(ctx, sj, deletion.Job)
		results = append(results, result)
		if err != nil {
			return results, fmt.Errorf("could not replace job %s: %w", deletion.Job.Name, err)
		}
	}
	for _, run := range []*planner.Run{plan.Create, plan.Early, plan.Trigger} {
		if run == nil {
			continue
		}
		result, err := c.createRun(ctx, sj, run)
		if result != nil {
			results = append(results, *result)
		}
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// deleteHistory deletes the finished Jobs beyond the history limits. A
// failure is reported, not retried: the next reconcile plans it again.
func (c *Controller) deleteHistory(ctx context.Context, sj *v1alpha1.ScheduledJob, plan planner.Plan) []planner.Result {
	var results []planner.Result
	for _, deletion := range plan.Deletes {
		if deletion.Reason == planner.DeleteForHistoryLimit {
			result, _ := c.deleteJob(ctx, sj, deletion.Job)
			results = append(results, result)
		}
	}
	return results
}

// startedScheduledRun reports whether a scheduled run's Job was created.
func startedScheduledRun(results []planner.Result) bool {
	return slices.ContainsFunc(results, planner.Result.StartedScheduledRun)
}

// deleteJob deletes with background propagation, as the CronJob controller
// does. A Job that is already gone is not an error (upstream emits
// FailedDelete for it).
func (c *Controller) deleteJob(ctx context.Context, sj *v1alpha1.ScheduledJob, job *batchv1.Job) (planner.Result, error) {
	err := c.kubeClient.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID})
	switch {
	case err == nil:
		c.known.deleted(sj, job, c.clock.Now())
		return planner.Deleted(job), nil
	case apierrors.IsNotFound(err):
		c.known.deleted(sj, job, c.clock.Now())
		return planner.AlreadyGone(job), nil
	}
	return planner.DeleteFailed(job, err), err
}

// createRun creates a run's Job. AlreadyExists means the run was started
// before (a crash between creating and writing status) if the Job is ours,
// and a name conflict otherwise. It returns no result when there is nothing
// to report: the Job's state is unknown, or its namespace is going away.
func (c *Controller) createRun(ctx context.Context, sj *v1alpha1.ScheduledJob, run *planner.Run) (*planner.Result, error) {
	job := run.Job.DeepCopy()
	err := c.kubeClient.Create(ctx, job)
	switch {
	case err == nil:
		// Skew is how late a run's Job is; a run created early
		// (EarlyStart) or by hand has none.
		if !run.Triggered() && !job.CreationTimestamp.Time.Before(run.Scheduled) {
			jobCreationSkew.Observe(job.CreationTimestamp.Sub(run.Scheduled).Seconds())
		}
		return ptr.To(planner.Created(run, job)), nil
	case apierrors.IsAlreadyExists(err):
		existing := &batchv1.Job{}
		if err := c.apiReader.Get(ctx, client.ObjectKeyFromObject(job), existing); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		if metav1.IsControlledBy(existing, sj) {
			return ptr.To(planner.AlreadyCreated(run, existing)), nil
		}
		return ptr.To(planner.NameTaken(run)), nil
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, err
	}
	return ptr.To(planner.CreateFailed(run, err)), err
}

// executePods creates and deletes placeholder pods. A placeholder that
// exists already was created before; one that is gone was deleted.
func (c *Controller) executePods(ctx context.Context, plan planner.Plan) ([]planner.Result, error) {
	var results []planner.Result
	var firstErr error
	for _, pod := range plan.DeletePods {
		err := c.kubeClient.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		results = append(results, planner.PodDeleted(pod))
	}
	createResults, createErr := c.createPods(ctx, plan)
	results = append(results, createResults...)
	bufferResults, bufferErr := c.executeBuffers(ctx, plan)
	return append(results, bufferResults...), cmp.Or(firstErr, createErr, bufferErr)
}

// executeBuffers deletes and creates the plan's CapacityBuffers. A refused
// one is reported, not failed, as placeholders are (createPods).
func (c *Controller) executeBuffers(ctx context.Context, plan planner.Plan) ([]planner.Result, error) {
	if c.buffers == nil {
		return nil, nil
	}
	var results []planner.Result
	var firstErr error
	for _, buffer := range plan.DeleteBuffers {
		if err := c.buffers.Delete(ctx, plan.BufferAPI, buffer); err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		results = append(results, planner.BufferDeleted(buffer.Name))
	}
	for _, request := range plan.CreateBuffers {
		name := request.Buffer.GetName()
		if err := c.buffers.Create(ctx, request); err != nil {
			results = append(results, planner.BufferCreateFailed(name, err))
			if !warmup.Refused(err) {
				firstErr = cmp.Or(firstErr, err)
			}
			continue
		}
		results = append(results, planner.BufferCreated(name))
	}
	return results, firstErr
}

// warmUpRefused reports whether the cluster refused a warm-up pod or
// CapacityBuffer.
func warmUpRefused(results []planner.Result) bool {
	return slices.ContainsFunc(results, func(r planner.Result) bool { return warmup.Refused(r.WarmUpCreateErr()) })
}

// createPods creates the plan's placeholder pods; one that exists already
// was created before.
func (c *Controller) createPods(ctx context.Context, plan planner.Plan) ([]planner.Result, error) {
	var results []planner.Result
	var firstErr error
	for _, pod := range plan.CreatePods {
		created := pod.DeepCopy()
		err := c.kubeClient.Create(ctx, created)
		switch {
		case err == nil || apierrors.IsAlreadyExists(err):
			results = append(results, planner.PodCreated(created))
		case warmup.Refused(err):
			// Reported, not failed: the reconcile that starts the run must
			// not wait for the backoff. The other pods would be refused too.
			return append(results, planner.PodCreateFailed(pod, err)), firstErr
		default:
			results = append(results, planner.PodCreateFailed(pod, err))
			firstErr = cmp.Or(firstErr, err)
		}
	}
	return results, firstErr
}

// consumeTrigger removes the trigger annotation, but only if it still has
// the value that was handled: a newer request made meanwhile survives.
func (c *Controller) consumeTrigger(ctx context.Context, sj *v1alpha1.ScheduledJob) error {
	value := sj.Annotations[v1alpha1.TriggerAnnotation]
	patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/annotations/ontime.dev~1trigger","value":%q},`+
		`{"op":"remove","path":"/metadata/annotations/ontime.dev~1trigger"}]`, value)
	err := c.kubeClient.Patch(ctx, sj, client.RawPatch(types.JSONPatchType, []byte(patch)))
	switch {
	case err == nil:
		c.known.saw(sj) // the answer: the status write goes over it
	case apierrors.IsInvalid(err) || apierrors.IsNotFound(err):
		return nil // the value changed or the object is gone: nothing to remove
	}
	return err
}

// writeStatus writes status if it changed, and reports whether it wrote.
// The write carries sj's resourceVersion as a precondition: a status
// planned from an object someone else has changed since is refused, and
// the next reconcile plans again from a confirmed one.
func (c *Controller) writeStatus(ctx context.Context, sj *v1alpha1.ScheduledJob, status v1alpha1.ScheduledJobStatus) (bool, error) {
	if equality.Semantic.DeepEqual(sj.Status, status) {
		return false, nil
	}
	updated := sj.DeepCopy()
	updated.Status = status
	patch, err := statusPatch(sj, updated)
	if err != nil {
		return false, err
	}
	if err := c.kubeClient.Status().Patch(ctx, updated, patch); err != nil {
		if apierrors.IsConflict(err) {
			// Someone else wrote meanwhile: the returned error requeues,
			// and the next run started is planned from a live read.
			c.known.refused(client.ObjectKeyFromObject(sj))
		}
		return false, client.IgnoreNotFound(err)
	}
	c.known.saw(updated)
	// The cache may have the write already: its watch event can beat the
	// write's answer, and observed then found nothing to forget.
	cached := &v1alpha1.ScheduledJob{}
	if err := c.kubeClient.Get(ctx, client.ObjectKeyFromObject(sj), cached); err == nil {
		c.known.observed(cached)
	}
	return true, nil
}

// statusPatch is the merge patch from sj to updated, conditional on sj's
// resourceVersion and always carrying
// status.activeCount: a diff of two Go structs leaves out a count that is 0
// on both sides, and the ACTIVE column would stay blank until the first run.
func statusPatch(sj, updated *v1alpha1.ScheduledJob) (client.Patch, error) {
	data, err := client.MergeFromWithOptions(sj, client.MergeFromWithOptimisticLock{}).Data(updated)
	if err != nil {
		return nil, err
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, err
	}
	status, _ := body["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		body["status"] = status
	}
	status["activeCount"] = updated.Status.ActiveCount
	data, err = json.Marshal(body)
	return client.RawPatch(types.MergePatchType, data), err
}

// statusDeferral bounds how long a deferred status waits: the new Job's
// own watch event normally reconciles the ScheduledJob sooner.
const statusDeferral = time.Second

// deferStatus ends a reconcile that created a scheduled run's Job without
// writing status, cleaning up history or touching warm-up pods: the next
// reconcile of the ScheduledJob does those, from the status remembered
// here. When many runs fall due at one instant, their reconciles are all
// queued before any Job's watch event, so every Job is created before the
// first status write, instead of each run waiting for the status writes of
// the runs queued ahead of it. A crash before the write loses nothing: the
// Job carries its scheduled time, from which the next leader rebuilds
// status. The metrics count the outcome now, as the remembered status says
// it is counted.
func (c *Controller) deferStatus(sj *v1alpha1.ScheduledJob, outcome planner.Outcome, requeueAfter time.Duration) reconcile.Result {
	c.known.deferStatus(sj, outcome.Status)
	recordMetrics(outcome)
	if requeueAfter == 0 || requeueAfter > statusDeferral {
		requeueAfter = statusDeferral
	}
	return reconcile.Result{RequeueAfter: requeueAfter}
}

// emit records events on the ScheduledJob.
func (c *Controller) emit(sj *v1alpha1.ScheduledJob, events []planner.Event) {
	shared.Emit(c.recorder, sj, events)
}
