package concurrency

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// admittedAt lists a run in status.active as admitted d from now.
func admittedAt(job *batchv1.Job, d time.Duration) v1alpha1.GroupRun {
	e := entry(job)
	e.AdmittedAt = metav1.NewTime(now.Add(d))
	e.LabelValue = job.Labels["tenant"]
	return e
}

// finishedAfter marks a run complete d from now.
func finishedAfter(d time.Duration) func(*batchv1.Job) {
	return func(job *batchv1.Job) {
		done(job)
		job.Status.CompletionTime = &metav1.Time{Time: now.Add(d)}
	}
}

// TestPredictedQueue: status.queue lists the waiting runs in the order
// they are admitted, each predicted when the slot it takes frees, every
// run taking typicalRunDuration from its admission.
func TestPredictedQueue(t *testing.T) {
	typical := &metav1.Duration{Duration: 10 * time.Minute}
	perTenant := &v1alpha1.LabelValueLimit{Key: "tenant", MaxActive: 1}
	for _, tc := range []struct {
		name     string
		max      int32
		perValue *v1alpha1.LabelValueLimit
		typical  *metav1.Duration
		active   map[*batchv1.Job]time.Duration // admitted this long from now
		jobs     []*batchv1.Job
		want     []string // name@predicted offset from now, or name alone
		newRun   string   // a run joining now: predicted offset ("": none)
	}{
		{name: "each waiting run takes the slot that frees first, then the one it frees", max: 2, typical: typical,
			active: map[*batchv1.Job]time.Duration{run("a", -3*time.Minute, running): -3 * time.Minute, run("b", -time.Minute, running): -time.Minute},
			jobs:   []*batchv1.Job{run("c", -20*time.Second), run("d", -10*time.Second), run("e", 0)},
			want:   []string{"c@7m0s", "d@9m0s", "e@17m0s"}, newRun: "19m0s"},
		{name: "without a typical duration: the order alone", max: 1,
			active: map[*batchv1.Job]time.Duration{run("a", -time.Minute, running): -time.Minute},
			jobs:   []*batchv1.Job{run("c", -10*time.Second, priority(5)), run("b", -20*time.Second)},
			want:   []string{"c", "b"}},
		{name: "room for a new run: no prediction", max: 3, typical: typical,
			active: map[*batchv1.Job]time.Duration{run("a", -time.Minute, running): -time.Minute}},
		{name: "a run started by someone else holds a slot from its start", max: 1, typical: typical,
			jobs: []*batchv1.Job{run("x", -2*time.Minute, func(job *batchv1.Job) {
				running(job)
				job.Status.StartTime = &metav1.Time{Time: now.Add(-2 * time.Minute)}
			}), run("c", -10*time.Second)},
			want: []string{"c@8m0s"}, newRun: "18m0s"},
		{name: "over the limit: a slot frees only once enough runs have finished", max: 1, typical: typical,
			active: map[*batchv1.Job]time.Duration{run("a", -5*time.Minute, running): -5 * time.Minute, run("b", -time.Minute, running): -time.Minute},
			jobs:   []*batchv1.Job{run("c", -10*time.Second)},
			want:   []string{"c@9m0s"}, newRun: "19m0s"},
		{name: "per value: a run waits for its value's slot, and takes the group's then", max: 2, perValue: perTenant, typical: typical,
			active: map[*batchv1.Job]time.Duration{run("a1", -4*time.Minute, running, tenant("a")): -4 * time.Minute, run("b1", -2*time.Minute, running, tenant("b")): -2 * time.Minute},
			jobs:   []*batchv1.Job{run("b2", -30*time.Second, tenant("b")), run("a2", -20*time.Second, tenant("a")), run("a3", -10*time.Second, tenant("a"))},
			want:   []string{"b2@8m0s", "a2@6m0s", "a3@16m0s"}, newRun: "18m0s"},
		{name: "a prediction already past: the runs ahead take longer than typical", max: 1, typical: typical,
			active: map[*batchv1.Job]time.Duration{run("a", -15*time.Minute, running): -15 * time.Minute},
			jobs:   []*batchv1.Job{run("c", -10*time.Second)},
			want:   []string{"c@-5m0s"}, newRun: "5m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: tc.max, LimitPerLabelValue: tc.perValue}, Now: now,
				Status: v1alpha1.ConcurrencyGroupStatus{TypicalRunDuration: tc.typical}}
			for job, d := range tc.active {
				in.Status.Active = append(in.Status.Active, admittedAt(job, d))
				in.Jobs = append(in.Jobs, job)
			}
			in.Jobs = append(in.Jobs, tc.jobs...)
			var got []string
			status := Decide(in).Status
			if newRun := status.NewRunAdmission; (newRun == nil) != (tc.newRun == "") || (newRun != nil && newRun.Sub(now).String() != tc.newRun) {
				t.Errorf("a new run predicted at %v, want %q from now", newRun, tc.newRun)
			}
			for _, run := range status.Queue {
				if run.PredictedAdmission == nil {
					got = append(got, run.Name)
					continue
				}
				got = append(got, fmt.Sprintf("%s@%s", run.Name, run.PredictedAdmission.Sub(now)))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("queue %v, want %v", got, tc.want)
			}
		})
	}
}

// TestQueueListsTheFirstHundred: a long queue is listed up to
// MaxQueueListed runs; status.waiting counts them all.
func TestQueueListsTheFirstHundred(t *testing.T) {
	in := Input{Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}, Now: now}
	for i := range 150 {
		in.Jobs = append(in.Jobs, run(fmt.Sprintf("r%03d", i), time.Duration(i)*time.Second))
	}
	status := Decide(in).Status
	if len(status.Queue) != v1alpha1.MaxQueueListed || status.Waiting != 149 || status.Queue[0].Name != "r001" {
		t.Errorf("queue of %d from %s, waiting %d; want %d from r001, 149", len(status.Queue), status.Queue[0].Name, status.Waiting, v1alpha1.MaxQueueListed)
	}
}

// TestTypicalRunDuration: each run seen finishing moves the typical
// duration a quarter of the way to its own (the first sets it); a run
// that leaves unfinished (gone, missed) teaches nothing.
func TestTypicalRunDuration(t *testing.T) {
	for _, tc := range []struct {
		name     string
		previous *metav1.Duration
		job      *batchv1.Job
		want     string
	}{
		{"the first run sets it", nil, run("a", -9*time.Minute, finishedAfter(-time.Minute)), "8m0s"},
		{"a later one moves it a quarter of the way", &metav1.Duration{Duration: 4 * time.Minute}, run("a", -9*time.Minute, finishedAfter(-time.Minute)), "5m0s"},
		{"its Complete condition when it has no completion time", nil, run("a", -9*time.Minute, func(job *batchv1.Job) {
			done(job)
			job.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-3 * time.Minute))
		}), "6m0s"},
		{"a failed run counts", nil, run("a", -9*time.Minute, func(job *batchv1.Job) {
			running(job)
			job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-7 * time.Minute))}}
		}), "2m0s"},
		{"a missed run teaches nothing", &metav1.Duration{Duration: 4 * time.Minute}, run("a", -9*time.Minute, missed), "4m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}, Now: now,
				Status: v1alpha1.ConcurrencyGroupStatus{TypicalRunDuration: tc.previous, Active: []v1alpha1.GroupRun{admittedAt(tc.job, -9*time.Minute)}},
				Jobs:   []*batchv1.Job{tc.job}}
			got := Decide(in).Status.TypicalRunDuration
			if got == nil || got.Duration.String() != tc.want {
				t.Errorf("typicalRunDuration %v, want %s", got, tc.want)
			}
		})
	}
}

// TestUpcomingRuns: the members' next runs are predicted behind the
// waiting ones, in the order of their times, each not before it is due;
// three members due at the same minute learn that the third will wait.
func TestUpcomingRuns(t *testing.T) {
	in := Input{Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 2}, Now: now,
		Status: v1alpha1.ConcurrencyGroupStatus{TypicalRunDuration: &metav1.Duration{Duration: 10 * time.Minute}}}
	a := run("a", -3*time.Minute, running)
	in.Status.Active, in.Jobs = []v1alpha1.GroupRun{admittedAt(a, -3*time.Minute)}, []*batchv1.Job{a}
	due := now.Add(5 * time.Minute)
	in.Upcoming = []Upcoming{{Namespace: "team", JobName: "u3", Scheduled: due}, {Namespace: "team", JobName: "u1", Scheduled: due, Priority: 5},
		{Namespace: "team", JobName: "u2", Scheduled: due}, {Namespace: "team", JobName: "later", Scheduled: now.Add(time.Hour)}}
	var got []string
	for _, run := range Decide(in).Status.Upcoming {
		got = append(got, fmt.Sprintf("%s@%s", run.Name, run.PredictedAdmission.Sub(now)))
	}
	if want := []string{"u1@5m0s", "u2@7m0s", "u3@15m0s", "later@1h0m0s"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("upcoming %v, want %v", got, want)
	}
}

// TestUpcomingRunsOfExcludedNamespaces: a member in a namespace the group
// does not select is not predicted (its run will be refused), and takes
// no slot from the members behind it.
func TestUpcomingRunsOfExcludedNamespaces(t *testing.T) {
	in := Input{Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}, Now: now, Excluded: map[string]bool{"tenant": true},
		Status: v1alpha1.ConcurrencyGroupStatus{TypicalRunDuration: &metav1.Duration{Duration: 10 * time.Minute}}}
	due := now.Add(5 * time.Minute)
	in.Upcoming = []Upcoming{{Namespace: "tenant", JobName: "first", Scheduled: due, Priority: 5}, {Namespace: "team", JobName: "second", Scheduled: due}}
	var got []string
	for _, run := range Decide(in).Status.Upcoming {
		got = append(got, fmt.Sprintf("%s@%s", run.Name, run.PredictedAdmission.Sub(now)))
	}
	if want := []string{"second@5m0s"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("upcoming %v, want %v", got, want)
	}
}
