//go:build integration

package scheduledjob

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestCatchUpAfterAnHourDown: the controller stops after a run of two
// ScheduledJobs every 5 minutes and is back an hour later (12 runs
// missed). The one with catchUp maxRuns 4 starts the 4 most recent
// missed runs, oldest first, each Job carrying its scheduled time, under
// Forbid one after another as each finishes; it reports one CatchUp event
// with the 8 dropped, and records them in status. The one without starts
// the latest only, as a CronJob does.
func TestCatchUpAfterAnHourDown(t *testing.T) {
	ns := newNamespace(t)
	caughtUp := newScheduledJob(ns, "caught-up", "*/5 * * * *")
	caughtUp.Spec.ConcurrencyPolicy, caughtUp.Spec.CatchUp = v1alpha1.ForbidConcurrent, &v1alpha1.CatchUp{MaxRuns: 4}
	caughtUp.Spec.StartingDeadlineSeconds = ptr.To[int64](3600)
	latestOnly := newScheduledJob(ns, "latest-only", "*/5 * * * *")
	create(t, caughtUp)
	create(t, latestOnly)
	caughtUp, latestOnly = get(t, caughtUp), get(t, latestOnly)
	run := firstRun(caughtUp)
	for run.Minute()%5 != 0 {
		run = run.Add(time.Minute)
	}
	for _, sj := range []*v1alpha1.ScheduledJob{caughtUp, latestOnly} {
		reconcileAt(t, get(t, sj), run.Add(100*time.Millisecond))
		finish(t, jobNamed(t, ns, sj.JobName(run)), true, run.Add(10*time.Second))
		reconcileAt(t, get(t, sj), run.Add(11*time.Second))
	}
	drainEvents()

	// Down from run+11s to run+1h+30s: the runs at +5m … +55m and +1h are
	// missed (12), the 4 most recent owed: +45m, +50m, +55m, +1h.
	back := run.Add(time.Hour + 30*time.Second)
	reconcileAt(t, get(t, latestOnly), back)
	if got, want := jobsOf(t, ns, latestOnly), []string{latestOnly.JobName(run), latestOnly.JobName(run.Add(time.Hour))}; !slices.Equal(got, want) {
		t.Errorf("without catchUp: Jobs %v, want %v", got, want)
	}
	started := catchUpOneAtATime(t, caughtUp, back, 4)
	want := []time.Time{run.Add(45 * time.Minute), run.Add(50 * time.Minute), run.Add(55 * time.Minute), run.Add(time.Hour)}
	if !slices.EqualFunc(started, want, time.Time.Equal) {
		t.Errorf("caught up %v, want %v", started, want)
	}
	settle(t, caughtUp, back.Add(4*time.Minute))
	checkCaughtUp(t, get(t, caughtUp).Status, want, run.Add(40*time.Minute), run.Add(time.Hour+5*time.Minute))
}

// checkCaughtUp: after catching up the runs started (8 dropped),
// status.catchUp says so, lastMissedTime is the latest dropped run, next
// the next run, and one CatchUp event said it all.
func checkCaughtUp(t *testing.T, status v1alpha1.ScheduledJobStatus, started []time.Time, lastMissed, next time.Time) {
	t.Helper()
	first, last := started[0], started[len(started)-1]
	if c := status.CatchUp; c == nil || int(c.Runs) != len(started) || c.Dropped != 8 || !c.From.Time.Equal(first) || !c.Through.Time.Equal(last) {
		t.Errorf("status.catchUp %+v: want %d runs from %s, 8 dropped", c, len(started), first)
	}
	if status.LastMissedTime == nil || !status.LastMissedTime.Time.Equal(lastMissed) {
		t.Errorf("lastMissedTime %v, want %s", status.LastMissedTime, lastMissed)
	}
	if status.NextScheduleTime == nil || !status.NextScheduleTime.Time.Equal(next) {
		t.Errorf("nextScheduleTime %v after the catch-up: want the next run, %s", status.NextScheduleTime, next)
	}
	var catchUps []string
	for _, e := range drainEvents() {
		if strings.Contains(e, " "+v1alpha1.ReasonCatchUp+" ") {
			catchUps = append(catchUps, e)
		}
	}
	if len(catchUps) != 1 || !strings.Contains(catchUps[0], "catching up 4 missed runs") || !strings.Contains(catchUps[0], "8 older missed runs dropped") {
		t.Errorf("CatchUp events %v: want one, 4 started and 8 dropped", catchUps)
	}
}

// catchUpOneAtATime reconciles sj from back on, a minute apart, n times:
// each time it wants one new Job, which then finishes. It returns their
// scheduled times, in the order they were created.
func catchUpOneAtATime(t *testing.T, sj *v1alpha1.ScheduledJob, back time.Time, n int) []time.Time {
	t.Helper()
	var started []time.Time
	seen := map[string]bool{}
	for _, name := range jobsOf(t, sj.Namespace, sj) {
		seen[name] = true
	}
	now := back
	for range n {
		settle(t, sj, now)
		var fresh []string
		for _, name := range jobsOf(t, sj.Namespace, sj) {
			if !seen[name] {
				fresh, seen[name] = append(fresh, name), true
			}
		}
		if len(fresh) != 1 {
			t.Fatalf("at %s, new Jobs %v: want one (Forbid: one catch-up run at a time)", now.Format(time.TimeOnly), fresh)
		}
		job := jobNamed(t, sj.Namespace, fresh[0])
		scheduled, ok := v1alpha1.ScheduledTime(job)
		if !ok || job.Annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"] == "" {
			t.Fatalf("%s carries no scheduled time: %v", job.Name, job.Annotations)
		}
		started = append(started, scheduled)
		now = now.Add(time.Minute)
		finish(t, job, true, now.Add(-time.Second))
	}
	return started
}

// settle reconciles sj at now as its queue would, until a reconcile
// neither creates a Job nor leaves its status to the next one.
func settle(t *testing.T, sj *v1alpha1.ScheduledJob, now time.Time) reconcile.Result {
	t.Helper()
	env.Clock.SetTime(now)
	for range 10 {
		waitForCache(t, sj)
		before := len(jobsOf(t, sj.Namespace, sj))
		result, err := env.ctrl.Reconcile(env.Ctx, requestFor(sj))
		if err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		if !statusDeferred(env.ctrl, sj) && len(jobsOf(t, sj.Namespace, sj)) == before {
			return result
		}
	}
	t.Fatalf("%s: still starting runs after 10 reconciles", sj.Name)
	return reconcile.Result{}
}
