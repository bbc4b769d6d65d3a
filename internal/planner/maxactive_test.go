package planner

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestMaxActive: under Allow with maxActive 2, a due run starts (claimed
// first) while fewer than two runs are active or claimed, and waits, with
// Ready's message and a JobAlreadyActive event saying so, when two are; a
// run asked for by hand is refused at the limit. Without maxActive, Allow
// claims nothing.
func TestMaxActive(t *testing.T) {
	run := func(i int) time.Time { return topOfTheHour.Add(time.Duration(i) * 5 * time.Minute) }
	due := run(2).Add(5 * time.Second) // within RequestBound: an older claim still holds
	for name, tc := range map[string]struct {
		maxActive *int32
		running   []int // runs whose Jobs are active
		claimed   []int // runs claimed, their Jobs still to come
		trigger   bool
		wantStart bool
		wantClaim bool
		wantHeld  bool
	}{
		"no limit: Allow starts it, unclaimed": {running: []int{0, 1}, wantStart: true},
		"one of two active: starts, claimed":   {maxActive: ptr.To[int32](2), running: []int{1}, wantStart: true, wantClaim: true},
		"two of two active: waits":             {maxActive: ptr.To[int32](2), running: []int{0, 1}, wantHeld: true},
		"one active, one claimed: waits":       {maxActive: ptr.To[int32](2), running: []int{0}, claimed: []int{1}, wantHeld: true},
		"its own claim does not hold it":       {maxActive: ptr.To[int32](2), running: []int{0}, claimed: []int{2}, wantStart: true},
		"a trigger at the limit is refused":    {maxActive: ptr.To[int32](1), running: []int{2}, trigger: true},
		"a trigger below the limit, claimed":   {maxActive: ptr.To[int32](2), running: []int{2}, trigger: true, wantStart: true, wantClaim: true},
	} {
		t.Run(name, func(t *testing.T) {
			sj := scheduledJob("*/5 * * * *", justBeforeThePriorHour)
			sj.Spec.MaxActive = tc.maxActive
			sj.Status.LastScheduleTime = &metav1.Time{Time: run(1)}
			var jobs []*batchv1.Job
			for _, i := range tc.running {
				job := childJob(sj, run(i), "uid-"+sj.JobName(run(i)), false)
				jobs = append(jobs, job)
				sj.Status.Active = append(sj.Status.Active, refOf(job))
			}
			for _, i := range tc.claimed {
				sj.Status.Active = append(sj.Status.Active, corev1.ObjectReference{Kind: "Job", Namespace: sj.Namespace, Name: sj.JobName(run(i))})
			}
			if tc.trigger {
				sj.Annotations = map[string]string{v1alpha1.TriggerAnnotation: "now"}
			}
			plan := Decide(Input{ScheduledJob: sj, Jobs: jobs, Now: due})
			started := plan.Create
			if tc.trigger {
				started = plan.Trigger
			}
			if (started != nil) != tc.wantStart || (started != nil && started.Claim != tc.wantClaim) {
				t.Fatalf("started %v (claimed %v), want %v (claimed %v)", started != nil, started != nil && started.Claim, tc.wantStart, tc.wantClaim)
			}
			if held := !plan.Held.IsZero(); held != tc.wantHeld {
				t.Errorf("held %v, want %v", plan.Held, tc.wantHeld)
			}
			out := succeed(plan)
			if tc.wantHeld {
				checkWaits(t, out, len(tc.running)+len(tc.claimed))
			}
			if tc.trigger && !tc.wantStart && !slices.Contains(reasons(out), v1alpha1.ReasonJobAlreadyActive) {
				t.Errorf("events %v: want the refused trigger reported", reasons(out))
			}
		})
	}
}

// checkWaits: Ready says the run waits at the limit, and the event names
// maxActive.
func checkWaits(t *testing.T, out Outcome, active int) {
	t.Helper()
	if c := ready(out.Status); c == nil || !strings.Contains(c.Message, "waits for one of 2 active jobs to finish (maxActive 2)") {
		t.Errorf("Ready %+v", c)
	}
	want := "Not starting job because 2 prior executions are running and maxActive is 2"
	if !slices.ContainsFunc(out.Events, func(e Event) bool { return e.Message == want }) {
		t.Errorf("events %v, want %q", out.Events, want)
	}
	if active != 2 {
		t.Fatalf("the case holds %d runs, the messages checked say 2", active)
	}
}
