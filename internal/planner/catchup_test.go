package planner

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// catchUpWorld plays a ScheduledJob's plans forward in time: each step
// plans at its time, carries the plan out as succeeded (a created Job
// runs for runFor, then succeeds) and keeps the status written.
type catchUpWorld struct {
	sj      *v1alpha1.ScheduledJob
	jobs    []*batchv1.Job
	runFor  time.Duration
	started []time.Time // scheduled times, in the order their Jobs were created
	events  []Event
}

func newCatchUpWorld(policy v1alpha1.ConcurrencyPolicy, maxRuns int32, deadline *int64) *catchUpWorld {
	sj := scheduledJob("* * * * *", topOfTheHour.Add(-time.Hour))
	sj.Spec.ConcurrencyPolicy = policy
	sj.Spec.StartingDeadlineSeconds = deadline
	if maxRuns > 0 {
		sj.Spec.CatchUp = &v1alpha1.CatchUp{MaxRuns: maxRuns}
	}
	// The controller last started the 10:00 run and announced 10:01.
	sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour}
	sj.Status.NextScheduleTime = &metav1.Time{Time: topOfTheHour.Add(time.Minute)}
	sj.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonScheduled}}
	return &catchUpWorld{sj: sj, runFor: 30 * time.Second}
}

// step plans at now and carries the plan out.
func (w *catchUpWorld) step(now time.Time) Plan {
	for _, job := range w.jobs {
		if job.Status.CompletionTime == nil && !now.Before(job.CreationTimestamp.Add(w.runFor)) {
			job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			job.Status.CompletionTime = &metav1.Time{Time: job.CreationTimestamp.Add(w.runFor)}
		}
	}
	plan := Decide(Input{ScheduledJob: w.sj, Jobs: w.jobs, Now: now, CountFailures: true})
	out := succeed(plan)
	if run := plan.Create; run != nil {
		job := run.Job.DeepCopy()
		job.UID = types.UID("created-" + job.Name)
		job.CreationTimestamp = metav1.Time{Time: now}
		w.jobs = append(w.jobs, job)
		w.started = append(w.started, run.Scheduled)
	}
	w.sj.Status = out.Status
	w.events = append(w.events, out.Events...)
	return plan
}

// until steps from start every second until end.
func (w *catchUpWorld) until(start, end time.Time) {
	for now := start; now.Before(end); now = now.Add(time.Second) {
		w.step(now)
	}
}

func minutes(from time.Time, offsets ...int) []time.Time {
	var times []time.Time
	for _, m := range offsets {
		times = append(times, from.Add(time.Duration(m)*time.Minute))
	}
	return times
}

func formatTimes(times []time.Time) string {
	var s []string
	for _, t := range times {
		s = append(s, t.UTC().Format(time.TimeOnly))
	}
	return strings.Join(s, " ")
}

// TestCatchUp: back from an outage from 10:00:30 to 10:10:30 (runs
// 10:01–10:10 missed), a minutely ScheduledJob with catchUp starts the most
// recent maxRuns runs within its deadline, oldest first, one per plan, with
// status announcing the next in the past, one CatchUp event and
// status.catchUp saying how many started and how many were dropped;
// without catchUp only 10:10 starts, as a CronJob's would.
func TestCatchUp(t *testing.T) {
	back := topOfTheHour.Add(10*time.Minute + 30*time.Second)
	for name, tc := range map[string]struct {
		policy      v1alpha1.ConcurrencyPolicy
		maxRuns     int32
		deadline    *int64
		wantStarted []time.Time // through 10:12:59
		wantDropped int32
	}{
		"without catchUp: the latest only": {maxRuns: 0, wantStarted: minutes(topOfTheHour, 10, 11, 12)},
		"Allow, maxRuns 3":                 {maxRuns: 3, wantStarted: minutes(topOfTheHour, 8, 9, 10, 11, 12), wantDropped: 7},
		"Allow, maxRuns 20: all ten":       {maxRuns: 20, wantStarted: minutes(topOfTheHour, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)},
		"the deadline bounds it":           {maxRuns: 20, deadline: ptr.To[int64](100), wantStarted: minutes(topOfTheHour, 9, 10, 11, 12), wantDropped: 8},
		// Runs of 30 s, one at a time: 10:08 at 10:10:30, 10:09 at 10:11:00
		// (10:11 is due by then: still three owed), 10:10 at 10:11:30,
		// 10:11 at 10:12:00, 10:12 at 10:12:30.
		"Forbid, one after another": {policy: v1alpha1.ForbidConcurrent, maxRuns: 3, wantStarted: minutes(topOfTheHour, 8, 9, 10, 11, 12), wantDropped: 7},
	} {
		t.Run(name, func(t *testing.T) {
			w := newCatchUpWorld(tc.policy, tc.maxRuns, tc.deadline)
			first := w.step(back)
			if tc.maxRuns > 0 && first.Create != nil {
				if !first.Create.CatchingUp || first.StandbyUntil.After(back) {
					t.Errorf("the first run: catching up %v, standby until %s: want a catch-up the standby leaves alone", first.Create.CatchingUp, first.StandbyUntil)
				}
				if next := w.sj.Status.NextScheduleTime; next == nil || !next.Time.Before(back) {
					t.Errorf("nextScheduleTime %v during the catch-up: want the next run owed, in the past", next)
				}
			}
			w.until(back.Add(time.Second), topOfTheHour.Add(13*time.Minute))
			if !slices.Equal(w.started, tc.wantStarted) {
				t.Errorf("started %s\nwant    %s", formatTimes(w.started), formatTimes(tc.wantStarted))
			}
			checkCatchUpRecord(t, w, tc.maxRuns > 0 && len(tc.wantStarted) > 3, tc.wantDropped)
		})
	}
}

// checkCatchUpRecord: one CatchUp event and status.catchUp when there was
// a catch-up, with the runs it started and dropped; none otherwise.
func checkCatchUpRecord(t *testing.T, w *catchUpWorld, caughtUp bool, dropped int32) {
	t.Helper()
	var catchUps []Event
	for _, e := range w.events {
		if e.Reason == v1alpha1.ReasonCatchUp {
			catchUps = append(catchUps, e)
		}
	}
	if !caughtUp {
		if len(catchUps) > 0 || w.sj.Status.CatchUp != nil {
			t.Errorf("events %v, status.catchUp %+v: want no catch-up", catchUps, w.sj.Status.CatchUp)
		}
		return
	}
	if len(catchUps) != 1 {
		t.Fatalf("CatchUp events %v: want one", catchUps)
	}
	record := w.sj.Status.CatchUp
	if record == nil || record.Dropped != dropped || !record.From.Time.Equal(w.started[0]) {
		t.Fatalf("status.catchUp %+v: want from %s, %d dropped", record, w.started[0], dropped)
	}
	want := fmt.Sprintf("catching up %d missed runs", record.Runs)
	if dropped > 0 {
		want = fmt.Sprintf("%d older missed runs dropped", dropped)
	}
	if !strings.Contains(catchUps[0].Message, want) {
		t.Errorf("event %q: want %q", catchUps[0].Message, want)
	}
	if last := w.sj.Status.LastMissedTime; dropped > 0 && (last == nil || !last.Time.Equal(w.started[0].Add(-time.Minute))) {
		t.Errorf("lastMissedTime %v: want the latest dropped run, %s", last, w.started[0].Add(-time.Minute))
	}
}

// TestNoCatchUpAfterASuspension: runs due while the ScheduledJob was
// suspended are not owed; resuming starts the latest only, as without
// catchUp.
func TestNoCatchUpAfterASuspension(t *testing.T) {
	w := newCatchUpWorld(v1alpha1.AllowConcurrent, 5, nil)
	w.sj.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonSuspended}}
	w.until(topOfTheHour.Add(10*time.Minute+30*time.Second), topOfTheHour.Add(11*time.Minute+30*time.Second))
	if want := minutes(topOfTheHour, 10, 11); !slices.Equal(w.started, want) {
		t.Errorf("started %s, want %s", formatTimes(w.started), formatTimes(want))
	}
}

// TestCatchUpClaimHolds: under Forbid a catch-up's claimed run whose
// claimer died before creating the Job is owed until the bound or the
// deadline leaves it behind, not dropped when a later run is due (the
// claimer may still be creating it), and then dropped RequestBound later
// and recorded missed.
func TestCatchUpClaimHolds(t *testing.T) {
	w := newCatchUpWorld(v1alpha1.ForbidConcurrent, 3, nil)
	claimed := topOfTheHour.Add(8 * time.Minute)
	w.sj.Status.Active = []corev1.ObjectReference{{Kind: "Job", APIVersion: "batch/v1", Namespace: w.sj.Namespace, Name: w.sj.JobName(claimed)}}
	w.sj.Status.NextScheduleTime = &metav1.Time{Time: claimed}
	w.sj.Status.LastMissedTime = &metav1.Time{Time: claimed.Add(-time.Minute)}
	// At 10:10:40 the claim is the oldest run owed: its Job is created.
	plan := Decide(Input{ScheduledJob: w.sj, Now: topOfTheHour.Add(10*time.Minute + 40*time.Second), CountFailures: true})
	if plan.Create == nil || plan.Create.Job.Name != w.sj.JobName(claimed) {
		t.Fatalf("create %v: want the claimed run completed", plan.Create)
	}
	// At 10:11:10 (three runs newer than 10:08 due since 10:11:00) no plan
	// starts it any more, but a create planned before may still arrive.
	plan = Decide(Input{ScheduledJob: w.sj, Now: topOfTheHour.Add(11*time.Minute + 10*time.Second), CountFailures: true})
	if !claimedBy(succeed(plan).Status.Active, w.sj.JobName(claimed)) || plan.Create != nil {
		t.Fatalf("within RequestBound of 10:11: active %v, create %v: want the claim kept and nothing started beside it", plan.beforeActions.Status.Active, plan.Create)
	}
	// At 10:11:15 it is dropped and missed; the oldest run owed, 10:09, starts.
	plan = Decide(Input{ScheduledJob: w.sj, Now: topOfTheHour.Add(11*time.Minute + 15*time.Second), CountFailures: true})
	out := succeed(plan)
	if claimedBy(out.Status.Active, w.sj.JobName(claimed)) || plan.Create == nil || !plan.Create.Scheduled.Equal(claimed.Add(time.Minute)) {
		t.Fatalf("active %v, create %v: want the claim dropped and 10:09 started", out.Status.Active, plan.Create)
	}
	if last := out.Status.LastMissedTime; last == nil || !last.Time.Equal(claimed) {
		t.Errorf("lastMissedTime %v, want %s", last, claimed)
	}
}

func claimedBy(active []corev1.ObjectReference, name string) bool {
	return slices.ContainsFunc(active, func(ref corev1.ObjectReference) bool { return ref.Name == name })
}

// TestCatchUpNotBeforeAnnounced: a schedule edited while the controller
// was down does not make the runs before the one last announced owed; the
// runs of the new schedule from then on start.
func TestCatchUpNotBeforeAnnounced(t *testing.T) {
	w := newCatchUpWorld(v1alpha1.AllowConcurrent, 10, nil)
	// Announced under an hourly schedule: 11:00; now every minute.
	w.sj.Status.NextScheduleTime = &metav1.Time{Time: topOfTheHour.Add(time.Hour)}
	w.until(topOfTheHour.Add(10*time.Minute+30*time.Second), topOfTheHour.Add(11*time.Minute+30*time.Second))
	// The first plan announces the new schedule's next run, 10:11.
	if want := minutes(topOfTheHour, 11); !slices.Equal(w.started, want) {
		t.Errorf("started %s: want %s, nothing owed before the announced 11:00", formatTimes(w.started), formatTimes(want))
	}
}
