package planner

import (
	"testing"
	"time"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestEffectiveSchedules: H fields take their values from the hash of
// namespace/name ("snazzycats/mycronjob") or from a Balanced placement;
// status shows the effective schedule and runs are named by effective
// times.
func TestEffectiveSchedules(t *testing.T) {
	balanced := &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced}
	tests := []struct {
		name          string
		schedule      string
		spread        *v1alpha1.Spread
		placement     *v1alpha1.SpreadStatus
		wantEffective string
		wantNext      string // RFC 3339, after topOfTheHour
		wantReason    string
	}{
		{name: "Kubernetes schedule unchanged", schedule: "30 * * * *", wantEffective: "30 * * * *", wantNext: "2016-05-19T10:30:00Z", wantReason: v1alpha1.ReasonScheduled},
		{name: "H hashed from namespace/name", schedule: "H * * * *", wantEffective: "31 * * * *", wantNext: "2016-05-19T10:31:00Z", wantReason: v1alpha1.ReasonScheduled},
		{name: "H/n and H(a-b)", schedule: "H/15 H(9-17) * * 1-5", wantEffective: "1-59/15 17 * * 1-5", wantNext: "2016-05-19T17:01:00Z", wantReason: v1alpha1.ReasonScheduled},
		{name: "H with L", schedule: "H H L * *", wantEffective: "31 14 L * *", wantNext: "2016-05-31T14:31:00Z", wantReason: v1alpha1.ReasonScheduled},
		{name: "Hash strategy named", schedule: "H * * * *", spread: &v1alpha1.Spread{Strategy: v1alpha1.SpreadHash}, wantEffective: "31 * * * *", wantNext: "2016-05-19T10:31:00Z", wantReason: v1alpha1.ReasonScheduled},
		{name: "Balanced with a placement", schedule: "H * * * *", spread: balanced,
			placement:     &v1alpha1.SpreadStatus{Group: "default", Schedule: "H * * * *", Choices: []int{7}},
			wantEffective: "7 * * * *", wantNext: "2016-05-19T10:07:00Z", wantReason: v1alpha1.ReasonScheduled},
		{name: "Balanced without a placement waits", schedule: "H * * * *", spread: balanced, wantReason: v1alpha1.ReasonSpreadPending},
		{name: "Balanced placement of an earlier schedule waits", schedule: "H/5 * * * *", spread: balanced,
			placement:  &v1alpha1.SpreadStatus{Group: "default", Schedule: "H * * * *", Choices: []int{7}},
			wantReason: v1alpha1.ReasonSpreadPending},
		{name: "Balanced placement in another group waits", schedule: "H * * * *", spread: &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, Group: "batch"},
			placement:  &v1alpha1.SpreadStatus{Group: "default", Schedule: "H * * * *", Choices: []int{7}},
			wantReason: v1alpha1.ReasonSpreadPending},
		{name: "H(a-b) outside its field", schedule: "H H(25-30) * * *", wantReason: v1alpha1.ReasonInvalidSchedule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sj := scheduledJob(tt.schedule, justBeforeThePriorHour)
			sj.Spec.Spread = tt.spread
			plan := Decide(Input{ScheduledJob: sj, Now: topOfTheHour, Placement: tt.placement})
			status := succeed(plan).Status
			if got := ready(status); got == nil || got.Reason != tt.wantReason {
				t.Fatalf("Ready %+v, want reason %s", got, tt.wantReason)
			}
			if status.EffectiveSchedule != tt.wantEffective {
				t.Errorf("effectiveSchedule %q, want %q", status.EffectiveSchedule, tt.wantEffective)
			}
			if tt.wantNext == "" {
				if status.NextScheduleTime != nil {
					t.Errorf("nextScheduleTime %v while waiting", status.NextScheduleTime)
				}
				return
			}
			next := mustTime(tt.wantNext)
			if status.NextScheduleTime == nil || !status.NextScheduleTime.Time.Equal(next) {
				t.Fatalf("nextScheduleTime %v, want %v", status.NextScheduleTime, next)
			}
			// At that time the run starts, named by its effective time.
			sj.Status = status
			plan = Decide(Input{ScheduledJob: sj, Now: next.Add(time.Second), Placement: tt.placement})
			if plan.Create == nil || plan.Create.Job.Name != sj.JobName(next) {
				t.Fatalf("at %v: create %+v, want Job %s", next, plan.Create, sj.JobName(next))
			}
			if got := plan.Create.Job.Annotations[v1alpha1.ScheduledTimestampAnnotation]; got != next.Format(time.RFC3339) {
				t.Errorf("scheduled-time annotation %q", got)
			}
		})
	}
}

// TestPlacementIsRecorded: a Balanced ScheduledJob's status keeps its
// placement; a Hash one has none.
func TestPlacementIsRecorded(t *testing.T) {
	sj := scheduledJob("H * * * *", justBeforeThePriorHour)
	sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced}
	placement := &v1alpha1.SpreadStatus{Group: "default", Schedule: "H * * * *", Choices: []int{7}, Epoch: 2}
	status := succeed(Decide(Input{ScheduledJob: sj, Now: topOfTheHour, Placement: placement})).Status
	if status.Spread == nil || status.Spread.Epoch != 2 || status.Spread.Choices[0] != 7 {
		t.Errorf("status.spread %+v", status.Spread)
	}
	sj.Spec.Spread = nil
	sj.Status.Spread = placement
	if status := succeed(Decide(Input{ScheduledJob: sj, Now: topOfTheHour})).Status; status.Spread != nil {
		t.Errorf("status.spread %+v kept under Hash", status.Spread)
	}
}
