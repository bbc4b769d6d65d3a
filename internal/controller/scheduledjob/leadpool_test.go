package scheduledjob

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestLeadMeasured: the peers of a ScheduledJob with lead Auto are
// reconciled when it measures its pool's provisioning time, and only then.
func TestLeadMeasured(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	warming := func(lead v1alpha1.Lead) *v1alpha1.ScheduledJob {
		sj := newWarmUpJob("team", "nightly")
		sj.Spec.WarmUp.Lead = lead
		sj.Status.WarmUp = &v1alpha1.WarmUpStatus{ScheduledTime: at, StartTime: at}
		return sj
	}
	tests := map[string]struct {
		lead   v1alpha1.Lead
		change func(*v1alpha1.ScheduledJob)
		want   bool
	}{
		"capacity ready":        {lead: v1alpha1.Lead{Auto: true}, change: func(sj *v1alpha1.ScheduledJob) { sj.Status.WarmUp.ReadyTime = &at }, want: true},
		"late":                  {lead: v1alpha1.Lead{Auto: true}, change: func(sj *v1alpha1.ScheduledJob) { sj.Status.WarmUp.Late = true }, want: true},
		"the run's start":       {lead: v1alpha1.Lead{Auto: true}, change: func(sj *v1alpha1.ScheduledJob) { sj.Status.LastRunStart = &v1alpha1.RunStart{ScheduledTime: at} }, want: true},
		"pods placed, not all":  {lead: v1alpha1.Lead{Auto: true}, change: func(sj *v1alpha1.ScheduledJob) { sj.Status.WarmUp.ScheduledPods = 1 }},
		"a fixed lead's warmup": {lead: v1alpha1.FixedLead(time.Minute), change: func(sj *v1alpha1.ScheduledJob) { sj.Status.WarmUp.ReadyTime = &at }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old := warming(tc.lead)
			updated := old.DeepCopy()
			tc.change(updated)
			if got := leadMeasured.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: updated}); got != tc.want {
				t.Errorf("passed %v, want %v", got, tc.want)
			}
		})
	}
}
