package planner

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// warmJob is a ScheduledJob with warm-up, whose last run was the one at or
// before now, so that nothing is due at now.
func warmJob(schedule, zone string, policy v1alpha1.DSTPolicy, lead time.Duration, now time.Time) *v1alpha1.ScheduledJob {
	sj := scheduledJob(schedule, now.AddDate(-1, 0, 0))
	sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(lead), Strategy: v1alpha1.WarmUpPlaceholder}
	sj.Spec.DSTPolicy = policy
	if zone != "" {
		sj.Spec.TimeZone = ptr.To(zone)
	}
	judged := Judge(sj, nil, now)
	if s := scheduleOf(sj, &judged, nil); s.problem == nil {
		if prev := s.schedule.Prev(now); !prev.IsZero() {
			sj.Status.LastScheduleTime = &metav1.Time{Time: prev}
		}
	}
	return sj
}

// primerStart is when warm-up for the first run after now begins, found
// independently of the planner: ontime prime's schedules fire exactly lead
// before every run (on the wall clock, which in a zone without DST is
// elapsed time), so the first of them after now-lead is the start.
func primerStart(t *testing.T, schedule string, loc *time.Location, lead time.Duration, now time.Time) time.Time {
	t.Helper()
	spec, err := cron.Parser{Location: loc}.Parse(schedule)
	if err != nil {
		t.Fatal(err)
	}
	primers, err := cron.Shift(spec, lead, cron.Extended)
	if err != nil {
		t.Fatalf("Shift(%q, %v): %v", schedule, lead, err)
	}
	var start time.Time
	for _, line := range primers {
		primer, err := cron.Parser{Dialect: cron.Extended, Location: loc}.Parse(line)
		if err != nil {
			t.Fatal(err)
		}
		if at := primer.Next(now.Add(-lead)); start.IsZero() || at.Before(start) {
			start = at
		}
	}
	return start
}

// TestWarmUpStartMatchesPrimers: for schedules in zones without DST, the
// planner begins warm-up where ontime prime's schedules fire. The cases
// cross midnight, month ends and a leap day.
func TestWarmUpStartMatchesPrimers(t *testing.T) {
	tests := []struct {
		schedule, zone string
		lead           time.Duration
		now            time.Time
	}{
		{"30 2 * * *", "", 10 * time.Minute, mustTime("2026-11-24T01:00:00Z")},
		{"0 0 * * *", "", 30 * time.Minute, mustTime("2026-11-24T12:00:00Z")},              // 23:30 the day before
		{"0 0 1 * *", "", time.Hour, mustTime("2027-02-10T00:00:00Z")},                     // Feb 28, 23:00
		{"0 0 1 3 *", "", time.Hour, mustTime("2028-02-10T00:00:00Z")},                     // Feb 29 2028, 23:00
		{"15 0 * * 1", "Asia/Kolkata", 45 * time.Minute, mustTime("2026-11-24T00:00:00Z")}, // Sunday 23:30 IST
		{"*/20 9-17 * * 1-5", "", 25 * time.Minute, mustTime("2026-11-27T17:50:00Z")},      // Friday evening: Monday 08:35
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 150 {
		schedules := []string{"*/7 * * * *", "0 */3 * * *", "45 23 * * *", "10 4 L * *", "0 12 * * 5L", "5,35 6 1-7 * 1", "0 0 1 1 *"}
		tests = append(tests, struct {
			schedule, zone string
			lead           time.Duration
			now            time.Time
		}{schedules[rng.IntN(len(schedules))], "", time.Duration(1+rng.IntN(180)) * time.Minute,
			mustTime("2026-01-01T00:00:00Z").Add(time.Duration(rng.Int64N(int64(4 * 365 * 24 * time.Hour)))).Truncate(time.Second)})
	}
	for _, tc := range tests {
		loc := time.UTC
		if tc.zone != "" {
			loc, _ = v1alpha1.LoadTimeZone(tc.zone)
		}
		sj := warmJob(tc.schedule, tc.zone, "", tc.lead, tc.now)
		sj.Spec.Schedule = tc.schedule
		if _, err := (cron.Parser{}).Parse(tc.schedule); err != nil {
			sj.Spec.WarmUp = nil // extended syntax is not for ScheduledJobs (yet)
			continue
		}
		out := Decide(Input{ScheduledJob: sj, Now: tc.now}).Finish()
		want := primerStart(t, tc.schedule, loc, tc.lead, tc.now)
		if got := out.Status.NextWarmUpTime; got == nil || !got.Time.Equal(want) {
			t.Errorf("%q lead %v at %v: nextWarmUpTime %v, want %v", tc.schedule, tc.lead, tc.now, got, want)
		}
	}
}

// TestWarmUpAcrossDaylightSaving: the lead is elapsed time before the run
// each policy runs, in America/New_York (2026-03-08 02:00 EST jumps to
// 03:00 EDT; 2026-11-01 02:00 EDT falls back to 01:00 EST).
func TestWarmUpAcrossDaylightSaving(t *testing.T) {
	tests := map[string]struct {
		schedule string
		policy   v1alpha1.DSTPolicy
		now      time.Time
		want     time.Time
	}{
		// Cron runs the skipped 02:30 at 03:00 EDT (07:00Z): warm-up 06:50Z,
		// which is 01:50 EST.
		"spring forward, Cron": {"30 2 * * *", v1alpha1.DSTCron, mustTime("2026-03-08T05:00:00Z"), mustTime("2026-03-08T06:50:00Z")},
		// Kubernetes skips it: the next run is 02:30 EDT the next day.
		"spring forward, Kubernetes": {"30 2 * * *", v1alpha1.DSTKubernetes, mustTime("2026-03-08T05:00:00Z"), mustTime("2026-03-09T06:20:00Z")},
		// 01:30 happens twice. Cron runs the first (05:30Z); after it, the
		// next run is the next day's.
		"fall back, Cron, after the first 01:30": {"30 1 * * *", v1alpha1.DSTCron, mustTime("2026-11-01T05:31:00Z"), mustTime("2026-11-02T06:20:00Z")},
		// Kubernetes runs both: the second at 01:30 EST (06:30Z).
		"fall back, Kubernetes, after the first 01:30": {"30 1 * * *", v1alpha1.DSTKubernetes, mustTime("2026-11-01T05:31:00Z"), mustTime("2026-11-01T06:20:00Z")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sj := warmJob(tc.schedule, "America/New_York", tc.policy, 10*time.Minute, tc.now)
			out := Decide(Input{ScheduledJob: sj, Now: tc.now}).Finish()
			if got := out.Status.NextWarmUpTime; got == nil || !got.Time.Equal(tc.want) {
				t.Errorf("nextWarmUpTime %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWarmUpForEveryAndRunAt(t *testing.T) {
	created := mustTime("2026-11-24T08:00:00Z")
	every := scheduledJob("@every 90m", created)
	every.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(10 * time.Minute)}
	// The first run is 90 minutes after creation, at 09:30.
	plan := Decide(Input{ScheduledJob: every, Now: created.Add(time.Hour)})
	if got := plan.Finish().Status.NextWarmUpTime; got == nil || !got.Time.Equal(mustTime("2026-11-24T09:20:00Z")) {
		t.Errorf("@every: nextWarmUpTime %v, want 09:20", got)
	}
	if plan.RequeueAfter != 20*time.Minute {
		t.Errorf("@every: requeue %v, want at the warm-up (20m)", plan.RequeueAfter)
	}
	once := scheduledJob("", created)
	once.Spec.RunAt = &metav1.Time{Time: mustTime("2026-12-24T18:00:00Z")}
	once.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(2 * time.Hour)}
	plan = Decide(Input{ScheduledJob: once, Now: mustTime("2026-12-24T16:00:00Z")})
	if len(plan.WarmUp.CreatePods) != 1 {
		t.Errorf("runAt: %d placeholders at the warm-up's start, want 1", len(plan.WarmUp.CreatePods))
	}
}

// TestControllerPlaceholderDefaults: placeholders run the controller's
// --placeholder-image, with its --placeholder-priority-class, unless the
// ScheduledJob names its own.
func TestControllerPlaceholderDefaults(t *testing.T) {
	created := mustTime("2026-11-24T08:00:00Z")
	policy := v1alpha1.ControllerDefaults{PlaceholderImage: "mirror.example/pause:3.10", PlaceholderPriorityClass: "batch-low"}
	for name, tc := range map[string]struct {
		spec                 *v1alpha1.PlaceholderWarmUp
		wantImage, wantClass string
	}{
		"the controller's": {wantImage: policy.PlaceholderImage, wantClass: policy.PlaceholderPriorityClass},
		"the spec's": {spec: &v1alpha1.PlaceholderWarmUp{Image: "team.example/pause:3.10", PriorityClassName: "team-low"},
			wantImage: "team.example/pause:3.10", wantClass: "team-low"},
	} {
		sj := scheduledJob("0 10 * * *", created)
		sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(10 * time.Minute), Placeholder: tc.spec}
		plan := Decide(Input{ScheduledJob: sj, Now: mustTime("2026-11-24T09:55:00Z"), Defaults: policy})
		if len(plan.WarmUp.CreatePods) != 1 {
			t.Fatalf("%s: %d placeholders, want 1", name, len(plan.WarmUp.CreatePods))
		}
		if pod := plan.WarmUp.CreatePods[0].Spec; pod.Containers[0].Image != tc.wantImage || pod.PriorityClassName != tc.wantClass {
			t.Errorf("%s: placeholder runs %s with class %q, want %s with %q", name, pod.Containers[0].Image, pod.PriorityClassName, tc.wantImage, tc.wantClass)
		}
	}
}

// world follows a ScheduledJob, its Jobs and its warm-up pods as the
// reconciler would, applying each plan.
type world struct {
	t    *testing.T
	sj   *v1alpha1.ScheduledJob
	jobs []*batchv1.Job
	pods []*corev1.Pod
	// group is the status of its concurrency group, if any, and
	// groupRefuses whether that group refuses its runs.
	group        *v1alpha1.ConcurrencyGroupStatus
	groupRefuses bool
}

func (w *world) reconcile(now time.Time) (Plan, Outcome) {
	w.t.Helper()
	plan := Decide(Input{ScheduledJob: w.sj, Jobs: w.jobs, WarmUpPods: w.pods, Group: warmup.Group{Status: w.group, Refuses: w.groupRefuses}, Now: now, EarlyStartImage: "ontime:test"})
	var results []Result
	for _, run := range []*Run{plan.Create, plan.Early, plan.Trigger} {
		if run != nil {
			job := run.Job.DeepCopy()
			job.UID = types.UID("uid-" + job.Name)
			job.CreationTimestamp = metav1.NewTime(now)
			w.jobs = append(w.jobs, job)
			results = append(results, Created(run, job))
		}
	}
	for _, pod := range plan.WarmUp.DeletePods {
		w.pods = slices.DeleteFunc(w.pods, func(p *corev1.Pod) bool { return p.Name == pod.Name })
	}
	for _, pod := range plan.WarmUp.CreatePods {
		created := pod.DeepCopy()
		created.CreationTimestamp = metav1.NewTime(now)
		w.pods = append(w.pods, created)
	}
	results = append(results, WarmUpApplied(warmup.Applied{}))
	out := plan.Finish(results...)
	w.sj.Status = out.Status
	return plan, out
}

// bind gives every warm-up pod a node at `at`.
func (w *world) bind(at time.Time) {
	for _, pod := range w.pods {
		pod.Spec.NodeName = "node-" + pod.Name
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}
	}
}

func capacityReady(status v1alpha1.ScheduledJobStatus) string {
	if c := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionCapacityReady); c != nil {
		return string(c.Status) + "/" + c.Reason
	}
	return ""
}

// lifecycleStep is one reconcile of TestPlaceholderWarmUpLifecycle.
type lifecycleStep struct {
	at string
	// before changes the world first.
	before func(w *world)
	// What the plan does and says.
	create, delete int
	events         []string
	capacity       string
	requeue        time.Duration // 0: not checked
	check          func(t *testing.T, plan Plan, out Outcome)
}

// TestPlaceholderWarmUpLifecycle follows an hourly run with a 10-minute
// lead: placeholders at 09:50, ready at 09:51, the run at 10:00 exactly as
// without warm-up, placeholders gone once its pods are ready.
func TestPlaceholderWarmUpLifecycle(t *testing.T) {
	sj := warmJob("0 * * * *", "", "", 10*time.Minute, mustTime("2026-11-24T09:30:00Z"))
	sj.Spec.JobTemplate.Spec.Parallelism = ptr.To[int32](2)
	w := &world{t: t, sj: sj}
	steps := []lifecycleStep{
		{at: "09:30:00", capacity: "Unknown/WarmingUp", requeue: 20 * time.Minute},
		{at: "09:50:00", create: 2, events: []string{v1alpha1.ReasonWarmUpStarted}, capacity: "False/WarmingUp"},
		{at: "09:51:01", before: func(w *world) { w.bind(mustTime("2026-11-24T09:51:00Z")) }, events: []string{v1alpha1.ReasonWarmUpReady}, capacity: "True/CapacityReady",
			check: func(t *testing.T, _ Plan, out Outcome) {
				if d := out.CapacityReadyAfter; d == nil || *d != time.Minute {
					t.Errorf("ready after %v, want 1m", d)
				}
			}},
		// The run's Job, exactly as without warm-up; placeholders stay for
		// the hand-off.
		{at: "10:00:00.1", events: []string{v1alpha1.ReasonSuccessfulCreate}, capacity: "True/CapacityReady",
			check: func(t *testing.T, plan Plan, out Outcome) {
				if plan.Create == nil || plan.Create.Job.Name != "mycronjob-29925240" || len(plan.Create.Job.Spec.Template.Spec.InitContainers) != 0 {
					t.Errorf("run %+v, want mycronjob-29925240 as without warm-up", plan.Create)
				}
				if out.WarmUpLate {
					t.Error("late, though the capacity was ready")
				}
			}},
		// The run's pods are ready: the placeholders go.
		{at: "10:00:03", before: func(w *world) { w.jobs[0].Status.Ready = ptr.To[int32](2) }, delete: 2, capacity: "True/CapacityReady",
			check: func(t *testing.T, _ Plan, out Outcome) {
				if got := out.Status.NextWarmUpTime; got == nil || !got.Time.Equal(mustTime("2026-11-24T10:50:00Z")) {
					t.Errorf("nextWarmUpTime %v, want 10:50", got)
				}
			}},
	}
	w.run(t, steps)
}

// run reconciles at each step's time (on 2026-11-24, UTC), checks it,
// and checks that no placeholder is left at the end.
func (w *world) run(t *testing.T, steps []lifecycleStep) {
	t.Helper()
	for _, step := range steps {
		if step.before != nil {
			step.before(w)
		}
		plan, out := w.reconcile(mustTime("2026-11-24T" + step.at + "Z"))
		t.Run(step.at, func(t *testing.T) { checkStep(t, step, plan, out) })
	}
	if len(w.pods) != 0 {
		t.Errorf("%d placeholders left", len(w.pods))
	}
}

func checkStep(t *testing.T, step lifecycleStep, plan Plan, out Outcome) {
	t.Helper()
	if len(plan.WarmUp.CreatePods) != step.create || len(plan.WarmUp.DeletePods) != step.delete {
		t.Errorf("created %d and deleted %d placeholders, want %d and %d", len(plan.WarmUp.CreatePods), len(plan.WarmUp.DeletePods), step.create, step.delete)
	}
	if got := reasons(out); !slices.Equal(got, step.events) {
		t.Errorf("events %v, want %v", got, step.events)
	}
	if got := capacityReady(out.Status); got != step.capacity {
		t.Errorf("CapacityReady %s, want %s", got, step.capacity)
	}
	if step.requeue != 0 && plan.RequeueAfter != step.requeue {
		t.Errorf("requeue %v, want %v", plan.RequeueAfter, step.requeue)
	}
	if step.check != nil {
		step.check(t, plan, out)
	}
}

// TestPlaceholdersNeverOutliveARunThatDoesNotStart: Forbid with an active
// run at the scheduled time, suspend, a schedule edit, deletion and
// turning warm-up off each remove the placeholders.
func TestPlaceholdersNeverOutliveARunThatDoesNotStart(t *testing.T) {
	warm := func(t *testing.T) *world {
		now := mustTime("2026-11-24T09:30:00Z")
		w := &world{t: t, sj: warmJob("0 * * * *", "", "", 10*time.Minute, now)}
		if plan, _ := w.reconcile(mustTime("2026-11-24T09:50:00Z")); len(plan.WarmUp.CreatePods) != 1 {
			t.Fatalf("no placeholder at 09:50")
		}
		return w
	}
	cases := map[string]func(w *world) time.Time{
		"Forbid with an active run": func(w *world) time.Time {
			w.sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
			w.jobs = append(w.jobs, childJob(w.sj, mustTime("2026-11-24T09:00:00Z"), "running", false))
			return mustTime("2026-11-24T10:00:00.1Z")
		},
		"past its deadline": func(w *world) time.Time {
			w.sj.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
			return mustTime("2026-11-24T10:01:00Z")
		},
		"suspended": func(w *world) time.Time {
			w.sj.Spec.Suspend = ptr.To(true)
			return mustTime("2026-11-24T09:55:00Z")
		},
		"schedule edited": func(w *world) time.Time {
			w.sj.Spec.Schedule = "30 * * * *"
			return mustTime("2026-11-24T09:55:00Z")
		},
		"being deleted": func(w *world) time.Time {
			w.sj.DeletionTimestamp = &metav1.Time{Time: mustTime("2026-11-24T09:55:00Z")}
			return mustTime("2026-11-24T09:55:00Z")
		},
		"warm-up turned off": func(w *world) time.Time {
			w.sj.Spec.WarmUp = nil
			return mustTime("2026-11-24T09:55:00Z")
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			w := warm(t)
			plan, _ := w.reconcile(change(w))
			if len(plan.WarmUp.DeletePods) != 1 || len(w.pods) != 0 {
				t.Errorf("deleted %d placeholders, %d left", len(plan.WarmUp.DeletePods), len(w.pods))
			}
			if len(plan.WarmUp.CreatePods) != 0 {
				t.Errorf("created %d placeholders", len(plan.WarmUp.CreatePods))
			}
		})
	}
}

// earlyStartWorld is an hourly EarlyStart ScheduledJob under Replace with
// a 09:00 run still active, at 09:30.
func earlyStartWorld(t *testing.T) (*world, *batchv1.Job) {
	sj := warmJob("0 * * * *", "", "", 10*time.Minute, mustTime("2026-11-24T09:30:00Z"))
	sj.Spec.WarmUp.Strategy = v1alpha1.WarmUpEarlyStart
	sj.Spec.ConcurrencyPolicy = v1alpha1.ReplaceConcurrent
	sj.Spec.JobTemplate.Spec.ActiveDeadlineSeconds = ptr.To[int64](300)
	previous := childJob(sj, mustTime("2026-11-24T09:00:00Z"), "previous", false)
	sj.Status.Active = []corev1.ObjectReference{refOf(previous)}
	return &world{t: t, sj: sj, jobs: []*batchv1.Job{previous}}, previous
}

// TestEarlyStartCreatesTheRunEarly: the run's Job is created lead early,
// with the run's name and scheduled time; lastScheduleTime does not move,
// and Replace waits for the run's time.
func TestEarlyStartCreatesTheRunEarly(t *testing.T) {
	w, _ := earlyStartWorld(t)
	lastBefore := w.sj.Status.LastScheduleTime.Time
	plan, out := w.reconcile(mustTime("2026-11-24T09:50:00Z"))
	if plan.Create != nil || plan.Early == nil {
		t.Fatalf("create %v, early %v; want the 10:00 run early", plan.Create, plan.Early)
	}
	early := plan.Early.Job
	if early.Name != "mycronjob-29925240" || early.Annotations[v1alpha1.ScheduledTimestampAnnotation] != "2026-11-24T10:00:00Z" {
		t.Errorf("early job %s %v, want the 10:00 run's name and scheduled time", early.Name, early.Annotations)
	}
	if got := *early.Spec.ActiveDeadlineSeconds; got != 300+600 {
		t.Errorf("activeDeadlineSeconds %d, want 300 + the 600 s wait", got)
	}
	if len(plan.Deletes) != 0 {
		t.Errorf("deleted %v; Replace must wait for 10:00", plan.Deletes)
	}
	if got := out.Status.LastScheduleTime.Time; !got.Equal(lastBefore) {
		t.Errorf("lastScheduleTime %v, want still %v", got, lastBefore)
	}
	if !slices.Contains(reasons(out), v1alpha1.ReasonWarmUpStarted) {
		t.Errorf("events %v, want WarmUpStarted", reasons(out))
	}
	if plan, _ = w.reconcile(mustTime("2026-11-24T09:51:00Z")); plan.Early != nil || plan.Create != nil {
		t.Errorf("09:51: created %v %v again", plan.Early, plan.Create)
	}
}

// TestEarlyStartRunsAtItsTime: at 10:00 no second Job is made, Replace
// replaces the 09:00 run, and lastScheduleTime becomes 10:00.
func TestEarlyStartRunsAtItsTime(t *testing.T) {
	w, previous := earlyStartWorld(t)
	w.reconcile(mustTime("2026-11-24T09:50:00Z"))
	plan, out := w.reconcile(mustTime("2026-11-24T10:00:00.1Z"))
	if plan.Create != nil || plan.Early != nil {
		t.Errorf("created %v %v", plan.Create, plan.Early)
	}
	if len(plan.Deletes) != 1 || plan.Deletes[0].Job.Name != previous.Name {
		t.Errorf("deletes %v, want the previous run replaced", plan.Deletes)
	}
	if got := out.Status.LastScheduleTime.Time; !got.Equal(mustTime("2026-11-24T10:00:00Z")) {
		t.Errorf("lastScheduleTime %v, want 10:00", got)
	}
}

// TestEarlyStartWaitsUnderForbid: no early Job while another run is active.
func TestEarlyStartWaitsUnderForbid(t *testing.T) {
	now := mustTime("2026-11-24T09:50:00Z")
	sj := warmJob("0 * * * *", "", "", 10*time.Minute, now)
	sj.Spec.WarmUp.Strategy = v1alpha1.WarmUpEarlyStart
	sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
	running := childJob(sj, mustTime("2026-11-24T09:00:00Z"), "running", false)
	if plan := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{running}, Now: now}); plan.Early != nil {
		t.Errorf("an early Job beside an active run under Forbid")
	}
	running.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	if plan := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{running}, Now: now.Add(5 * time.Minute)}); plan.Early == nil {
		t.Errorf("no early Job once the active run finished")
	}
}

// TestStartLatenessIsMeasuredOnce: the first container start of the last
// run's pods, recorded in status once.
func TestStartLatenessIsMeasuredOnce(t *testing.T) {
	now := mustTime("2026-11-24T10:00:30Z")
	sj := scheduledJob(onTheHour, mustTime("2026-11-24T08:00:00Z"))
	job := childJob(sj, mustTime("2026-11-24T10:00:00Z"), "run", false)
	sj.Status.LastScheduleTime = &metav1.Time{Time: mustTime("2026-11-24T10:00:00Z")}
	if RunToMeasure(sj, []*batchv1.Job{job}, now) != nil {
		t.Error("measured before the Job reports a ready pod")
	}
	job.Status.Ready = ptr.To[int32](1)
	if RunToMeasure(sj, []*batchv1.Job{job}, now) != job {
		t.Fatal("the run is not measured once a pod is ready")
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(mustTime("2026-11-24T10:00:04Z"))}}}}}}
	out := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{job}, RunPods: []*corev1.Pod{pod}, Now: now}).Finish()
	if out.Started == nil || out.Started.Lateness.Duration != 4*time.Second || out.WarmUp != "none" {
		t.Fatalf("start %+v (warm-up %s), want 4s late without warm-up", out.Started, out.WarmUp)
	}
	if s := out.Status.LastRunStart; s == nil || s.Lateness.Duration != 4*time.Second || !s.ScheduledTime.Time.Equal(mustTime("2026-11-24T10:00:00Z")) {
		t.Errorf("lastRunStart %+v", s)
	}
	if r := out.Status.RecentRunStarts; len(r) != 1 || !equality.Semantic.DeepEqual(r[0], *out.Status.LastRunStart) {
		t.Errorf("recentRunStarts %+v, want lastRunStart alone", r)
	}
	sj.Status = out.Status
	if RunToMeasure(sj, []*batchv1.Job{job}, now) != nil {
		t.Error("the same run is measured again")
	}
}

// TestCapacityBufferUnavailable: where the API is not served, CapacityReady
// says so, naming what is missing, and the run starts at its time.
func TestCapacityBufferUnavailable(t *testing.T) {
	sj := warmJob("0 * * * *", "", "", 10*time.Minute, mustTime("2026-11-24T09:30:00Z"))
	sj.Spec.WarmUp.Strategy = v1alpha1.WarmUpCapacityBuffer
	api := warmup.ChooseBufferAPI(nil)
	plan := Decide(Input{ScheduledJob: sj, Now: mustTime("2026-11-24T09:50:00Z"), BufferAPI: api})
	out := plan.Finish()
	c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionCapacityReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonCapacityBufferUnavailable || !strings.Contains(c.Message, "autoscaling.x-k8s.io") {
		t.Errorf("CapacityReady %+v, want False/CapacityBufferUnavailable naming the API", c)
	}
	if got := reasons(out); !slices.Equal(got, []string{v1alpha1.ReasonCapacityBufferUnavailable}) {
		t.Errorf("events %v, want one CapacityBufferUnavailable", got)
	}
	sj.Status = out.Status
	run := Decide(Input{ScheduledJob: sj, Now: mustTime("2026-11-24T10:00:00.1Z"), BufferAPI: api})
	if run.Create == nil {
		t.Error("the run did not start at its time")
	}
}

// TestCapacityBufferRefused: a buffer the cluster refuses (a policy
// engine, RBAC) is reported on CapacityReady and as an event, like a
// refused placeholder.
func TestCapacityBufferRefused(t *testing.T) {
	sj := warmJob("0 * * * *", "", "", 10*time.Minute, mustTime("2026-11-24T09:30:00Z"))
	sj.Spec.WarmUp.Strategy = v1alpha1.WarmUpCapacityBuffer
	plan := Decide(Input{ScheduledJob: sj, Now: mustTime("2026-11-24T09:50:00Z"), BufferAPI: warmup.BufferAPI{Version: "v1beta1"}})
	if len(plan.WarmUp.CreateBuffers) != 1 {
		t.Fatalf("%d buffers to create, want 1", len(plan.WarmUp.CreateBuffers))
	}
	refusal := apierrors.NewForbidden(schema.GroupResource{Group: "autoscaling.x-k8s.io", Resource: "capacitybuffers"}, "b", errors.New("denied by policy no-buffers"))
	out := plan.Finish(WarmUpApplied(warmup.Applied{Refused: true, Failed: []warmup.Failure{{Object: "CapacityBuffer " + plan.WarmUp.CreateBuffers[0].Buffer.GetName(), Err: refusal}}}))
	c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionCapacityReady)
	if c == nil || c.Reason != v1alpha1.ReasonWarmUpFailed || !strings.Contains(c.Message, "refused") || !strings.Contains(c.Message, "no-buffers") {
		t.Errorf("CapacityReady %+v, want WarmUpFailed naming the refusal", c)
	}
	if !slices.Contains(reasons(out), v1alpha1.ReasonWarmUpFailed) {
		t.Errorf("events %v, want WarmUpFailed", reasons(out))
	}
}

// TestAutoLeadLifecycle: under lead Auto the first warm-up begins maxLead
// ahead and says so in status.warmUp.lead; once its run has come, the
// next warm-up begins the measured provisioning time times the margin
// ahead.
func TestAutoLeadLifecycle(t *testing.T) {
	sj := warmJob("0 * * * *", "", "", 10*time.Minute, mustTime("2026-11-24T09:30:00Z"))
	sj.Spec.WarmUp.Lead = v1alpha1.Lead{Auto: true}
	sj.Spec.WarmUp.MaxLead = &metav1.Duration{Duration: 20 * time.Minute}
	sj.Spec.JobTemplate.Spec.Parallelism = ptr.To[int32](2)
	w := &world{t: t, sj: sj}
	if _, out := w.reconcile(mustTime("2026-11-24T09:30:00Z")); !out.Status.NextWarmUpTime.Time.Equal(mustTime("2026-11-24T09:40:00Z")) {
		t.Errorf("first nextWarmUpTime %v, want 09:40 (maxLead 20m)", out.Status.NextWarmUpTime)
	}
	plan, out := w.reconcile(mustTime("2026-11-24T09:40:00Z"))
	if len(plan.WarmUp.CreatePods) != 2 {
		t.Fatalf("%d placeholders at 09:40, want 2", len(plan.WarmUp.CreatePods))
	}
	if lead := out.Status.WarmUp.Lead; lead == nil || lead.Reason != v1alpha1.LeadFirstRun || lead.Lead.Duration != 20*time.Minute {
		t.Errorf("status.warmUp.lead %+v, want FirstRun 20m", lead)
	}
	w.bind(mustTime("2026-11-24T09:41:00Z"))
	w.reconcile(mustTime("2026-11-24T09:41:01Z"))
	// A reconcile during the warm-up keeps its lead and its placeholders.
	if plan, out := w.reconcile(mustTime("2026-11-24T09:50:00Z")); len(plan.WarmUp.DeletePods) != 0 || !out.Status.NextWarmUpTime.Time.Equal(mustTime("2026-11-24T09:40:00Z")) {
		t.Errorf("during the warm-up: deleted %d placeholders, nextWarmUpTime %v", len(plan.WarmUp.DeletePods), out.Status.NextWarmUpTime)
	}
	w.reconcile(mustTime("2026-11-24T10:00:00.1Z"))
	w.jobs[0].Status.Ready = ptr.To[int32](2)
	_, out = w.reconcile(mustTime("2026-11-24T10:00:03Z"))
	// Ready 1m after warm-up began, margin 125 % shrunk to 120 %: 72 s.
	if got, want := out.Status.NextWarmUpTime, mustTime("2026-11-24T10:58:48Z"); got == nil || !got.Time.Equal(want) {
		t.Errorf("nextWarmUpTime after the run %v, want %v (lead 72s)", got, want)
	}
	plan, out = w.reconcile(mustTime("2026-11-24T10:58:48Z"))
	checkLearnedLead(t, plan, out.Status.WarmUp.Lead)
}

// checkLearnedLead: the second warm-up begins with 2 placeholders and the
// lead learned from the first (ready after 1m, margin 120 %).
func checkLearnedLead(t *testing.T, plan Plan, lead *v1alpha1.LeadStatus) {
	t.Helper()
	if len(plan.WarmUp.CreatePods) != 2 || lead == nil || lead.Reason != v1alpha1.LeadLearned || lead.Lead.Duration != 72*time.Second ||
		lead.Provisioning == nil || lead.Provisioning.Duration != time.Minute || lead.MarginPercent != 120 {
		t.Errorf("second warm-up: %d placeholders, lead %+v; want 2, Learned 72s from 1m at 120 %%", len(plan.WarmUp.CreatePods), lead)
	}
}
