package warmup

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestDecideAroundAdmission: for a member of a concurrency group, warm-up
// is placed lead before the run's predicted start, not its scheduled time,
// and held until the hold after it: a run predicted to wait holds no
// capacity while it waits (lead 10m, hold 2m, the run at 10:00); a group
// that refuses the member's runs leaves none to warm.
func TestDecideAroundAdmission(t *testing.T) {
	admitted := run.Add(30 * time.Minute) // predicted, or actual once started
	rewarm := admitted.Add(-10 * time.Minute)
	names := func(at time.Time) []string {
		return []string{PlaceholderName("report-"+v1alpha1.RunLabelValue(at), 0), PlaceholderName("report-"+v1alpha1.RunLabelValue(at), 1)}
	}
	waiting := func(now time.Time) Input {
		return Input{Now: now, Next: nextRun, Current: run, CurrentStarts: true, CurrentWaits: true, CurrentAdmission: admitted, CurrentJob: jobWithReady(0)}
	}
	rewarmed := func(ready *time.Time, placedPods int32) *v1alpha1.WarmUpStatus {
		s := &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(run), StartTime: metav1.NewTime(rewarm), Pods: 2, ScheduledPods: placedPods}
		if ready != nil {
			s.ReadyTime = &metav1.Time{Time: *ready}
		}
		return s
	}
	tests := map[string]struct {
		in           Input
		want         decideWant
		waitingStart time.Time
	}{
		"the next run predicted to start late: warm-up begins lead before then": {
			in:   Input{Now: warmStart, Next: run, NextAdmission: run.Add(20 * time.Minute), Current: run.Add(-time.Hour), CurrentStarts: true},
			want: decideWant{wake: []time.Time{run.Add(10 * time.Minute)}, nextStart: run.Add(10 * time.Minute)},
		},
		"a predicted start before the run's time changes nothing": {
			in: Input{Now: warmStart, Next: run, NextAdmission: run.Add(-5 * time.Minute)},
			want: decideWant{create: names(run), events: []string{"WarmUpStarted"}, nextStart: warmStart,
				state: &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(run), StartTime: metav1.NewTime(warmStart), Pods: 2}},
		},
		"the run waits, predicted to start in 30 minutes: its capacity goes until lead before then": {
			in: func() Input {
				in := waiting(afterRun)
				in.Pods, in.Previous = placed(run, run.Add(-9*time.Minute)), warmState(nil, 1)
				return in
			}(),
			want:         decideWant{delete: names(run), wake: []time.Time{rewarm}},
			waitingStart: rewarm,
		},
		"lead before its predicted start: warmed again": {
			in: waiting(rewarm),
			want: decideWant{create: names(run), events: []string{"WarmUpStarted"}, wake: []time.Time{admitted.Add(2 * time.Minute)},
				state: rewarmed(nil, 0)},
		},
		"ready while it waits": {
			in: func() Input {
				in := waiting(rewarm.Add(3 * time.Minute))
				in.Pods, in.Previous = placed(run, rewarm.Add(time.Minute), rewarm.Add(2*time.Minute)), rewarmed(nil, 1)
				return in
			}(),
			want: decideWant{events: []string{"WarmUpReady"}, wake: []time.Time{admitted.Add(2 * time.Minute)}, state: rewarmed(ptr.To(rewarm.Add(2*time.Minute)), 2), readyAfter: 2 * time.Minute},
		},
		"admitted as predicted: ready in time, held for the hand-off": {
			in: Input{Now: admitted.Add(time.Second), Next: nextRun, Current: run, CurrentStarts: true, CurrentAdmission: admitted, CurrentJob: jobWithReady(0),
				Pods: placed(run, rewarm.Add(time.Minute), rewarm.Add(2*time.Minute)), Previous: rewarmed(ptr.To(rewarm.Add(2*time.Minute)), 2)},
			want: decideWant{wake: []time.Time{nextRun.Add(-10 * time.Minute), admitted.Add(2 * time.Minute)}, nextStart: nextRun.Add(-10 * time.Minute),
				state: rewarmed(ptr.To(rewarm.Add(2*time.Minute)), 2)},
		},
		"still waiting past the hold after its prediction: the capacity goes, and the run is late when it starts": {
			in: func() Input {
				in := waiting(admitted.Add(2 * time.Minute))
				in.Pods, in.Previous = placed(run, rewarm, rewarm), rewarmed(ptr.To(rewarm), 2)
				return in
			}(),
			want: decideWant{delete: names(run), state: rewarmed(nil, 0)},
		},
		"waiting without a prediction: held as any run's, until the hold after its time": {
			in: func() Input {
				in := waiting(afterRun)
				in.CurrentAdmission, in.Pods, in.Previous = time.Time{}, placed(run, run.Add(-9*time.Minute), run.Add(-9*time.Minute)), warmState(ptr.To(run.Add(-9*time.Minute)), 2)
				return in
			}(),
			want: decideWant{wake: []time.Time{run.Add(2 * time.Minute)}, state: warmState(ptr.To(run.Add(-9*time.Minute)), 2)},
		},
		"waiting without a prediction, past the hold: the capacity goes": {
			in: func() Input {
				in := waiting(run.Add(2 * time.Minute))
				in.CurrentAdmission, in.Pods, in.Previous = time.Time{}, placed(run, run.Add(-9*time.Minute), run.Add(-9*time.Minute)), warmState(ptr.To(run.Add(-9*time.Minute)), 2)
				return in
			}(),
			want: decideWant{delete: names(run), state: warmState(nil, 0)},
		},
		"refused by its group while it waits warmed: the capacity goes, and the next run is not warmed": {
			in: func() Input {
				in := waiting(rewarm.Add(3 * time.Minute))
				in.GroupRefuses = true
				in.Pods, in.Previous = placed(run, rewarm.Add(time.Minute), rewarm.Add(2*time.Minute)), rewarmed(nil, 1)
				return in
			}(),
			want: decideWant{delete: names(run), events: []string{"WarmUpCanceled"}},
		},
		"refused by its group, lead before the next run: not warmed": {
			in:   Input{Now: warmStart, Next: run, Current: run.Add(-time.Hour), CurrentStarts: true, GroupRefuses: true},
			want: decideWant{},
		},
		"refused by its group once admitted: held for the hand-off as any run": {
			in: Input{Now: admitted.Add(time.Second), Next: nextRun, Current: run, CurrentStarts: true, CurrentAdmission: admitted, CurrentJob: jobWithReady(0), GroupRefuses: true,
				Pods: placed(run, rewarm.Add(time.Minute), rewarm.Add(2*time.Minute)), Previous: rewarmed(ptr.To(rewarm.Add(2*time.Minute)), 2)},
			want: decideWant{wake: []time.Time{admitted.Add(2 * time.Minute)}, state: rewarmed(ptr.To(rewarm.Add(2*time.Minute)), 2)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.in.Owner, tc.in.Options = decideOwner(), placeholderOptions()
			d := Decide(tc.in)
			checkDecision(t, d, tc.want)
			if !d.WaitingStart.Equal(tc.waitingStart) {
				t.Errorf("waiting run's warm-up begins at %v, want %v", d.WaitingStart, tc.waitingStart)
			}
		})
	}
}
