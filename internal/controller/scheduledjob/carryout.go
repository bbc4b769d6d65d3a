package scheduledjob

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Carrying out a plan, in the order the invariants of docs/reliability.md
// ("Exactly once") need: claims and runs (StartRuns), warm-up (the loop,
// owners.Reconciler), then the trigger's removal, the status and only then
// the history cleanup (Record).

// StartRuns writes the claims of the plan's runs under an active limit
// (Forbid, maxActive), then creates the
// runs' Jobs. When it started a scheduled run it stops there and leaves
// the rest to the next reconcile (deferStatus).
func (p *runPlan) StartRuns(ctx context.Context) (stop bool, err error) {
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
func (p *runPlan) Record(ctx context.Context, warm warmup.Applied, failed error) error {
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
		recordMetrics(outcome)
	}
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
	recordMetrics(outcome)
}

// emit records events on the ScheduledJob.
func (c *Controller) emit(sj *v1alpha1.ScheduledJob, events []planner.Event) {
	jobcontrol.Emit(c.recorder, sj, events)
}

// Writing status: a merge patch conditional on the resourceVersion the
// plan was made from.

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
