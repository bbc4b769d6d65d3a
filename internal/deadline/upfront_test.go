package deadline

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

func after(d time.Duration) *v1alpha1.Deadline {
	return &v1alpha1.Deadline{After: &metav1.Duration{Duration: d}}
}

// TestUpFront: with runs taking 30 minutes (history) and the latest run
// succeeded in 10, the next run, at 03:00, is judged before it exists:
// DeadlineInfeasible says why it cannot succeed in time, in the best case.
// The deadline is new: the runs before it are not reported.
func TestUpFront(t *testing.T) {
	next := two.Add(time.Hour)
	for name, tc := range map[string]struct {
		deadline *v1alpha1.Deadline
		ahead    Outlook
		reason   string
		says     string
	}{
		"nothing in the way": {deadline: fourHours(), ahead: Outlook{Next: next, Following: next.Add(time.Hour), Limit: 1},
			reason: v1alpha1.ReasonRunSucceeded},
		"no next run": {deadline: after(20 * time.Minute), reason: v1alpha1.ReasonRunSucceeded},
		"runs longer than the deadline": {deadline: after(20 * time.Minute), ahead: Outlook{Next: next},
			reason: v1alpha1.ReasonDeadlineInfeasible, says: "runs take 30m0s (the 90th percentile of the last 4), longer than the deadline allows: the next run, at 2026-11-30T03:00:00Z, must succeed by 2026-11-30T03:20:00Z, 20m0s after its time"},
		"Replace, runs longer than the gap": {deadline: fourHours(), ahead: Outlook{Next: next, Following: next.Add(15 * time.Minute), Replace: true},
			reason: v1alpha1.ReasonDeadlineInfeasible, says: "Replace replaces each run when the next is due, 15m0s later"},
		"Replace, runs shorter than the gap": {deadline: fourHours(), ahead: Outlook{Next: next, Following: next.Add(time.Hour), Replace: true},
			reason: v1alpha1.ReasonRunSucceeded},
		// The run at 02:40 finishes at 03:10 at best; the next then takes
		// until 03:40, past 03:35.
		"Forbid, held past the deadline": {deadline: after(35 * time.Minute), ahead: Outlook{Next: next, Following: next.Add(20 * time.Minute), Limit: 1},
			reason: v1alpha1.ReasonDeadlineInfeasible, says: "start every 20m0s, and Forbid starts a run only once the one before it has finished: the next run, at 2026-11-30T03:00:00Z, waits at best until 2026-11-30T03:10:00Z and would succeed at 2026-11-30T03:40:00Z, 5m0s after its deadline"},
		"Forbid, held but in time": {deadline: after(40 * time.Minute), ahead: Outlook{Next: next, Following: next.Add(20 * time.Minute), Limit: 1},
			reason: v1alpha1.ReasonRunSucceeded},
		"Forbid, never held": {deadline: after(35 * time.Minute), ahead: Outlook{Next: next, Following: next.Add(30 * time.Minute), Limit: 1},
			reason: v1alpha1.ReasonRunSucceeded},
		// Two slots, every 10 minutes: the run at 02:40 frees one at 03:10.
		"maxActive 2, held past the deadline": {deadline: after(35 * time.Minute), ahead: Outlook{Next: next, Following: next.Add(10 * time.Minute), Limit: 2},
			reason: v1alpha1.ReasonDeadlineInfeasible, says: "maxActive 2 starts a run only once one of the 2 before it has finished"},
		"maxActive 2, in time": {deadline: after(40 * time.Minute), ahead: Outlook{Next: next, Following: next.Add(10 * time.Minute), Limit: 2},
			reason: v1alpha1.ReasonRunSucceeded},
		"the group admits it too late": {deadline: fourHours(), ahead: Outlook{Next: next, NextAdmission: next.Add(3*time.Hour + 45*time.Minute), Group: `ConcurrencyGroup "nightly"`},
			reason: v1alpha1.ReasonDeadlineInfeasible, says: `ConcurrencyGroup "nightly" predicts the next run, at 2026-11-30T03:00:00Z, is admitted at 2026-11-30T06:45:00Z, behind the runs queued ahead of it; runs take 30m0s (the 90th percentile of the last 4), so it would succeed at 2026-11-30T07:15:00Z, 15m0s after its deadline`},
		"the group admits it in time": {deadline: fourHours(), ahead: Outlook{Next: next, NextAdmission: next.Add(time.Hour), Group: `ConcurrencyGroup "nightly"`},
			reason: v1alpha1.ReasonRunSucceeded},
	} {
		t.Run(name, func(t *testing.T) {
			jobs := append(history(), job(two, two, two.Add(10*time.Minute)))
			v := Watch(Input{Deadline: tc.deadline, Jobs: jobs, Ahead: tc.ahead, Location: time.UTC, Now: two.Add(30 * time.Minute)})
			if v.Condition.Reason != tc.reason || !strings.Contains(v.Condition.Message, tc.says) {
				t.Errorf("condition %s: %q, want %s saying %q", v.Condition.Reason, v.Condition.Message, tc.reason, tc.says)
			}
			if infeasible := v.Condition.Reason == v1alpha1.ReasonDeadlineInfeasible; infeasible != (v.Condition.Status == metav1.ConditionTrue) {
				t.Errorf("condition status %s with reason %s", v.Condition.Status, v.Condition.Reason)
			}
			if v.AtRisk || len(v.Missed) > 0 {
				t.Errorf("reported at risk %v, missed %v: an infeasible next run is not a run at risk", v.AtRisk, v.Missed)
			}
		})
	}
}

// TestAtRiskBeforeInfeasible: a latest run at risk says so, whatever the
// next run's outlook.
func TestAtRiskBeforeInfeasible(t *testing.T) {
	late := job(two, two.Add(3*time.Hour+50*time.Minute), time.Time{})
	v := Watch(Input{Deadline: fourHours(), Stored: &v1alpha1.DeadlineStatus{}, Jobs: append(history(), late), Location: time.UTC, Now: two.Add(3*time.Hour + 51*time.Minute),
		Ahead: Outlook{Next: two.Add(4 * time.Hour), Following: two.Add(4*time.Hour + 10*time.Minute), Replace: true}})
	if v.Condition.Reason != v1alpha1.ReasonDeadlineAtRisk || !v.AtRisk {
		t.Errorf("condition %s (%q), reported %v; want the latest run at risk", v.Condition.Reason, v.Condition.Message, v.AtRisk)
	}
}

// TestWaitingInGroupStartsAtAdmission: a run waiting in its concurrency
// group is predicted to start when the group predicts it is admitted, not
// now: at 03:00, with its admission predicted at 05:45 and runs taking
// 30 minutes, it is at risk of its 06:00 deadline two hours and more
// before now + 30 minutes would say so.
func TestWaitingInGroupStartsAtAdmission(t *testing.T) {
	waiting := job(two, time.Time{}, time.Time{})
	waiting.Namespace, waiting.Spec.Suspend = "team", ptr.To(true)
	queue := func(at time.Time) *v1alpha1.ConcurrencyGroupStatus {
		return &v1alpha1.ConcurrencyGroupStatus{Queue: []v1alpha1.QueuedRun{{Namespace: "team", Name: waiting.Name, PredictedAdmission: &metav1.Time{Time: at}}}}
	}
	for name, tc := range map[string]struct {
		group     *v1alpha1.ConcurrencyGroupStatus
		reason    string
		predicted time.Time
		says      string
	}{
		"admitted too late": {group: queue(two.Add(3*time.Hour + 45*time.Minute)), reason: v1alpha1.ReasonDeadlineAtRisk, predicted: two.Add(4*time.Hour + 15*time.Minute),
			says: "its Job waits in its concurrency group, which predicts it is admitted at 2026-11-30T05:45:00Z"},
		"admitted in time": {group: queue(two.Add(2 * time.Hour)), reason: v1alpha1.ReasonOnTrack, predicted: two.Add(2*time.Hour + 30*time.Minute)},
		"no prediction":    {group: &v1alpha1.ConcurrencyGroupStatus{}, reason: v1alpha1.ReasonOnTrack, predicted: two.Add(90 * time.Minute)},
		"group not read":   {reason: v1alpha1.ReasonOnTrack, predicted: two.Add(90 * time.Minute)},
	} {
		t.Run(name, func(t *testing.T) {
			v := Watch(Input{Deadline: fourHours(), Stored: &v1alpha1.DeadlineStatus{}, Jobs: append(history(), waiting), Group: tc.group, Location: time.UTC, Now: two.Add(time.Hour)})
			if v.Condition.Reason != tc.reason || !strings.Contains(v.Condition.Message, tc.says) {
				t.Errorf("condition %s: %q, want %s saying %q", v.Condition.Reason, v.Condition.Message, tc.reason, tc.says)
			}
			if p := v.Status.PredictedFinish; p == nil || !p.Time.Equal(tc.predicted) {
				t.Errorf("predicted finish %v, want %v", p, tc.predicted)
			}
		})
	}
}
