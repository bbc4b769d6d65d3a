// Package scheduledjob is the ScheduledJob controller: it gathers each
// ScheduledJob's Jobs, asks the planner what to do at the current time, and
// does it.
package scheduledjob

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/owners"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/controller/spreadledger"
	"github.com/ontime-dev/ontime/internal/controller/statuswrite"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Controller runs ScheduledJobs.
type Controller struct {
	kubeClient client.Client
	// apiReader reads from the API server, not the cache: it confirms that
	// an active Job missing from the cache is really gone.
	apiReader client.Reader
	// jobs creates and deletes the runs' Jobs.
	jobs     jobcontrol.Writer
	clock    clock.PassiveClock
	recorder record.EventRecorder
	// known holds what this controller read or wrote of each ScheduledJob
	// that its cache may not show yet.
	known knownObjects
	// loop is the reconciler of every owner of warm-up, over this kind.
	loop *owners.Reconciler[*v1alpha1.ScheduledJob]
	// listed are the namespaces whose ScheduledJobs it has listed from the
	// API server (string -> *namespaceListing).
	listed sync.Map
	// earlyStartImage runs `ontime-wait` in EarlyStart pods.
	earlyStartImage string
	// defaults are the controller-wide defaults of warm-up.
	defaults v1alpha1.ControllerDefaults
	// ledgers place ScheduledJobs under a Balanced spread.
	ledgers *spreadledger.Store
	// undecodable are the ScheduledJobs stored with values this version
	// cannot decode, reported and left alone.
	undecodable undecodables
	// unanswered says when the API server last failed to answer this
	// process (nil: never).
	unanswered *recovery.Unanswered
	// warmUp reads the ScheduledJob's warm-up objects; the loop carries
	// its warm-up changes out with it, as it does a CronJob's.
	warmUp *warmupobjects.Executor
	// judgements keep each ScheduledJob's spec judged (validated and
	// parsed) once per generation and placement.
	judgements planner.Judgements
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
	// Unanswered records when the API server last failed to answer the
	// process (nil: the controller never suspects its cache is behind).
	Unanswered *recovery.Unanswered
	// WarmUpObjects is the process's executor of warm-up (one
	// CapacityBuffer discovery cache for every controller); nil warms up
	// without CapacityBuffers.
	WarmUpObjects *warmupobjects.Executor
}

// NewController returns the controller. clk is its only source of time.
func NewController(kubeClient client.Client, apiReader client.Reader, clk clock.PassiveClock, recorder record.EventRecorder, opts Options) *Controller {
	warmUp := opts.WarmUpObjects
	if warmUp == nil {
		warmUp = warmupobjects.NewExecutor(kubeClient, nil)
	}
	c := &Controller{kubeClient: kubeClient, apiReader: apiReader, jobs: jobcontrol.NewWriter(kubeClient, apiReader), clock: clk, recorder: recorder, earlyStartImage: opts.EarlyStartImage, defaults: opts.Defaults,
		ledgers: spreadledger.NewStore(kubeClient, apiReader, opts.SpreadNamespace), warmUp: warmUp, unanswered: opts.Unanswered}
	c.loop = owners.NewReconciler[*v1alpha1.ScheduledJob](kind{c}, kubeClient, clk, warmUp)
	return c
}

// Name identifies the controller in logs and metrics.
func (c *Controller) Name() string { return "scheduledjob.run" }

// Reconcile brings one ScheduledJob up to date through owners.Reconciler,
// the loop ScheduledJobs and annotated CronJobs share; kind is what is
// particular to ScheduledJobs.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return c.loop.Reconcile(ctx, req)
}

// Reconciled reports whether the controller has reconciled the
// ScheduledJob since it started: the standby of the same replica leaves it
// to the controller from then on.
func (c *Controller) Reconciled(key types.NamespacedName) bool {
	return c.loop.Reconciled(key)
}

// kind is the ScheduledJob kind of owners.Reconciler: how a ScheduledJob
// is read, planned and recorded.
type kind struct{ *Controller }

func (kind) New() *v1alpha1.ScheduledJob { return &v1alpha1.ScheduledJob{} }

// Forget drops what the controller knew of a deleted ScheduledJob, and its
// place in its spread group's ledger.
func (k kind) Forget(ctx context.Context, key types.NamespacedName) error {
	k.known.forget(key)
	k.undecodable.forget(key)
	k.judgements.Forget(key)
	forgetObjective(key.Namespace, key.Name)
	forgetDeadline(key.Namespace, key.Name)
	return k.ledgers.ForgetDeleted(ctx, key)
}

// Plan decides what to do with a ScheduledJob at now, in at most two
// decisions, keeping the invariants of docs/reliability.md ("Exactly
// once"):
//
//  1. An undecodable ScheduledJob is reported and left alone: no plan.
//  2. Decide from the cache. gather reads from the API server what a cache
//     behind would mislead the decision with: the Jobs status.active names
//     that the cache lacks, and every Job at once when one of those is
//     gone or when Jobs read ahead of the cache hold failures to count
//     (see gatherRuns).
//  3. Decide once more, and only once, when the first decision was made
//     from what must be read again (secondRead): it starts a run, or
//     reports a Job missing, from a status not confirmed with the API
//     server since this controller started; or a limit (Forbid,
//     maxActive) holds a due run back for Jobs the cache shows running
//     while the cache may be behind after an outage.
func (k kind) Decide(ctx context.Context, cached *v1alpha1.ScheduledJob, now time.Time) (owners.Decision, error) {
	key := client.ObjectKeyFromObject(cached)
	if cached.DecodeError != "" {
		k.undecodable.report(ctx, k.Controller, cached)
		return nil, nil
	}
	k.undecodable.forget(key)
	behind := k.cacheMayBeBehind(now)
	p, err := k.decide(ctx, cached, now, cachedJobs)
	if err == nil && p.sj != nil {
		switch confirm, read := k.secondRead(key, p.plan, behind); {
		case confirm:
			p, err = k.confirm(ctx, cached, now, read)
		case read != cachedJobs:
			p, err = k.decide(ctx, cached, now, read)
		}
	}
	if err != nil || p.sj == nil {
		return nil, err
	}
	return &scheduledJobDecision{c: k.Controller, key: key, planned: p, recheckHeld: !p.plan.Held.IsZero() && behind}, nil
}

// secondRead says what a first decision must be made again from, if
// anything: a status confirmed with the API server (confirm), and the Jobs
// that status.active names read from it one by name (liveActiveJobs) when
// a limit holds a due run back for Jobs a cache behind shows running.
// Neither (false, cachedJobs): the first decision stands.
func (k kind) secondRead(key types.NamespacedName, plan planner.Plan, behind bool) (confirm bool, read jobsRead) {
	confirm = needsConfirmation(plan) && !k.known.isConfirmed(key)
	read = cachedJobs
	if !plan.Held.IsZero() && behind {
		read = liveActiveJobs
	}
	return confirm, read
}

// needsConfirmation reports whether a plan must be made from a confirmed
// status: it creates a run's Job, or reports a Job missing that a cache
// behind the status may have shown.
func needsConfirmation(plan planner.Plan) bool {
	return plan.Create != nil || plan.Early != nil || plan.Trigger != nil || plan.Reports(v1alpha1.ReasonMissingJob)
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

// plannerDecide is the planner's decision. A variable so that a test counts the
// decisions one reconcile makes: at most two (kind.Decide).
var plannerDecide = planner.Decide

// decide gathers what the planner reads and has it decide. It reads the
// ScheduledJob from the cache again: the copy the reconcile began with may
// be older than one the controller has since forgotten because the cache
// caught up.
func (c *Controller) decide(ctx context.Context, cached *v1alpha1.ScheduledJob, now time.Time, read jobsRead) (planned, error) {
	stored, sj, err := c.view(ctx, client.ObjectKeyFromObject(cached))
	if err != nil || sj.UID != cached.UID || sj.DecodeError != "" {
		return planned{}, client.IgnoreNotFound(err) // gone or replaced: the next reconcile
	}
	in, err := c.gather(ctx, sj, now, read)
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
	in.Judged = c.judgements.Of(sj, in.Placement, now)
	return planned{stored: stored, sj: sj, plan: plannerDecide(in), placeErr: placeErr}, nil
}

// view reads the ScheduledJob from the cache and lays over it what the
// controller knows (knownObjects.view), with no cache update forgotten in
// between.
func (c *Controller) view(ctx context.Context, key types.NamespacedName) (stored, current *v1alpha1.ScheduledJob, err error) {
	return c.known.view(key, func(cached *v1alpha1.ScheduledJob) error {
		return c.kubeClient.Get(ctx, key, cached)
	})
}

// heldRecheck is how often a run a limit holds back is looked at again
// while the cache may be behind (cacheMayBeBehind): the update of the Job
// it waits for may not reach the cache before the run's minute is over.
const heldRecheck = time.Second

// cacheMayBeBehind reports whether the API server failed to answer this
// process recently enough that a cache's watch may not have caught up yet
// (recovery.CacheCatchUp).
func (c *Controller) cacheMayBeBehind(now time.Time) bool {
	return c.unanswered.Within(now, recovery.CacheCatchUp)
}

// scheduledJobDecision is a ScheduledJob's plan as the loop carries it out: its runs
// first (StartRuns), then warm-up, then Record.
type scheduledJobDecision struct {
	c   *Controller
	key types.NamespacedName
	planned
	// results are what became of the claims and runs.
	results []planner.Result
	// deferred is set when the runs were started and the status left to
	// the next reconcile (deferStatus).
	deferred bool
	// recheckHeld looks again at a held run soon: the cache may not show
	// the Job it waits for finishing.
	recheckHeld bool
}

func (p *scheduledJobDecision) WarmUp() warmup.Changes { return p.plan.WarmUp }

// Wake is the plan's requeue, bounded by statusDeferral when the status
// was deferred, and by heldRecheck when a held run is looked at again.
func (p *scheduledJobDecision) Wake() time.Duration {
	wake := p.plan.RequeueAfter
	if p.deferred {
		wake = atMost(wake, statusDeferral)
	}
	if p.recheckHeld {
		wake = atMost(wake, heldRecheck)
	}
	return wake
}

// atMost bounds a wake-up delay (0: none) by bound.
func atMost(wake, bound time.Duration) time.Duration {
	if wake == 0 || wake > bound {
		return bound
	}
	return wake
}

// Confirming: the first run a leader starts for a ScheduledJob, or a Job
// it reports missing, is planned from a status read from the API server.

// confirm reads the ScheduledJob from the API server and plans again: the
// first run this controller starts for it, or Job it reports missing, must
// be planned from a status no older than what the last leader wrote (a nil
// sj: it is gone). read says where the Jobs are read from, as for the plan
// being confirmed. The first time, it lists the whole namespace instead:
// a new leader confirms all its ScheduledJobs with one request.
func (c *Controller) confirm(ctx context.Context, cached *v1alpha1.ScheduledJob, now time.Time, read jobsRead) (planned, error) {
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
	return c.decide(ctx, cached, now, read)
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

// Carrying out a plan, in the order the invariants of docs/reliability.md
// ("Exactly once") need: claims and runs (StartRuns), warm-up (the loop,
// owners.Reconciler), then the trigger's removal, the status and only then
// the history cleanup (Record).

// StartRuns writes the claims of the plan's runs under an active limit
// (Forbid, maxActive), then creates the
// runs' Jobs. When it started a scheduled run it stops there and leaves
// the rest to the next reconcile (deferStatus).
func (p *scheduledJobDecision) StartRuns(ctx context.Context) (stop bool, err error) {
	claims, err := p.c.claim(ctx, p.key, &p.planned)
	if err != nil {
		return true, err
	}
	started, runErr := p.c.startRuns(ctx, p.sj, p.plan)
	p.results = append(claims, started...)
	if runErr == nil && p.placeErr == nil && !p.plan.ConsumeTrigger && !p.plan.SuspendAfterFailures && startedScheduledRun(p.results) {
		outcome := p.plan.Finish(p.results...)
		p.c.emit(p.sj, outcome.Events)
		p.c.deferStatus(p.sj, outcome)
		p.deferred = true
		return true, nil
	}
	return false, runErr
}

// claim writes the status that claims the plan's limited runs, if any, and
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

// Record carries out the rest of the plan after its runs and warm-up:
// the trigger's removal, the status, then the history cleanup. failed is
// the runs' or warm-up's error: a trigger is removed only when its run
// started and nothing failed.
func (p *scheduledJobDecision) Record(ctx context.Context, warm warmup.Applied, failed error) error {
	c, plan := p.c, p.plan
	results := append(p.results, planner.WarmUpApplied(warm))
	var consumeErr error
	if failed == nil && plan.ConsumeTrigger {
		consumeErr = c.consumeTrigger(ctx, p.sj)
		if err := c.refresh(ctx, p.key, &p.planned); err != nil {
			return err
		}
	}
	if plan.SuspendAfterFailures {
		// Before the status that records the suspension: a status saying
		// suspended over a spec that is not would read as a resume.
		if err := c.suspend(ctx, p.stored); err != nil {
			return err
		}
		if err := c.refresh(ctx, p.key, &p.planned); err != nil {
			return err
		}
	}
	outcome := plan.Finish(results...)
	written, err := c.writeStatus(ctx, p.stored, outcome.Status)
	if err != nil {
		// What the plan found (SawCompletedJob, MissSchedule, …) is found
		// again by the retry; only what was done is reported now.
		c.emit(p.sj, plan.ResultEvents(results...))
		return err
	}
	c.emit(p.sj, outcome.Events)
	c.known.undefer(p.key)
	if written {
		recordMetrics(p.sj, outcome)
	}
	exportObjective(p.sj, outcome.Status.StartObjective)
	exportDeadline(p.sj, outcome.Status)
	// The status just written records every run whose Job goes now.
	cleaned := c.deleteHistory(ctx, p.sj, plan)
	c.emit(p.sj, plan.ResultEvents(cleaned...))
	return cmp.Or(failed, consumeErr, p.placeErr)
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

// deleteJob deletes a run's Job. A Job that is already gone is not an
// error (upstream emits FailedDelete for it).
func (c *Controller) deleteJob(ctx context.Context, sj *v1alpha1.ScheduledJob, job *batchv1.Job) (planner.Result, error) {
	gone, err := c.jobs.Delete(ctx, job)
	if err != nil {
		return planner.DeleteFailed(job, err), err
	}
	c.known.deleted(sj, job, c.clock.Now())
	if gone {
		return planner.AlreadyGone(job), nil
	}
	return planner.Deleted(job), nil
}

// createRun creates a run's Job. It returns no result when there is
// nothing to report: the Job's state is unknown, or its namespace is going
// away.
func (c *Controller) createRun(ctx context.Context, sj *v1alpha1.ScheduledJob, run *planner.Run) (*planner.Result, error) {
	creation, job, err := c.jobs.Create(ctx, sj, run.Job.DeepCopy())
	switch creation {
	case jobcontrol.Created:
		// Skew is how late a run's Job is; a run created early
		// (EarlyStart) or by hand has none, and one a catch-up starts is
		// late by design.
		if !run.Triggered() && !run.CatchingUp && !job.CreationTimestamp.Time.Before(run.Scheduled) {
			jobCreationSkew.Observe(job.CreationTimestamp.Sub(run.Scheduled).Seconds())
		}
		return ptr.To(planner.Created(run, job)), nil
	case jobcontrol.AlreadyCreated:
		return ptr.To(planner.AlreadyCreated(run, job)), nil
	case jobcontrol.NameTaken:
		return ptr.To(planner.NameTaken(run)), nil
	case jobcontrol.Unknown:
		return nil, err
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return nil, err
	}
	return ptr.To(planner.CreateFailed(run, err)), err
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

// suspend sets spec.suspend after repeated failures, on condition that
// the ScheduledJob is still the version the plan was made from: a change
// meanwhile (a resume, another limit) is planned again.
func (c *Controller) suspend(ctx context.Context, sj *v1alpha1.ScheduledJob) error {
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"suspend":true}}`, sj.ResourceVersion)
	patched := sj.DeepCopy()
	err := c.kubeClient.Patch(ctx, patched, client.RawPatch(types.MergePatchType, []byte(patch)))
	switch {
	case err == nil:
		c.known.saw(patched) // the status write goes over it
	case apierrors.IsConflict(err):
		c.known.refused(client.ObjectKeyFromObject(sj))
	}
	return client.IgnoreNotFound(err)
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
func (c *Controller) deferStatus(sj *v1alpha1.ScheduledJob, outcome planner.Outcome) {
	c.known.deferStatus(sj, outcome.Status)
	recordMetrics(sj, outcome)
	exportObjective(sj, outcome.Status.StartObjective)
	exportDeadline(sj, outcome.Status)
}

// emit records events on the ScheduledJob.
func (c *Controller) emit(sj *v1alpha1.ScheduledJob, events []planner.Event) {
	jobcontrol.Emit(c.recorder, sj, events)
}

// writeStatus writes status if it changed, and reports whether it wrote,
// through the one conditional writer (statuswrite): a status planned from
// an object someone else has changed since is refused, and the next
// reconcile plans again from a confirmed one. status.activeCount is always
// carried, so that the ACTIVE column shows 0 before the first run.
func (c *Controller) writeStatus(ctx context.Context, sj *v1alpha1.ScheduledJob, status v1alpha1.ScheduledJobStatus) (bool, error) {
	updated := sj.DeepCopy()
	updated.Status = status
	written, err := statuswrite.Write(ctx, c.kubeClient, sj, updated, map[string]any{"activeCount": status.ActiveCount})
	if err != nil {
		if apierrors.IsConflict(err) {
			// Someone else wrote meanwhile: the returned error requeues,
			// and the next run started is planned from a live read.
			c.known.refused(client.ObjectKeyFromObject(sj))
		}
		return false, client.IgnoreNotFound(err)
	}
	if !written {
		return false, nil
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
