package cronjobwarmup

import (
	"errors"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/runmetrics"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// warmUpActions is what to do about a CronJob's warm-up now: the warm-up
// objects to create and delete, the state to record, the events, when to
// look again, and what the metrics observe.
type warmUpActions struct {
	changes warmup.Changes
	state   v1alpha1.CronJobWarmUpState
	events  []warmup.Event
	wake    []time.Time
	// strategy labels the metrics.
	strategy   string
	readyAfter *time.Duration
	late       bool
	started    *v1alpha1.RunStart
}

// decide is a pure function of what was gathered, at in.now. Without
// warm-up (no annotation, one that cannot be followed, the CronJob being
// deleted) every placeholder and CapacityBuffer goes; the state is kept
// while a buffer remains, so that the next reconcile looks for it again.
func decide(in gathered) warmUpActions {
	d := warmUpActions{state: *in.state.DeepCopy()}
	d.report(in.meaning.err, groupProblem(in.cj))
	settings := in.meaning.warmUp
	if settings == nil || in.cj.DeletionTimestamp != nil {
		d.changes = warmup.RemoveAll(in.pods, in.buffers, in.api)
		if len(d.changes.DeleteBuffers) == 0 {
			d.state.WarmUp, d.state.LastRunStart, d.state.RecentRunStarts = nil, nil, nil
		}
		return d
	}
	warm := warmup.Decide(warmUpInput(in, *settings))
	d.changes, d.events, d.wake = warm.Changes, append(d.events, warm.Events...), warm.Wake
	d.state.WarmUp = warm.State
	d.strategy, d.readyAfter, d.late = string(settings.Strategy), warm.ReadyAfter, warm.Late
	if in.measured != nil {
		if start, ok := warmup.MeasureStart(in.measured, in.runPods, in.runNode); ok {
			d.state.LastRunStart, d.started = start, start
			d.state.RecentRunStarts = warmup.RecordRunStart(d.state.RecentRunStarts, *start)
		}
	}
	return d
}

// report warns when the annotations or the schedule cannot be followed,
// once per problem: the state remembers the last one reported. warmUpErr
// is why warm-up cannot be followed, groupErr why the group annotations
// cannot (what the CronJob webhook refuses, stored while it did not
// answer).
func (d *warmUpActions) report(warmUpErr, groupErr error) {
	problem := errors.Join(warmUpErr, groupErr)
	if problem == nil {
		d.state.Problem = ""
		return
	}
	if problem.Error() != d.state.Problem {
		if warmUpErr != nil {
			d.events = append(d.events, warmup.InvalidEvent(warmUpErr))
		}
		if groupErr != nil {
			d.events = append(d.events, warmup.InvalidGroupEvent(groupErr))
		}
	}
	d.state.Problem = problem.Error()
}

// groupProblem is what is wrong with the CronJob's group annotations, if
// anything (nil when nothing: a typed nil would not be).
func groupProblem(cj *batchv1.CronJob) error {
	if _, _, err := v1alpha1.CronJobGroup(cj); err != nil {
		return err
	}
	return nil
}

// warmUpInput is warm-up's view of the CronJob at in.now.
func warmUpInput(in gathered, settings v1alpha1.WarmUpSettings) warmup.Input {
	w := runsAround(in.cj, in.meaning.runs, in.jobs, in.now)
	w.Owner = warmup.OwnerOf(in.cj, batchv1.SchemeGroupVersion.WithKind(kind), &in.cj.Spec.JobTemplate)
	w.Options = settings
	w.Pods, w.Previous = in.pods, in.state.WarmUp
	w.Buffers, w.BufferAPI = in.buffers, in.api
	admission := warmup.PredictAdmission(in.group, w.CurrentJob, in.cj.Namespace, v1alpha1.RunJobName(in.cj.Name, w.Next))
	w.NextAdmission, w.CurrentWaits, w.CurrentAdmission, w.GroupRefuses = admission.Next, admission.CurrentWaits, admission.Current, admission.Refused
	return w
}

// observe records what the plan measured, once its state is written:
// the same metrics as a ScheduledJob's, labeled kind="CronJob".
func (d warmUpActions) observe() {
	runmetrics.Observe(runmetrics.Observation{Kind: kind, Strategy: d.strategy,
		CapacityReadyAfter: d.readyAfter, Late: d.late, Started: d.started})
}
