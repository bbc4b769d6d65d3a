//go:build e2e

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

// catchUpNamespace holds TestCatchUpAfterDowntime's ScheduledJobs.
const catchUpNamespace = "catch-up"

// TestCatchUpAfterDowntime stops the controller for 5 minutes, 20 s after
// the first run of three minutely ScheduledJobs (the runs of minutes 1–5
// after it are missed), and starts it again:
//   - latest-only (no catchUp) starts the run of minute 5 only, as a
//     CronJob does;
//   - caught-up (Allow, catchUp maxRuns 3) starts minutes 3, 4 and 5, in
//     that order, reports one CatchUp event (3 started, 2 dropped) and
//     records minute 2 as missed;
//   - one-at-a-time (Forbid, catchUp maxRuns 10, runs of 15 s) starts
//     minutes 1 to 5 one after another, each once the one before has
//     finished, then minute 6;
//   - then `ontime backfill` runs the minutes latest-only missed, across a
//     kill of the controller.
func TestCatchUpAfterDowntime(t *testing.T) {
	t.Parallel()
	binary := framework.SharedOntime(t)
	t.Log("starting the cluster")
	cluster := framework.StartCluster(t, "ontime-catchup", framework.ClusterOptions{Nodes: 2})
	cluster.Kubectl(t, "apply", "--server-side", "-k", "config/dev")
	c := framework.NewClient(t, cluster.Kubeconfig)
	ctx := context.Background()
	waitForCRD(t, c)
	// Two replicas, as the chart runs them: the Lease they elect their
	// leader with is held by a dead one when both come back.
	controller := framework.StartController(t, framework.ControllerOptions{Name: "only", Binary: binary, Kubeconfig: cluster.Kubeconfig,
		Work: cluster.Work, Webhook: true, LeaderElect: true})
	second := framework.StartController(t, framework.ControllerOptions{Name: "second", Binary: binary, Kubeconfig: cluster.Kubeconfig,
		Work: cluster.Work, LeaderElect: true})
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: catchUpNamespace}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 2*time.Second)))
	created := time.Now()
	for _, sj := range []*v1alpha1.ScheduledJob{
		catchingUp("latest-only", v1alpha1.AllowConcurrent, 0, 0),
		catchingUp("caught-up", v1alpha1.AllowConcurrent, 3, 0),
		catchingUp("one-at-a-time", v1alpha1.ForbidConcurrent, 10, 15),
	} {
		if err := c.Create(ctx, sj); err != nil {
			t.Fatal(err)
		}
	}
	first := created.Truncate(time.Minute).Add(time.Minute)
	minute := func(i int) time.Time { return first.Add(time.Duration(i) * time.Minute) }

	time.Sleep(time.Until(first.Add(20 * time.Second)))
	t.Log("stopping both replicas for 5 minutes")
	coldStart := downUntil(t, c, minute(5).Add(20*time.Second), controller, second)
	controller.WaitReady(t, 2*time.Minute)
	framework.Eventually(t, time.Until(minute(8)), "one-at-a-time to catch up minutes 1 to 6", func() bool {
		return len(catchUpRuns(t, c, "one-at-a-time")) >= 7
	})
	time.Sleep(time.Until(minute(6).Add(30 * time.Second))) // minute 6 started everywhere

	t.Run("the first catch-up run without waiting for the dead leader's Lease", func(t *testing.T) {
		// The Lease was last renewed 5 minutes ago: a replica takes it at
		// once instead of waiting its duration (15 s; 15.7 s measured
		// without the release). The goal is 2 s (0.6 s alone, 1.3 s
		// under make test's load, docs/reliability.md); the bound leaves
		// room for a loaded CI machine and still fails on the wait.
		t.Logf("first catch-up run created %s after both replicas started (goal 2s)", coldStart.Round(time.Millisecond))
		if coldStart > coldStartBound {
			t.Errorf("the first catch-up run was created %s after the replicas started, want at most %s", coldStart.Round(time.Millisecond), coldStartBound)
		}
	})
	t.Run("latest only, as a CronJob", func(t *testing.T) {
		checkRunsOf(t, c, "latest-only", []time.Time{minute(0), minute(5), minute(6)})
	})
	t.Run("the 3 most recent, oldest first", func(t *testing.T) {
		runs := checkRunsOf(t, c, "caught-up", []time.Time{minute(0), minute(3), minute(4), minute(5), minute(6)})
		checkCreatedInOrder(t, runs)
		sj := &v1alpha1.ScheduledJob{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: catchUpNamespace, Name: "caught-up"}, sj); err != nil {
			t.Fatal(err)
		}
		if missed := sj.Status.LastMissedTime; missed == nil || !missed.Time.Equal(minute(2)) {
			t.Errorf("lastMissedTime %v, want %s", missed, minute(2))
		}
		if cu := sj.Status.CatchUp; cu == nil || cu.Runs != 3 || cu.Dropped != 2 {
			t.Errorf("status.catchUp %+v, want 3 runs and 2 dropped", cu)
		}
		checkOneCatchUpEvent(t, c, "caught-up", "catching up 3 missed runs", "2 older missed runs dropped")
	})
	t.Run("Forbid: one after another", func(t *testing.T) {
		runs := checkRunsOf(t, c, "one-at-a-time", []time.Time{minute(0), minute(1), minute(2), minute(3), minute(4), minute(5), minute(6)})
		checkCreatedInOrder(t, runs)
		for i := 1; i < len(runs); i++ {
			done := runs[i-1].Status.CompletionTime
			if done == nil || runs[i].CreationTimestamp.Before(done) {
				t.Errorf("%s was created at %s, before %s finished (%v)", runs[i].Name, runs[i].CreationTimestamp.Format(time.TimeOnly), runs[i-1].Name, done)
			}
		}
		checkOneCatchUpEvent(t, c, "one-at-a-time", "catching up 5 missed runs")
	})
	t.Run("a backfill of the minutes missed, across a controller kill", func(t *testing.T) {
		backfillMissedMinutes(t, c, binary, cluster, controller, minute)
	})
}

// coldStartBound is the most the first catch-up run may take after every
// replica started together: well under the Lease's 15 s.
const coldStartBound = 5 * time.Second

// downUntil kills every replica, starts them all again at until, and
// returns how long after that the first catch-up run of one-at-a-time was
// created: minute 1's, minutes old, which only a leader starts (the
// standby starts runs at most planner.StandbyWindow after their time).
func downUntil(t *testing.T, c client.Client, until time.Time, replicas ...*framework.Controller) time.Duration {
	t.Helper()
	for _, r := range replicas {
		r.Kill()
	}
	before := len(catchUpRuns(t, c, "one-at-a-time"))
	time.Sleep(time.Until(until))
	t.Log("starting every replica again")
	restarted := time.Now()
	for _, r := range replicas {
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for time.Since(restarted) < time.Minute {
		if len(catchUpRuns(t, c, "one-at-a-time")) > before {
			return time.Since(restarted)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no catch-up run created within a minute of the replicas' start")
	return 0
}

// backfillMissedMinutes backfills minutes 0 to 5 of latest-only, which ran
// minutes 0 and 5 only: `ontime backfill --dry-run` lists 4 to run and 2 to
// skip; the backfill, two at a time, outlives a kill of the controller,
// runs minutes 1 to 4 once each, and kubectl get shows it complete.
func backfillMissedMinutes(t *testing.T, c client.Client, binary string, cluster *framework.Cluster, controller *framework.Controller, minute func(int) time.Time) {
	args := []string{"backfill", "sj/latest-only", "-n", catchUpNamespace, "--kubeconfig", cluster.Kubeconfig,
		"--from", minute(0).Format(time.RFC3339), "--to", minute(5).Format(time.RFC3339), "--max-active", "2", "--name", "missed"}
	out := framework.Command(t, nil, binary, append(args, "--dry-run")...)
	if !strings.Contains(out, "6 times: 4 to run, 0 to rerun, 2 to skip") {
		t.Fatalf("dry run:\n%s", out)
	}
	out = framework.Command(t, nil, binary, args...)
	if !strings.Contains(out, "backfill.ontime.dev/missed created") {
		t.Fatalf("backfill: %s", out)
	}
	time.Sleep(time.Second)
	t.Log("killing the controller while it backfills")
	controller.Kill()
	time.Sleep(2 * time.Second)
	if err := controller.Start(); err != nil {
		t.Fatal(err)
	}
	controller.WaitReady(t, 2*time.Minute)
	bf := &v1alpha1.Backfill{}
	framework.Eventually(t, 2*time.Minute, "the backfill to complete", func() bool {
		return c.Get(context.Background(), client.ObjectKey{Namespace: catchUpNamespace, Name: "missed"}, bf) == nil &&
			meta.IsStatusConditionTrue(bf.Status.Conditions, v1alpha1.BackfillComplete)
	})
	if s := bf.Status; s.Total != 6 || s.Started != 4 || s.Skipped != 2 || s.Succeeded != 4 || s.Done != "6/6" {
		t.Errorf("status %+v", s)
	}
	checkBackfilledJobs(t, checkRunsOf(t, c, "latest-only", []time.Time{minute(0), minute(1), minute(2), minute(3), minute(4), minute(5)}), minute(0), minute(5))
	table := cluster.Kubectl(t, "get", "backfill", "missed", "-n", catchUpNamespace)
	if !strings.Contains(table, "latest-only") || !strings.Contains(table, "6/6") || !strings.Contains(table, "True") {
		t.Errorf("kubectl get backfill:\n%s", table)
	}
	// Deleting the Backfill deletes its Jobs (its dependents), and only
	// those: the live schedule's stay.
	cluster.Kubectl(t, "delete", "backfill", "missed", "-n", catchUpNamespace)
	framework.Eventually(t, time.Minute, "the backfill's Jobs to be deleted with it", func() bool {
		for _, job := range catchUpRuns(t, c, "latest-only") {
			if job.Labels[v1alpha1.BackfillLabel] != "" {
				return false
			}
		}
		return true
	})
	checkRunsOf(t, c, "latest-only", []time.Time{minute(0), minute(5)})
}

// checkBackfilledJobs: the Jobs of the times strictly between first and
// last are the backfill's (its label, owned by it), the others the live
// schedule's.
func checkBackfilledJobs(t *testing.T, runs []batchv1.Job, first, last time.Time) {
	t.Helper()
	for _, job := range runs {
		scheduled, _ := v1alpha1.ScheduledTime(&job)
		want := scheduled.After(first) && scheduled.Before(last)
		owner := metav1.GetControllerOf(&job)
		if backfilled := job.Labels[v1alpha1.BackfillLabel] == "missed" && owner != nil && owner.Kind == "Backfill"; backfilled != want {
			t.Errorf("%s: backfill label %q, owner %v; want the backfill's: %v", job.Name, job.Labels[v1alpha1.BackfillLabel], owner, want)
		}
	}
}

// catchingUp is a minutely ScheduledJob with catchUp maxRuns (0: none)
// whose pods run podSeconds (0: at once).
func catchingUp(name string, policy v1alpha1.ConcurrencyPolicy, maxRuns int32, podSeconds int) *v1alpha1.ScheduledJob {
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: catchUpNamespace, Name: name}, Spec: v1alpha1.ScheduledJobSpec{
		Schedule: "* * * * *", ConcurrencyPolicy: policy, SuccessfulJobsHistoryLimit: ptr.To[int32](10),
		JobTemplate: pair{podSeconds: podSeconds}.template()}}
	if maxRuns > 0 {
		sj.Spec.CatchUp = &v1alpha1.CatchUp{MaxRuns: maxRuns}
	}
	return sj
}

// catchUpRuns are the scheduled runs' Jobs of a ScheduledJob, by scheduled
// time.
func catchUpRuns(t *testing.T, c client.Client, name string) []batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := c.List(context.Background(), &list, client.InNamespace(catchUpNamespace), client.MatchingLabels{v1alpha1.ScheduledJobLabel: name}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b batchv1.Job) int {
		at, _ := v1alpha1.ScheduledTime(&a)
		bt, _ := v1alpha1.ScheduledTime(&b)
		return at.Compare(bt)
	})
	return list.Items
}

// checkRunsOf: the ScheduledJob's Jobs scheduled up to the last run
// wanted are for exactly the runs wanted, each carrying its scheduled time
// in the annotation of KEP-4026. It returns those Jobs.
func checkRunsOf(t *testing.T, c client.Client, name string, want []time.Time) []batchv1.Job {
	t.Helper()
	var runs []batchv1.Job
	var got []time.Time
	for _, job := range catchUpRuns(t, c, name) {
		if scheduled, _ := v1alpha1.ScheduledTime(&job); scheduled.After(want[len(want)-1]) {
			continue // a run after the ones checked, started meanwhile
		}
		runs = append(runs, job)
		stamp, err := time.Parse(time.RFC3339, job.Annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"])
		if err != nil {
			t.Errorf("%s: scheduled-timestamp annotation: %v", job.Name, err)
		}
		got = append(got, stamp)
	}
	if !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Errorf("%s ran %v\nwant %v", name, got, want)
	}
	return runs
}

// checkCreatedInOrder: Jobs sorted by scheduled time were created in that
// order.
func checkCreatedInOrder(t *testing.T, runs []batchv1.Job) {
	t.Helper()
	for i := 1; i < len(runs); i++ {
		if runs[i].CreationTimestamp.Before(&runs[i-1].CreationTimestamp) {
			t.Errorf("%s was created before %s, an earlier run", runs[i].Name, runs[i-1].Name)
		}
	}
}

// checkOneCatchUpEvent: the ScheduledJob has exactly one CatchUp event, and
// its message says each of the parts.
func checkOneCatchUpEvent(t *testing.T, c client.Client, name string, parts ...string) {
	t.Helper()
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(catchUpNamespace), client.MatchingFields{"involvedObject.name": name}); err != nil {
		t.Fatal(err)
	}
	var messages []string
	for _, e := range events.Items {
		if e.Reason == v1alpha1.ReasonCatchUp {
			for range max(1, e.Count) {
				messages = append(messages, e.Message)
			}
		}
	}
	if len(messages) != 1 {
		t.Fatalf("%s: CatchUp events %q, want one", name, messages)
	}
	for _, part := range parts {
		if !strings.Contains(messages[0], part) {
			t.Errorf("%s: CatchUp event %q does not say %q", name, messages[0], part)
		}
	}
}
