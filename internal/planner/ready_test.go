package planner

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestReadyFromResults: the Ready condition and nextScheduleTime come from
// one decision and the actions' results, whatever became of the run.
func TestReadyFromResults(t *testing.T) {
	tenOne := topOfTheHour.Add(time.Minute)
	tests := map[string]struct {
		result     func(Plan) []Result
		ready      metav1.ConditionStatus
		reason     string
		message    string
		next       *time.Time
		conflicted int
	}{
		"created": {result: func(p Plan) []Result { return []Result{Created(p.Create, p.Create.Job)} },
			ready: metav1.ConditionTrue, reason: v1alpha1.ReasonScheduled, message: "next run at 2016-05-19T10:01:00Z", next: &tenOne},
		"name taken": {result: func(p Plan) []Result { return []Result{NameTaken(p.Create)} },
			ready: metav1.ConditionFalse, reason: v1alpha1.ReasonJobNameConflict, next: &tenOne, conflicted: 1,
			message: "job mycronjob-24394200 already exists and is not controlled by this ScheduledJob; the run scheduled at 2016-05-19T10:00:00Z did not start"},
		"create failed": {result: func(p Plan) []Result {
			return []Result{CreateFailed(p.Create, errors.New("etcdserver: leader changed"))}
		},
			ready: metav1.ConditionTrue, reason: v1alpha1.ReasonScheduled, next: &topOfTheHour,
			message: "the run at 2016-05-19T10:00:00Z did not start and is retried"},
		"not tried": {result: func(Plan) []Result { return nil },
			ready: metav1.ConditionTrue, reason: v1alpha1.ReasonScheduled, next: &topOfTheHour,
			message: "the run at 2016-05-19T10:00:00Z did not start and is retried"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sj := scheduledJob("* * * * *", justBeforeThePriorHour)
			plan := Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(time.Second)})
			if plan.Create == nil {
				t.Fatal("no run at 10:00")
			}
			out := plan.Finish(tc.result(plan)...)
			got := ready(out.Status)
			if got == nil || got.Status != tc.ready || got.Reason != tc.reason || got.Message != tc.message {
				t.Errorf("Ready %+v, want %s %s %q", got, tc.ready, tc.reason, tc.message)
			}
			var next *time.Time
			if out.Status.NextScheduleTime != nil {
				next = &out.Status.NextScheduleTime.Time
			}
			if diff := cmp.Diff(tc.next, next); diff != "" {
				t.Errorf("nextScheduleTime (-want +got):\n%s", diff)
			}
			if out.Missed[MissConflict] != tc.conflicted {
				t.Errorf("conflicts counted %d, want %d", out.Missed[MissConflict], tc.conflicted)
			}
		})
	}
}

// TestReadyEventOncePerChange: a spec that cannot run reports its event
// when the Ready condition changes or the spec does, not on every
// reconcile.
func TestReadyEventOncePerChange(t *testing.T) {
	sj := scheduledJob("61 * * * *", justBeforeThePriorHour)
	first := Decide(Input{ScheduledJob: sj, Now: topOfTheHour}).Finish()
	if !slices.Contains(reasons(first), v1alpha1.ReasonUnparseableSchedule) {
		t.Fatalf("events %v, want UnparseableSchedule", reasons(first))
	}
	if r := ready(first.Status); r == nil || r.Reason != v1alpha1.ReasonInvalidSchedule || first.Status.NextScheduleTime != nil {
		t.Fatalf("Ready %+v, next %v; want InvalidSchedule and no next run", r, first.Status.NextScheduleTime)
	}
	sj.Status = first.Status
	if again := Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(time.Minute)}).Finish(); len(again.Events) > 0 {
		t.Errorf("events %v on the next reconcile, want none", reasons(again))
	}
}
