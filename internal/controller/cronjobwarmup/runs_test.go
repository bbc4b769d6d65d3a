package cronjobwarmup

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

func mustTime(value string) time.Time {
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		panic(err)
	}
	return t
}

// TestMeaningOfACronJob: a CronJob that asks for no warm-up is not read
// further; one that does gets its settings and runs, and a schedule that
// cannot be read says so in the words of the warning event. The runs
// themselves are tested with v1alpha1.CronJobMeaning.
func TestMeaningOfACronJob(t *testing.T) {
	cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "not a schedule"}}
	if m := meaningOf(cj, v1alpha1.ControllerDefaults{}); m.warmUp != nil || m.runs != nil || m.err != nil {
		t.Errorf("without the annotation: %+v; want nothing", m)
	}
	cj.Annotations = map[string]string{v1alpha1.WarmUpLeadAnnotation: "10m"}
	if err := meaningOf(cj, v1alpha1.ControllerDefaults{}).err; err == nil || err.Error() != `cannot read the CronJob's schedule: spec.schedule "not a schedule": `+
		`expected 5 fields (minute hour day-of-month month day-of-week), found 3` {
		t.Errorf("bad schedule: %v", err)
	}
	cj.Spec.Schedule, cj.Spec.TimeZone = "0 0 * * *", ptr.To("Mars/Olympus")
	if err := meaningOf(cj, v1alpha1.ControllerDefaults{}).err; err == nil || err.Error() != `cannot read the CronJob's schedule: spec.timeZone "Mars/Olympus": unknown time zone` {
		t.Errorf("unknown zone: %v", err)
	}
	cj.Spec.TimeZone = nil
	cj.Status.LastScheduleTime = &metav1.Time{Time: mustTime("2026-11-24T08:10:00Z")}
	cj.Spec.Schedule = "@every 90m"
	m := meaningOf(cj, v1alpha1.ControllerDefaults{})
	if m.err != nil || m.warmUp.Lead != 10*time.Minute {
		t.Fatalf("settings %+v, error %v", m.warmUp, m.err)
	}
	if next := m.runs.Next(mustTime("2026-11-24T09:00:00Z")); !next.Equal(mustTime("2026-11-24T09:40:00Z")) {
		t.Errorf("@every counts from the last run: next %v", next)
	}
}

// TestWhetherTheCurrentRunStarts: its Job exists, or the CronJob
// controller may still create it; not under Forbid with an active Job, nor
// past the deadline, nor suspended.
func TestWhetherTheCurrentRunStarts(t *testing.T) {
	run := mustTime("2026-11-24T10:00:00Z")
	base := func() *batchv1.CronJob {
		return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", CreationTimestamp: metav1.NewTime(run.Add(-24 * time.Hour))},
			Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
	}
	tests := map[string]struct {
		change func(*batchv1.CronJob)
		jobs   []*batchv1.Job
		starts bool
	}{
		"its Job exists":       {jobs: []*batchv1.Job{{ObjectMeta: metav1.ObjectMeta{Name: "nightly-" + v1alpha1.RunLabelValue(run)}}}, starts: true},
		"the Job may yet come": {starts: true},
		"Forbid with an active": {change: func(cj *batchv1.CronJob) {
			cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
			cj.Status.Active = []corev1.ObjectReference{{Name: "x"}}
		}},
		"past the deadline": {change: func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](5) }},
		"suspended":         {change: func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cj := base()
			if tc.change != nil {
				tc.change(cj)
			}
			cj.Annotations = map[string]string{v1alpha1.WarmUpLeadAnnotation: "10m"}
			m := meaningOf(cj, v1alpha1.ControllerDefaults{})
			if m.err != nil {
				t.Fatal(m.err)
			}
			in := runsAround(cj, m.runs, tc.jobs, run.Add(10*time.Second))
			if !in.Current.Equal(run) || in.CurrentStarts != tc.starts {
				t.Errorf("current %v starts %v, want %v starts %v", in.Current, in.CurrentStarts, run, tc.starts)
			}
		})
	}
}

// TestCronJobInAGroupWarmsBeforeItsPredictedStart: an annotated CronJob
// whose run waits in its concurrency group, predicted to start at 10:30,
// holds no placeholder until lead before then; the prediction comes from
// the group's queue, the Job from the CronJob controller (suspended and
// labeled by ontime's webhook).
func TestCronJobInAGroupWarmsBeforeItsPredictedStart(t *testing.T) {
	run := mustTime("2026-11-24T10:00:00Z")
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "team", CreationTimestamp: metav1.NewTime(run.Add(-24 * time.Hour)),
		Annotations: map[string]string{v1alpha1.WarmUpLeadAnnotation: "10m", v1alpha1.GroupLabel: "db"}},
		Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
	waiting := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunJobName(cj.Name, run), Namespace: "team"}}
	v1alpha1.JoinGroup(waiting, v1alpha1.ConcurrencyGroupRef{Name: "db"}, nil)
	predicted := run.Add(30 * time.Minute)
	group := &v1alpha1.ConcurrencyGroupStatus{Queue: []v1alpha1.QueuedRun{{Namespace: "team", Name: waiting.Name, PredictedAdmission: &metav1.Time{Time: predicted}}}}
	in := gathered{cj: cj, meaning: meaningOf(cj, v1alpha1.ControllerDefaults{}), jobs: []*batchv1.Job{waiting}, group: warmup.Group{Status: group}, now: run.Add(time.Minute)}
	plan := decide(in)
	if len(plan.changes.CreatePods) != 0 || !slices.ContainsFunc(plan.wake, predicted.Add(-10*time.Minute).Equal) {
		t.Errorf("waiting: %d placeholders, wake %v; want none, and a wake at %s", len(plan.changes.CreatePods), plan.wake, predicted.Add(-10*time.Minute))
	}
	in.now = predicted.Add(-10 * time.Minute)
	if plan := decide(in); len(plan.changes.CreatePods) != 1 {
		t.Errorf("lead before its predicted start: %d placeholders, want 1", len(plan.changes.CreatePods))
	}
	// A cluster group whose namespaceSelector leaves "team" out refuses
	// the waiting run and the next: neither is warmed.
	in.group.Refuses = true
	if plan := decide(in); len(plan.changes.CreatePods) != 0 {
		t.Errorf("refused by its group: %d placeholders, want none", len(plan.changes.CreatePods))
	}
}

// TestCronJobRunStartIsRecorded: an annotated CronJob's measured run is
// recorded in its state as a ScheduledJob's is: the last start with its
// phases, first among the recent ones.
func TestCronJobRunStartIsRecorded(t *testing.T) {
	run := mustTime("2026-11-24T10:00:00Z")
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report", UID: "cj-uid",
		Annotations: map[string]string{v1alpha1.WarmUpLeadAnnotation: "10m"}}, Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report-29400000", UID: "job-uid", CreationTimestamp: metav1.NewTime(run.Add(time.Second)),
		Annotations: map[string]string{v1alpha1.ScheduledTimestampAnnotation: run.Format(time.RFC3339)}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report-29400000-x", CreationTimestamp: metav1.NewTime(run.Add(2 * time.Second)),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(run.Add(9 * time.Second))}}}}}}
	earlier := v1alpha1.RunStart{ScheduledTime: metav1.NewTime(run.Add(-time.Hour))}
	in := gathered{cj: cj, meaning: meaningOf(cj, v1alpha1.ControllerDefaults{}), jobs: []*batchv1.Job{job}, measured: job, runPods: []*corev1.Pod{pod},
		state: v1alpha1.CronJobWarmUpState{LastRunStart: &earlier, RecentRunStarts: []v1alpha1.RunStart{earlier}}, now: run.Add(10 * time.Second)}
	d := decide(in)
	start := d.state.LastRunStart
	want := []v1alpha1.RunPhase{{Name: v1alpha1.PhaseController, Duration: metav1.Duration{Duration: time.Second}},
		{Name: v1alpha1.PhaseJobController, Duration: metav1.Duration{Duration: time.Second}}, {Name: v1alpha1.PhaseImagePull, Duration: metav1.Duration{Duration: 7 * time.Second}}}
	if start == nil || start.Lateness.Duration != 9*time.Second || !slices.EqualFunc(start.Phases, want, func(a, b v1alpha1.RunPhase) bool { return a == b }) {
		t.Fatalf("lastRunStart %+v, want 9s late: %v", start, want)
	}
	if r := d.state.RecentRunStarts; len(r) != 2 || !r[0].ScheduledTime.Equal(&start.ScheduledTime) || !r[1].ScheduledTime.Equal(&earlier.ScheduledTime) {
		t.Errorf("recentRunStarts %+v, want this run, then the earlier one", r)
	}
	if d.started != start {
		t.Errorf("the metrics observe %+v, want the start recorded", d.started)
	}
}
