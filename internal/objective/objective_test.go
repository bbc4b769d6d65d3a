package objective

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

var (
	noon      = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	objective = &v1alpha1.StartObjective{Within: metav1.Duration{Duration: 30 * time.Second}, Percent: "99", WindowDays: 7}
)

func start(scheduled time.Time, lateness time.Duration, phases ...v1alpha1.RunPhase) *v1alpha1.RunStart {
	return &v1alpha1.RunStart{ScheduledTime: metav1.NewTime(scheduled), StartTime: metav1.NewTime(scheduled.Add(lateness)),
		Lateness: metav1.Duration{Duration: lateness}, Phases: phases}
}

func at(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// TestCount: each way a run is counted, once, into its UTC day, and the
// window's totals, attainment and met.
func TestCount(t *testing.T) {
	yesterday := noon.AddDate(0, 0, -1)
	for name, tc := range map[string]struct {
		objective *v1alpha1.StartObjective
		status    *v1alpha1.StartObjectiveStatus
		seen      Seen
		now       time.Time
		want      *v1alpha1.StartObjectiveStatus
		runs      int
		late      int
	}{
		"no objective": {seen: Seen{Started: start(noon, time.Minute)}, now: noon.Add(time.Minute)},
		"no run yet": {objective: objective, now: noon,
			want: &v1alpha1.StartObjectiveStatus{Met: true}},
		"a run on time": {objective: objective, seen: Seen{Started: start(noon, 30*time.Second)}, now: noon.Add(time.Minute),
			want: &v1alpha1.StartObjectiveStatus{Runs: 1, OnTime: 1, Attainment: "100.00", Met: true,
				Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-30", Runs: 1, OnTime: 1}}, CountedThrough: at(noon)},
			runs: 1},
		"a run late": {objective: objective, seen: Seen{Started: start(noon, 31*time.Second)}, now: noon.Add(time.Minute),
			want: &v1alpha1.StartObjectiveStatus{Runs: 1, Attainment: "0.00",
				Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-30", Runs: 1}}, CountedThrough: at(noon)},
			runs: 1, late: 1},
		"a run counted already": {objective: objective,
			status: &v1alpha1.StartObjectiveStatus{Runs: 1, Attainment: "0.00", Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-30", Runs: 1}}, CountedThrough: at(noon)},
			seen:   Seen{Started: start(noon, 2*time.Minute)}, now: noon.Add(3 * time.Minute),
			want: &v1alpha1.StartObjectiveStatus{Runs: 1, Attainment: "0.00",
				Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-30", Runs: 1}}, CountedThrough: at(noon)}},
		"a run not started": {objective: objective, seen: Seen{NotStarted: noon}, now: noon.Add(90 * time.Second),
			want: &v1alpha1.StartObjectiveStatus{Runs: 1, Attainment: "0.00",
				Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-30", Runs: 1}}, CountedThrough: at(noon)},
			runs: 1, late: 1},
		"missed runs": {objective: objective, seen: Seen{Missed: 3, MissedAt: noon}, now: noon.Add(time.Hour),
			want: &v1alpha1.StartObjectiveStatus{Runs: 3, Attainment: "0.00",
				Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-30", Runs: 3}}},
			runs: 3, late: 3},
		"a new day, newest first": {objective: objective,
			status: &v1alpha1.StartObjectiveStatus{Runs: 100, OnTime: 100, Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-29", Runs: 100, OnTime: 100}}, CountedThrough: at(yesterday)},
			seen:   Seen{Started: start(noon, time.Minute)}, now: noon.Add(2 * time.Minute),
			want: &v1alpha1.StartObjectiveStatus{Runs: 101, OnTime: 100, Attainment: "99.01", Met: true,
				Days:           []v1alpha1.ObjectiveDay{{Date: "2026-11-30", Runs: 1}, {Date: "2026-11-29", Runs: 100, OnTime: 100}},
				CountedThrough: at(noon)},
			runs: 1, late: 1},
		"below the objective in whole runs": {objective: objective,
			status: &v1alpha1.StartObjectiveStatus{Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-30", Runs: 99, OnTime: 98}}, CountedThrough: at(noon.Add(-time.Hour))},
			seen:   Seen{Started: start(noon, 0)}, now: noon.Add(time.Minute),
			// 99 of 100 is 99 %: met; 98.99 % would not be.
			want: &v1alpha1.StartObjectiveStatus{Runs: 100, OnTime: 99, Attainment: "99.00", Met: true,
				Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-30", Runs: 100, OnTime: 99}}, CountedThrough: at(noon)},
			runs: 1},
		"days leave the window": {objective: &v1alpha1.StartObjective{Within: metav1.Duration{Duration: time.Second}, Percent: "90", WindowDays: 2},
			status: &v1alpha1.StartObjectiveStatus{Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-29", Runs: 1, OnTime: 1}, {Date: "2026-11-28", Runs: 5}}},
			now:    noon,
			want: &v1alpha1.StartObjectiveStatus{Runs: 1, OnTime: 1, Attainment: "100.00", Met: true,
				Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-29", Runs: 1, OnTime: 1}}}},
		"every day left the window": {objective: &v1alpha1.StartObjective{Within: metav1.Duration{Duration: time.Second}, Percent: "90", WindowDays: 1},
			status: &v1alpha1.StartObjectiveStatus{Runs: 1, Attainment: "0.00", Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-29", Runs: 1}}, CountedThrough: at(yesterday)},
			now:    noon,
			want:   &v1alpha1.StartObjectiveStatus{Met: true, CountedThrough: at(yesterday)}},
		"a day in UTC": {objective: objective, seen: Seen{Started: start(time.Date(2026, 11, 30, 0, 30, 0, 0, time.FixedZone("CET", 3600)), 0)},
			now: noon,
			want: &v1alpha1.StartObjectiveStatus{Runs: 1, OnTime: 1, Attainment: "100.00", Met: true,
				Days: []v1alpha1.ObjectiveDay{{Date: "2026-11-29", Runs: 1, OnTime: 1}}, CountedThrough: at(time.Date(2026, 11, 29, 23, 30, 0, 0, time.UTC))},
			runs: 1},
	} {
		t.Run(name, func(t *testing.T) {
			got := Count(tc.objective, tc.status, tc.seen, tc.now)
			if diff := cmp.Diff(tc.want, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if got.Runs != tc.runs || got.Late != tc.late {
				t.Errorf("counted %d runs, %d late; want %d, %d", got.Runs, got.Late, tc.runs, tc.late)
			}
			if (got.LateStart != nil || !got.LateNotStarted.IsZero()) != (tc.late > 0 && tc.seen.Missed == 0) {
				t.Errorf("late run for the event: %v, %v", got.LateStart, got.LateNotStarted)
			}
		})
	}
}

// TestEachRunCountedOnce: whatever a run's lateness and however often
// reconciles see it, and whether their status writes land (a write that
// fails is retried from the status before it), a run is counted exactly
// once: when it was seen started, or not started once overdue, whichever
// came first. 2000 random histories of 30 runs a minute apart.
func TestEachRunCountedOnce(t *testing.T) {
	for seed := range uint64(2000) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var status *v1alpha1.StartObjectiveStatus
		wantRuns, wantOnTime := 0, 0
		for i := range 30 {
			var counted, onTime bool
			status, counted, onTime = reconcileOneRun(rng, status, noon.Add(time.Duration(i)*time.Minute))
			if counted {
				wantRuns++
			}
			if onTime {
				wantOnTime++
			}
			if status != nil && int(status.Runs) != wantRuns {
				t.Fatalf("seed %d, run %d: %d runs counted, want %d", seed, i, status.Runs, wantRuns)
			}
		}
		if status != nil && (int(status.Runs) != wantRuns || int(status.OnTime) != wantOnTime) {
			t.Fatalf("seed %d: %d runs, %d on time; want %d, %d", seed, status.Runs, status.OnTime, wantRuns, wantOnTime)
		}
	}
}

// reconcileOneRun reconciles a run of a random lateness, scheduled at
// scheduled, 1 to 5 times at random moments within its minute and the
// next two, each seeing what a reconcile at that moment sees, a quarter of
// their status writes failing. It returns the status, whether the run was
// counted in a write that landed (the first time only), and whether as on
// time.
func reconcileOneRun(rng *rand.Rand, status *v1alpha1.StartObjectiveStatus, scheduled time.Time) (*v1alpha1.StartObjectiveStatus, bool, bool) {
	lateness := time.Duration(rng.IntN(150)) * time.Second
	overdue := scheduled.Add(objective.Within.Duration + NotStartedGrace)
	started := scheduled.Add(lateness)
	counted, onTime := false, false
	for range 1 + rng.IntN(5) {
		now := scheduled.Add(time.Duration(rng.IntN(180)) * time.Second)
		var seen Seen
		switch {
		case !now.Before(started):
			seen.Started = start(scheduled, lateness)
		case !now.Before(overdue):
			seen.NotStarted = scheduled
		}
		got := Count(objective, status, seen, now)
		if rng.IntN(4) == 0 {
			continue // the status write failed: nothing was counted
		}
		status = got.Status
		if got.Runs > 0 && !counted {
			counted = true
			onTime = seen.Started != nil && lateness <= objective.Within.Duration
		}
	}
	return status, counted, onTime
}

func job(scheduled time.Time, triggered bool) *batchv1.Job {
	j := &batchv1.Job{}
	j.Annotations = map[string]string{v1alpha1.ScheduledTimestampAnnotation: scheduled.Format(time.RFC3339)}
	if triggered {
		j.Annotations[v1alpha1.TriggeredAnnotation] = "true"
	}
	return j
}

// TestOverdue: the latest scheduled run not measured or counted, with the
// moment it counts late unstarted; none for runs by hand, runs counted or
// measured, future runs, or without an objective.
func TestOverdue(t *testing.T) {
	earlier, latest := job(noon.Add(-time.Minute), false), job(noon, false)
	byHand := job(noon.Add(10*time.Second), true)
	future := job(noon.Add(time.Hour), false)
	jobs := []*batchv1.Job{earlier, latest, byHand, future}
	for name, tc := range map[string]struct {
		objective *v1alpha1.StartObjective
		status    *v1alpha1.StartObjectiveStatus
		measured  time.Time
		want      *batchv1.Job
	}{
		"the latest":         {objective: objective, want: latest},
		"no objective":       {},
		"measured":           {objective: objective, measured: noon},
		"counted":            {objective: objective, status: &v1alpha1.StartObjectiveStatus{CountedThrough: at(noon)}},
		"counted an earlier": {objective: objective, status: &v1alpha1.StartObjectiveStatus{CountedThrough: at(noon.Add(-time.Minute))}, measured: noon.Add(-time.Minute), want: latest},
	} {
		t.Run(name, func(t *testing.T) {
			got, due := Overdue(tc.objective, tc.status, tc.measured, jobs, noon.Add(time.Minute))
			if got != tc.want {
				t.Fatalf("Overdue named %v, want %v", got, tc.want)
			}
			if got != nil && !due.Equal(noon.Add(90*time.Second)) {
				t.Errorf("due at %s, want %s", due, noon.Add(90*time.Second))
			}
		})
	}
}

// TestMessages: a LateStart event names the run, its lateness, the
// objective and the dominant phase.
func TestMessages(t *testing.T) {
	late := start(noon, 94*time.Second,
		v1alpha1.RunPhase{Name: v1alpha1.PhaseController, Duration: metav1.Duration{Duration: 4 * time.Second}},
		v1alpha1.RunPhase{Name: v1alpha1.PhaseNode, Duration: metav1.Duration{Duration: 80 * time.Second}},
		v1alpha1.RunPhase{Name: v1alpha1.PhaseImagePull, Duration: metav1.Duration{Duration: 10 * time.Second}})
	if got, want := LateStartMessage(objective, *late), "the run of 2026-11-30T12:00:00Z started 1m34s after its time, beyond the start objective's 30s, most of it (1m20s) in phase Node"; !strings.HasPrefix(got, want) {
		t.Errorf("LateStart message %q, want it to start %q", got, want)
	}
	if got, want := NotStartedMessage(objective, noon, noon.Add(91500*time.Millisecond)), "the run of 2026-11-30T12:00:00Z has not started 1m31s after its time, beyond the start objective's 30s"; !strings.HasPrefix(got, want) {
		t.Errorf("not started message %q, want it to start %q", got, want)
	}
}
