//go:build integration

package scheduledjob

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/objective"
)

// TestStartObjective, against a real API server on a fake clock: the
// first run's pod never runs a container; the controller looks again when
// it is overdue, reads its pods, counts it late once and says so in a
// LateStart event; the second run starts on time. status.startObjective
// and the ontime_start_objective_* series say 1 of 2 on time; the series
// go when the objective is removed.
func TestStartObjective(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "objective", "0 * * * *")
	sj.Spec.StartObjective = &v1alpha1.StartObjective{Within: metav1.Duration{Duration: 10 * time.Second}, Percent: "99"}
	create(t, sj)
	sj = get(t, sj)
	if got := sj.Spec.StartObjective.WindowDays; got != v1alpha1.DefaultObjectiveWindowDays {
		t.Errorf("windowDays defaulted to %d, want %d", got, v1alpha1.DefaultObjectiveWindowDays)
	}
	first := hourRun(sj)
	checkNotStartedCounted(t, sj, first)
	second := first.Add(time.Hour)
	checkOnTimeCounted(t, sj, second)
	checkObjectiveRemoved(t, sj, second.Add(10*time.Second))
}

// checkNotStartedCounted: the run at first, whose pod runs no container,
// is counted late when overdue, with a LateStart event.
func checkNotStartedCounted(t *testing.T, sj *v1alpha1.ScheduledJob, first time.Time) {
	t.Helper()
	reconcileAt(t, sj, first.Add(100*time.Millisecond))
	stuck := runJob(t, sj, first)
	createRunPod(t, &stuck, time.Time{})
	drainEvents()
	due := first.Add(10*time.Second + objective.NotStartedGrace)
	if result := reconcileAt(t, sj, first.Add(20*time.Second)); result.RequeueAfter != due.Sub(first.Add(20*time.Second)) {
		t.Errorf("requeue after %s, want %s: when the run is overdue", result.RequeueAfter, due.Sub(first.Add(20*time.Second)))
	}
	reconcileAt(t, sj, due)
	status := get(t, sj).Status.StartObjective
	if status == nil || status.Runs != 1 || status.OnTime != 0 || status.Met || status.CountedThrough == nil || !status.CountedThrough.Time.Equal(first) {
		t.Fatalf("status.startObjective %+v, want the first run counted late", status)
	}
	if !slices.ContainsFunc(drainEvents(), func(e string) bool {
		return strings.HasPrefix(e, "Warning LateStart") && strings.Contains(e, "has not started 1m10s after its time, beyond the start objective's 10s")
	}) {
		t.Error("no LateStart event for the run that did not start")
	}
}

// checkOnTimeCounted: the run at second starts 3 s late, within the
// objective: 1 of 2 on time, in status and in the metrics.
func checkOnTimeCounted(t *testing.T, sj *v1alpha1.ScheduledJob, second time.Time) {
	t.Helper()
	reconcileAt(t, sj, second.Add(100*time.Millisecond))
	onTime := runJob(t, sj, second)
	createRunPod(t, &onTime, second.Add(3*time.Second))
	reconcileAt(t, sj, second.Add(5*time.Second))
	status := get(t, sj).Status.StartObjective
	if status.Runs != 2 || status.OnTime != 1 || status.Attainment != "50.00" || status.Met {
		t.Errorf("status.startObjective %+v, want 1 of 2 on time", status)
	}
	runs, late := testutil.ToFloat64(objectiveRuns.WithLabelValues(sj.Namespace, sj.Name)), testutil.ToFloat64(objectiveLateRuns.WithLabelValues(sj.Namespace, sj.Name))
	if runs != 2 || late != 1 {
		t.Errorf("ontime_start_objective_runs_total %v, late %v; want 2, 1", runs, late)
	}
	if target := testutil.ToFloat64(objectiveTarget.WithLabelValues(sj.Namespace, sj.Name)); target != 0.99 {
		t.Errorf("ontime_start_objective_target_ratio %v, want 0.99", target)
	}
}

// checkObjectiveRemoved: without spec.startObjective, its status and
// series go.
func checkObjectiveRemoved(t *testing.T, sj *v1alpha1.ScheduledJob, now time.Time) {
	t.Helper()
	stored := get(t, sj)
	stored.Spec.StartObjective = nil
	if err := env.Live.Update(env.Ctx, stored); err != nil {
		t.Fatal(err)
	}
	reconcileAt(t, sj, now)
	if got := get(t, sj).Status.StartObjective; got != nil {
		t.Errorf("status.startObjective %+v without spec.startObjective", got)
	}
	if n := testutil.CollectAndCount(objectiveTarget, "ontime_start_objective_target_ratio"); n != 0 {
		t.Errorf("%d target series left without an objective", n)
	}
}

// runJob is the Job of sj's run scheduled at scheduled.
func runJob(t *testing.T, sj *v1alpha1.ScheduledJob, scheduled time.Time) batchv1.Job {
	t.Helper()
	for _, job := range jobs(t, sj.Namespace) {
		if at, _ := v1alpha1.ScheduledTime(&job); at.Equal(scheduled) {
			return job
		}
	}
	t.Fatalf("no Job for the run of %s", scheduled)
	return batchv1.Job{}
}

// createRunPod creates a pod of job, as the Job controller would, with its
// first container running since started (zero: waiting for its image),
// and the Job's status counting it ready when it runs.
func createRunPod(t *testing.T, job *batchv1.Job, started time.Time) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-pod", Namespace: job.Namespace, Labels: map[string]string{batchv1.ControllerUidLabel: string(job.UID)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	create(t, pod)
	state := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
	if !started.IsZero() {
		state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}
	}
	pod.Status.Phase = corev1.PodPending
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "busybox", State: state}}
	if err := env.Live.Status().Update(env.Ctx, pod); err != nil {
		t.Fatal(err)
	}
	if started.IsZero() {
		return
	}
	job.Status.Ready, job.Status.Active = ptr.To[int32](1), 1
	if err := env.Live.Status().Update(env.Ctx, job); err != nil {
		t.Fatal(err)
	}
}
