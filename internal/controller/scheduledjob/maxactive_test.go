//go:build integration

package scheduledjob

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestMaxActiveHoldsARunUntilOneFinishes: under Allow with maxActive 2 and
// runs that outlast the minute, the third run waits while two run (Ready
// says so), and starts late, within its deadline, when one finishes.
func TestMaxActiveHoldsARunUntilOneFinishes(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "capped", "* * * * *")
	sj.Spec.ConcurrencyPolicy, sj.Spec.MaxActive = v1alpha1.AllowConcurrent, ptr.To[int32](2)
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](50)
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	reconcileAt(t, get(t, sj), run.Add(100*time.Millisecond))
	reconcileAt(t, get(t, sj), run.Add(time.Minute+100*time.Millisecond))
	if n := len(jobs(t, ns)); n != 2 {
		t.Fatalf("%d Jobs after two runs under maxActive 2, want 2", n)
	}

	third := run.Add(2 * time.Minute)
	reconcileAt(t, get(t, sj), third.Add(100*time.Millisecond))
	if n := len(jobs(t, ns)); n != 2 {
		t.Fatalf("%d Jobs while two run, want the third run held", n)
	}
	held := get(t, sj)
	if c := readyOf(held); c == nil || !strings.Contains(c.Message, "waits for one of 2 active jobs to finish (maxActive 2)") {
		t.Errorf("Ready %+v", c)
	}
	if next := held.Status.NextScheduleTime; next == nil || !next.Time.Equal(third) {
		t.Errorf("nextScheduleTime %v, want the held run %s", next, third)
	}

	first := jobNamed(t, ns, sj.JobName(run))
	finish(t, first, true, third.Add(20*time.Second))
	reconcileAt(t, get(t, sj), third.Add(21*time.Second))
	if jobNamed(t, ns, sj.JobName(third)) == nil || len(jobs(t, ns)) != 3 {
		t.Errorf("%d Jobs: the held run did not start when a run finished", len(jobs(t, ns)))
	}
}
