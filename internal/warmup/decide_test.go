package warmup

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Named instants: the run at 10:00, warm-up 10 minutes ahead, hold 2m.
var (
	run        = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	nextRun    = run.Add(time.Hour)
	warmStart  = run.Add(-10 * time.Minute)
	beforeWarm = run.Add(-15 * time.Minute)
	afterRun   = run.Add(100 * time.Millisecond)
)

func decideOwner() Owner {
	owner := testOwner()
	owner.Template.Spec.Parallelism = ptr.To[int32](2)
	return owner
}

func placeholderOptions() Options {
	return (&v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(10 * time.Minute)}).Settings()
}

// placed returns the placeholders of the run at `at`, created at warm-up
// start; the i-th is bound to a node at bound[i] when that is set.
func placed(at time.Time, bound ...time.Time) []*corev1.Pod {
	pods := Placeholders(decideOwner(), "report-"+v1alpha1.RunLabelValue(at), at, placeholderOptions())
	for i, pod := range pods {
		pod.UID = types.UID("p" + pod.Name)
		pod.CreationTimestamp = metav1.NewTime(at.Add(-10 * time.Minute))
		if i < len(bound) && !bound[i].IsZero() {
			pod.Spec.NodeName = "node-" + string(rune('a'+i))
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(bound[i])}}
		}
	}
	return pods
}

func jobWithReady(ready int32) *batchv1.Job {
	return &batchv1.Job{Status: batchv1.JobStatus{Ready: ptr.To(ready)}}
}

func warmState(ready *time.Time, scheduled int32) *v1alpha1.WarmUpStatus {
	s := &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(run), StartTime: metav1.NewTime(warmStart), Pods: 2, ScheduledPods: scheduled}
	if ready != nil {
		s.ReadyTime = &metav1.Time{Time: *ready}
	}
	return s
}

type decideWant struct {
	create, delete []string // pod names
	events         []string // reasons
	wake           []time.Time
	nextStart      time.Time
	state          *v1alpha1.WarmUpStatus // nil: none
	readyAfter     time.Duration          // 0: not set
	late           bool
}

func TestDecide(t *testing.T) {
	at0951 := run.Add(-9 * time.Minute)
	at0952 := run.Add(-8 * time.Minute)
	at1001 := run.Add(time.Minute)
	names := func(at time.Time, idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, PlaceholderName("report-"+v1alpha1.RunLabelValue(at), i))
		}
		return out
	}
	tests := map[string]struct {
		in   Input
		want decideWant
	}{
		"before warm-up: wake at its start": {
			in:   Input{Now: beforeWarm, Next: run, Current: run.Add(-time.Hour), CurrentStarts: true},
			want: decideWant{wake: []time.Time{warmStart}, nextStart: warmStart},
		},
		"warm-up begins: every placeholder is created": {
			in:   Input{Now: warmStart, Next: run},
			want: decideWant{create: names(run, 0, 1), events: []string{"WarmUpStarted"}, nextStart: warmStart, state: &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(run), StartTime: metav1.NewTime(warmStart), Pods: 2}},
		},
		"one placed": {
			in:   Input{Now: at0952, Next: run, Pods: placed(run, at0951), Previous: warmState(nil, 0)},
			want: decideWant{nextStart: warmStart, state: warmState(nil, 1)},
		},
		"all placed: ready when the last got its node": {
			in:   Input{Now: at0952, Next: run, Pods: placed(run, at0951, at0951.Add(10*time.Second)), Previous: warmState(nil, 1)},
			want: decideWant{events: []string{"WarmUpReady"}, nextStart: warmStart, state: warmState(ptr.To(at0951.Add(10*time.Second)), 2), readyAfter: 70 * time.Second},
		},
		"a placeholder lost before the run is created again": {
			in:   Input{Now: at0952, Next: run, Pods: placed(run, at0951)[:1], Previous: warmState(nil, 1)},
			want: decideWant{create: names(run, 1), nextStart: warmStart, state: warmState(nil, 1)},
		},
		"placeholders of a new shape: extra ones go": {
			in: Input{Now: at0952, Next: run, Pods: append(placed(run, at0951, at0951), func() *corev1.Pod {
				extra := placed(run)[0].DeepCopy()
				extra.Name = PlaceholderName("report-"+v1alpha1.RunLabelValue(run), 2)
				return extra
			}()), Previous: warmState(ptr.To(at0951), 2)},
			want: decideWant{delete: names(run, 2), nextStart: warmStart, state: warmState(ptr.To(at0951), 2)},
		},
		"the run starts: placeholders stay for the hand-off": {
			in: Input{Now: afterRun, Next: nextRun, Current: run, CurrentStarts: true, CurrentJob: jobWithReady(0),
				Pods: placed(run, at0951, at0951), Previous: warmState(ptr.To(at0951), 2)},
			want: decideWant{wake: []time.Time{nextRun.Add(-10 * time.Minute), run.Add(2 * time.Minute)}, nextStart: nextRun.Add(-10 * time.Minute), state: warmState(ptr.To(at0951), 2)},
		},
		"the run's pods are ready: the rest go": {
			in: Input{Now: at1001, Next: nextRun, Current: run, CurrentStarts: true, CurrentJob: jobWithReady(2),
				Pods: placed(run, at0951, at0951), Previous: warmState(ptr.To(at0951), 2)},
			want: decideWant{delete: names(run, 0, 1), wake: []time.Time{nextRun.Add(-10 * time.Minute)}, nextStart: nextRun.Add(-10 * time.Minute), state: warmState(ptr.To(at0951), 2)},
		},
		"the hold runs out": {
			in: Input{Now: run.Add(2 * time.Minute), Next: nextRun, Current: run, CurrentStarts: true, CurrentJob: jobWithReady(1),
				Pods: placed(run, at0951, at0951), Previous: warmState(ptr.To(at0951), 2)},
			want: decideWant{delete: names(run, 0, 1), wake: []time.Time{nextRun.Add(-10 * time.Minute)}, nextStart: nextRun.Add(-10 * time.Minute), state: warmState(ptr.To(at0951), 2)},
		},
		"the run does not start (Forbid): canceled": {
			in: Input{Now: afterRun, Next: nextRun, Current: run, CurrentStarts: false,
				Pods: placed(run, at0951, at0951), Previous: warmState(ptr.To(at0951), 2)},
			want: decideWant{delete: names(run, 0, 1), events: []string{"WarmUpCanceled"}, wake: []time.Time{nextRun.Add(-10 * time.Minute)}, nextStart: nextRun.Add(-10 * time.Minute), state: warmState(ptr.To(at0951), 2)},
		},
		"suspended during warm-up: canceled": {
			in:   Input{Now: at0952, Pods: placed(run, at0951), Previous: warmState(nil, 1)},
			want: decideWant{delete: names(run, 0, 1), events: []string{"WarmUpCanceled"}, state: warmState(nil, 1)},
		},
		"schedule edited during warm-up: the old run's placeholders go": {
			in:   Input{Now: at0952, Next: run.Add(30 * time.Minute), Current: run.Add(-time.Hour), CurrentStarts: true, Pods: placed(run, at0951), Previous: warmState(nil, 1)},
			want: decideWant{delete: names(run, 0, 1), events: []string{"WarmUpCanceled"}, wake: []time.Time{run.Add(20 * time.Minute)}, nextStart: run.Add(20 * time.Minute), state: warmState(nil, 1)},
		},
		"capacity not ready at the run: late": {
			in: Input{Now: afterRun, Next: nextRun, Current: run, CurrentStarts: true, CurrentJob: jobWithReady(0),
				Pods: placed(run, at0951), Previous: warmState(nil, 1)},
			want: decideWant{events: []string{"WarmUpLate"}, wake: []time.Time{nextRun.Add(-10 * time.Minute), run.Add(2 * time.Minute)}, nextStart: nextRun.Add(-10 * time.Minute),
				state: func() *v1alpha1.WarmUpStatus { s := warmState(nil, 1); s.Late = true; return s }(), late: true},
		},
		"ready before the run, unseen while the controller was away: not late": {
			in: Input{Now: afterRun, Next: nextRun, Current: run, CurrentStarts: true, CurrentJob: jobWithReady(0),
				Pods: placed(run, at0951, at0952), Previous: warmState(nil, 1)},
			want: decideWant{events: []string{"WarmUpReady"}, wake: []time.Time{nextRun.Add(-10 * time.Minute), run.Add(2 * time.Minute)}, nextStart: nextRun.Add(-10 * time.Minute),
				state: warmState(ptr.To(at0952), 2), readyAfter: 2 * time.Minute},
		},
		"a placeholder being deleted is neither deleted again nor counted": {
			in: Input{Now: at0952, Next: run, Pods: func() []*corev1.Pod {
				pods := placed(run, at0951, at0951)
				pods[1].DeletionTimestamp = &metav1.Time{Time: at0952}
				return pods
			}(), Previous: warmState(nil, 1)},
			want: decideWant{nextStart: warmStart, state: warmState(nil, 1)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.in.Owner, tc.in.Options = decideOwner(), placeholderOptions()
			checkDecision(t, Decide(tc.in), tc.want)
		})
	}
}

func checkDecision(t *testing.T, d Decision, want decideWant) {
	t.Helper()
	podNames := func(pods []*corev1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := podNames(d.CreatePods); !slices.Equal(got, want.create) {
		t.Errorf("create %v, want %v", got, want.create)
	}
	if got := podNames(d.DeletePods); !slices.Equal(got, want.delete) {
		t.Errorf("delete %v, want %v", got, want.delete)
	}
	var reasons []string
	for _, e := range d.Events {
		reasons = append(reasons, e.Reason)
	}
	if !slices.Equal(reasons, want.events) {
		t.Errorf("events %v, want %v", reasons, want.events)
	}
	slices.SortFunc(d.Wake, time.Time.Compare)
	slices.SortFunc(want.wake, time.Time.Compare)
	if !slices.EqualFunc(d.Wake, want.wake, time.Time.Equal) {
		t.Errorf("wake %v, want %v", d.Wake, want.wake)
	}
	if !d.NextStart.Equal(want.nextStart) {
		t.Errorf("next start %v, want %v", d.NextStart, want.nextStart)
	}
	checkState(t, d, want)
}

// checkState compares the warm-up's state and what it measured.
func checkState(t *testing.T, d Decision, want decideWant) {
	t.Helper()
	got, w := d.State, want.state
	switch {
	case (got == nil) != (w == nil):
		t.Errorf("state %+v, want %+v", got, w)
	case got != nil && (!got.ScheduledTime.Equal(&w.ScheduledTime) || !got.StartTime.Equal(&w.StartTime) || !got.ReadyTime.Equal(w.ReadyTime)):
		t.Errorf("state for %v from %v ready %v, want for %v from %v ready %v", got.ScheduledTime, got.StartTime, got.ReadyTime, w.ScheduledTime, w.StartTime, w.ReadyTime)
	case got != nil && (got.Pods != w.Pods || got.ScheduledPods != w.ScheduledPods || got.Late != w.Late):
		t.Errorf("state %d of %d pods placed, late %v; want %d of %d, late %v", got.ScheduledPods, got.Pods, got.Late, w.ScheduledPods, w.Pods, w.Late)
	}
	if got := ptr.Deref(d.ReadyAfter, 0); got != want.readyAfter {
		t.Errorf("ready after %v, want %v", got, want.readyAfter)
	}
	if d.Late != want.late {
		t.Errorf("late %v, want %v", d.Late, want.late)
	}
}

func TestDecideEarlyStart(t *testing.T) {
	opts := (&v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(10 * time.Minute), Strategy: v1alpha1.WarmUpEarlyStart}).Settings()
	base := Input{Owner: decideOwner(), Options: opts, Next: run}
	// Forbid holds the early Job back while another run is active.
	waiting := base
	waiting.Now = warmStart
	checkDecision(t, Decide(waiting), decideWant{nextStart: warmStart})
	// Created now: warm-up begins; nothing is a placeholder.
	creating := waiting
	creating.NextJobCreating = true
	checkDecision(t, Decide(creating), decideWant{events: []string{"WarmUpStarted"}, nextStart: warmStart,
		state: &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(run), StartTime: metav1.NewTime(warmStart), Pods: 2}})
	// Its pods placed: ready. Placeholders left from a Placeholder warm-up go.
	early := placed(run, warmStart.Add(time.Minute), warmStart.Add(2*time.Minute))
	for _, pod := range early {
		pod.Labels[v1alpha1.WarmUpLabel] = v1alpha1.WarmUpEarlyStartPod
	}
	ready := base
	ready.Now, ready.NextJob = warmStart.Add(3*time.Minute), &batchv1.Job{}
	ready.Pods = append(early, placed(run.Add(-time.Hour))...)
	ready.Previous = &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(run), StartTime: metav1.NewTime(warmStart), Pods: 2}
	d := Decide(ready)
	checkDecision(t, d, decideWant{delete: []string{"report-29925180-placeholder-0", "report-29925180-placeholder-1"}, events: []string{"WarmUpReady"},
		nextStart: warmStart, state: warmState(ptr.To(warmStart.Add(2*time.Minute)), 2), readyAfter: 2 * time.Minute})
}
