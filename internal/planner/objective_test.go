package planner

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/objective"
)

// runPod is a pod of job whose first container started at started (zero:
// none has).
func runPod(job *batchv1.Job, started time.Time) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}}}
	state := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
	if !started.IsZero() {
		state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{State: state}}
	return pod
}

// objectiveJob is an hourly ScheduledJob with a start objective of 30 s,
// last scheduled at ten.
func objectiveJob(ten time.Time) *v1alpha1.ScheduledJob {
	sj := scheduledJob(onTheHour, mustTime("2026-11-24T08:00:00Z"))
	sj.Spec.StartObjective = &v1alpha1.StartObjective{Within: metav1.Duration{Duration: 30 * time.Second}, Percent: "99", WindowDays: 7}
	sj.Status.LastScheduleTime = &metav1.Time{Time: ten}
	return sj
}

// TestObjectiveCountsALateStartOnce: through Decide and Finish, as the
// controller calls them, a run measured 45 s late is counted late once,
// with a LateStart event; the next reconcile counts nothing.
func TestObjectiveCountsALateStartOnce(t *testing.T) {
	ten := mustTime("2026-11-24T10:00:00Z")
	sj := objectiveJob(ten)
	run := childJob(sj, ten, "run", false)
	run.Status.Ready = ptr.To[int32](1)
	now := ten.Add(50 * time.Second)
	out := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{run}, RunPods: []*corev1.Pod{runPod(run, ten.Add(45*time.Second))}, Now: now}).Finish()
	if o := out.Status.StartObjective; o == nil || o.Runs != 1 || o.OnTime != 0 || o.Met || o.Attainment != "0.00" {
		t.Fatalf("status.startObjective %+v, want 1 run, late, not met", o)
	}
	if out.ObjectiveRuns != 1 || out.ObjectiveLate != 1 {
		t.Errorf("counted %d runs, %d late; want 1, 1", out.ObjectiveRuns, out.ObjectiveLate)
	}
	if msg := eventMessage(out, v1alpha1.ReasonLateStart); !strings.Contains(msg, "started 45s after its time, beyond the start objective's 30s") {
		t.Errorf("LateStart event %q", msg)
	}
	sj.Status = out.Status
	again := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{run}, Now: now.Add(time.Second)}).Finish()
	if again.Status.StartObjective.Runs != 1 || again.ObjectiveRuns != 0 || eventMessage(again, v1alpha1.ReasonLateStart) != "" {
		t.Errorf("the measured run counted again: %+v", again.Status.StartObjective)
	}
}

// TestObjectiveCountsARunThatDoesNotStart: a run whose pods run no
// container is looked at again when it becomes overdue, then its pods are
// read and it is counted late, with a LateStart event; when it starts at
// last it is measured, and not counted again.
func TestObjectiveCountsARunThatDoesNotStart(t *testing.T) {
	eleven := mustTime("2026-11-24T11:00:00Z")
	sj := objectiveJob(eleven)
	run := childJob(sj, eleven, "run", false)
	jobs := []*batchv1.Job{run}
	now := eleven.Add(10 * time.Second)
	due := eleven.Add(30*time.Second + objective.NotStartedGrace)
	if plan := Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: now}); plan.RequeueAfter != due.Sub(now) {
		t.Errorf("requeue after %s, want %s (when the run is overdue)", plan.RequeueAfter, due.Sub(now))
	}
	if RunToMeasure(sj, jobs, now) != nil {
		t.Error("pods read before the run is overdue")
	}
	if RunToMeasure(sj, jobs, due) != run {
		t.Fatal("the overdue run's pods are not read")
	}
	out := Decide(Input{ScheduledJob: sj, Jobs: jobs, RunPods: []*corev1.Pod{runPod(run, time.Time{})}, Now: due}).Finish()
	if o := out.Status.StartObjective; o.Runs != 1 || o.OnTime != 0 || !o.CountedThrough.Time.Equal(eleven) {
		t.Fatalf("status.startObjective %+v, want 1 run late, counted through 11:00", o)
	}
	if msg := eventMessage(out, v1alpha1.ReasonLateStart); !strings.Contains(msg, "has not started 1m30s after its time") {
		t.Errorf("LateStart event %q", msg)
	}
	sj.Status = out.Status
	run.Status.Ready = ptr.To[int32](1)
	now = eleven.Add(5 * time.Minute)
	out = Decide(Input{ScheduledJob: sj, Jobs: jobs, RunPods: []*corev1.Pod{runPod(run, now)}, Now: now}).Finish()
	if s := out.Status.LastRunStart; s == nil || !s.ScheduledTime.Time.Equal(eleven) || out.Status.StartObjective.Runs != 1 || out.ObjectiveRuns != 0 {
		t.Errorf("the late start of the run counted unstarted: lastRunStart %+v, objective %+v", s, out.Status.StartObjective)
	}
}

// TestObjectiveCountsMissedRuns: a run missed (startingDeadlineSeconds)
// counts late; without an objective, there is no status.startObjective.
func TestObjectiveCountsMissedRuns(t *testing.T) {
	sj := objectiveJob(mustTime("2026-11-24T11:00:00Z"))
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
	now := mustTime("2026-11-24T12:00:20Z")
	out := Decide(Input{ScheduledJob: sj, Now: now}).Finish()
	if o := out.Status.StartObjective; o.Runs != 1 || o.OnTime != 0 || out.ObjectiveLate != 1 {
		t.Errorf("status.startObjective %+v after a missed run, want 1 run late", o)
	}
	sj.Spec.StartObjective = nil
	if out := Decide(Input{ScheduledJob: sj, Now: now}).Finish(); out.Status.StartObjective != nil {
		t.Errorf("status.startObjective %+v without spec.startObjective", out.Status.StartObjective)
	}
}

// eventMessage is the message of out's first event with reason, or "".
func eventMessage(out Outcome, reason string) string {
	if i := slices.IndexFunc(out.Events, func(e Event) bool { return e.Reason == reason }); i >= 0 {
		return out.Events[i].Message
	}
	return ""
}
