//go:build e2e

// Package e2e runs ontime against a real local cluster (kwok, binary
// runtime) as a user would: the built binary, kubectl-style manifests and
// the API. It imports only the API package and the shared test framework
// (test/framework), which starts the cluster and the controllers.
// Each test runs on a cluster of its own and mostly waits on the clock, so
// they run side by side (t.Parallel; -parallel 4, as the machine may have
// fewer cores than tests).
//
//	go test -tags e2e -parallel 4 -v ./test/e2e     (make test runs it)
package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

const namespace = "e2e"

// waitForCRD waits until the cluster serves the ScheduledJob API (the CRD
// that config/dev applied is established).
func waitForCRD(t *testing.T, c client.Client) {
	t.Helper()
	framework.Eventually(t, time.Minute, "the CRD to be established", func() bool {
		return c.List(context.Background(), &v1alpha1.ScheduledJobList{}) == nil
	})
}

// pair is one schedule run both as a ScheduledJob and as a CronJob.
type pair struct {
	name     string
	schedule string
	policy   v1alpha1.ConcurrencyPolicy
	// podSeconds makes kwok keep each pod running this long.
	podSeconds int
	history    int32
}

func (p pair) template() batchv1.JobTemplateSpec {
	var annotations map[string]string
	if p.podSeconds > 0 {
		d := strconv.Itoa(p.podSeconds) + "s"
		annotations = map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": d, "pod-complete.stage.kwok.x-k8s.io/jitter-delay": d}
	}
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}}}
}

func TestScheduledJobsAgainstCronJobs(t *testing.T) {
	t.Parallel()
	binary := framework.SharedOntime(t)
	t.Log("starting the cluster")
	cluster := framework.StartCluster(t, "ontime-e2e", framework.ClusterOptions{Nodes: 4})
	kubeconfig := cluster.Kubeconfig
	cluster.Kubectl(t, "apply", "--server-side", "-k", "config/dev")
	// config/default must apply cleanly to a real API server (dry run: kwok
	// cannot run the controller's container).
	cluster.Kubectl(t, "apply", "--server-side", "--dry-run=server", "-k", "config/default")
	t.Run("install manifests", func(t *testing.T) { checkInstallManifests(t, cluster) })
	t.Run("flow control", func(t *testing.T) { checkFlowControl(t, cluster) })
	c := framework.NewClient(t, kubeconfig)
	ctx := context.Background()
	waitForCRD(t, c)

	// Two replicas with leader election. Only the first serves the webhook:
	// config/dev's webhook configuration calls one address.
	replica := func(name string, webhook bool) *framework.Controller {
		return framework.StartController(t, framework.ControllerOptions{Name: name, Binary: binary, Kubeconfig: kubeconfig,
			Work: cluster.Work, LeaderElect: true, Webhook: webhook})
	}
	first, second := replica("first", true), replica("second", false)

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	pairs := []pair{
		{name: "minutely", schedule: "* * * * *", history: 2},
		{name: "every-two", schedule: "*/2 * * * *", history: 3},
		{name: "forbid", schedule: "* * * * *", policy: v1alpha1.ForbidConcurrent, podSeconds: 75, history: 3},
		{name: "replace", schedule: "* * * * *", policy: v1alpha1.ReplaceConcurrent, podSeconds: 75, history: 3},
	}
	// Start just after a minute boundary, so both kinds are created well
	// before their first run.
	time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 2*time.Second)))
	created := time.Now()
	createPairs(t, c, pairs)
	createListed(t, c)
	createFlaky(t, c)
	createCapped(t, c)
	createLate(t, c)
	spreadJobs := createSpreadJobs(t, c)
	firstRun := created.Truncate(time.Minute).Add(time.Minute)
	t.Logf("created the pairs at %s; first run at %s", created.Format(time.TimeOnly), firstRun.Format(time.TimeOnly))

	// 40 s after the first run, kill the leader without letting it release
	// its lease: the other replica must take over and miss nothing.
	time.Sleep(time.Until(firstRun.Add(40 * time.Second)))
	leader, follower := currentLeader(t, c, first, second)
	if leader == nil {
		t.Fatal("no replica leads")
	}
	t.Logf("killing the leader, %s", leader.Name)
	leader.Kill()
	framework.Eventually(t, 45*time.Second, "the other replica to take over", func() bool {
		l, _ := currentLeader(t, c, first, second)
		return l == follower
	})

	// Run until three more runs have passed, then compare. Each check is a
	// subtest, so that one failing does not hide the others.
	end := firstRun.Add(3*time.Minute + 25*time.Second)
	time.Sleep(time.Until(end))
	runs := createdRuns(t, c)
	t.Run("runs as CronJob's", func(t *testing.T) { compareRuns(t, pairs, runs, created, end) })
	t.Run("status", func(t *testing.T) { checkStatus(t, c, pairs, runs) })
	t.Run("several schedules", func(t *testing.T) { compareListed(t, runs, created, end) })
	t.Run("spreading", func(t *testing.T) { checkSpread(t, c, spreadJobs, runs, created, end) })
	t.Run("maxActive", func(t *testing.T) { checkCapped(t, c, firstRun) })
	t.Run("deadline", func(t *testing.T) { checkLate(t, c, firstRun) })
	t.Run("rebalance CLI", func(t *testing.T) { checkRebalanceCLI(t, binary, kubeconfig) })
	t.Run("the new leader measures skew", func(t *testing.T) {
		if n, err := follower.Metric("ontime_job_creation_skew_seconds_count"); err != nil || n < 1 {
			t.Errorf("the new leader observed %v creation skews (%v)", n, err)
		}
	})
	// The killed replica comes back as a follower (and, if it was the one,
	// serves the webhook again, which the trigger's update goes through).
	var restarted *framework.Controller
	t.Run("the restarted replica follows", func(t *testing.T) {
		restarted = replica(leader.Name+"-restarted", leader == first)
		if l, _ := currentLeader(t, c, follower, restarted); l != follower {
			t.Errorf("the restarted replica took the lead from %s", follower.Name)
		}
	})
	// After the restart: config/dev's webhook, which the suspension's spec
	// write goes through, is served by the first replica alone.
	t.Run("suspended after failures", func(t *testing.T) { checkSuspendedAfterFailures(t, c, firstRun) })
	t.Run("ontime trigger", func(t *testing.T) {
		out := framework.Command(t, nil, binary, "trigger", "sj/minutely", "-n", namespace, "--kubeconfig", kubeconfig, "--wait")
		if !strings.Contains(out, "started") {
			t.Errorf("ontime trigger: %s", out)
		}
	})
	t.Run("edit role", func(t *testing.T) { checkEditRole(t, cluster, binary) })
	// Both live replicas: the leader reports runs, the one at localhost:9443
	// the webhook.
	t.Run("monitoring", func(t *testing.T) { checkMonitoring(t, follower, restarted) })
	t.Run("resumed after failures", func(t *testing.T) { checkResumedAfterFailures(t, c) })
}

// createPairs creates each pair's ScheduledJob and CronJob.
func createPairs(t *testing.T, c client.Client, pairs []pair) {
	for _, p := range pairs {
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: p.name}, Spec: v1alpha1.ScheduledJobSpec{
			Schedule: p.schedule, ConcurrencyPolicy: p.policy, SuccessfulJobsHistoryLimit: ptr.To(p.history), JobTemplate: p.template()}}
		if p.policy == "" {
			sj.Spec.ConcurrencyPolicy = v1alpha1.AllowConcurrent
		}
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: p.name + "-cj"}, Spec: batchv1.CronJobSpec{
			Schedule: p.schedule, ConcurrencyPolicy: batchv1.ConcurrencyPolicy(sj.Spec.ConcurrencyPolicy),
			SuccessfulJobsHistoryLimit: ptr.To(p.history), JobTemplate: p.template()}}
		for _, obj := range []client.Object{sj, cj} {
			if err := c.Create(context.Background(), obj); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// listed is a ScheduledJob with two schedules, those of the CronJobs
// every-two-cj (a pair's) and every-three-cj (created with it; in the
// four minutes compared it may run once, too few for a pair of its own).
// The union has at least two runs in any four minutes.
const listed = "two-schedules"

func createListed(t *testing.T, c client.Client) {
	t.Helper()
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: listed}, Spec: v1alpha1.ScheduledJobSpec{
		Schedules: []string{"*/2 * * * *", "*/3 * * * *"}, JobTemplate: pair{}.template()}}
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "every-three-cj"}, Spec: batchv1.CronJobSpec{
		Schedule: "*/3 * * * *", JobTemplate: pair{}.template()}}
	for _, obj := range []client.Object{sj, cj} {
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
}

// compareListed: the ScheduledJob with two schedules ran when either
// CronJob did, once at a time both did.
func compareListed(t *testing.T, runs map[string][]time.Time, created, end time.Time) {
	ours := within(runs["ScheduledJob/"+listed], created, end)
	both := append(slices.Clone(runs["CronJob/every-two-cj"]), runs["CronJob/every-three-cj"]...)
	slices.SortFunc(both, time.Time.Compare)
	want := within(slices.CompactFunc(both, time.Time.Equal), created, end)
	if len(want) < 2 || !slices.Equal(ours, want) {
		t.Errorf("%s ran at %v, want the CronJobs' union %v (at least two runs)", listed, ours, want)
	} else {
		t.Logf("%s ran at %v, as the two CronJobs together", listed, ours)
	}
}

// compareRuns checks that each ScheduledJob ran when its CronJob did.
func compareRuns(t *testing.T, pairs []pair, runs map[string][]time.Time, created, end time.Time) {
	for _, p := range pairs {
		// Forbid starts waiting runs late, when the previous Job ends; the
		// two controllers' pods end seconds apart, so leave the last minute
		// out of that comparison.
		until := end
		if p.policy == v1alpha1.ForbidConcurrent {
			until = end.Add(-time.Minute)
		}
		ours, theirs := within(runs["ScheduledJob/"+p.name], created, until), within(runs["CronJob/"+p.name+"-cj"], created, until)
		if len(theirs) < 2 {
			t.Errorf("%s: the CronJob made only %d runs (%v); the comparison would prove nothing", p.name, len(theirs), theirs)
		}
		if !slices.Equal(ours, theirs) {
			t.Errorf("%s (%s, %s): ScheduledJob ran at %v, CronJob at %v", p.name, p.schedule, p.policy, ours, theirs)
		} else {
			t.Logf("%s: both ran at %v", p.name, ours)
		}
	}
}

// currentLeader tells which replica leads, by its leader-election metric
// (every replica starts workers now: the standby's run on both).
func currentLeader(t *testing.T, c client.Client, a, b *framework.Controller) (leader, other *framework.Controller) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ontime-system", Name: "ontime-controller.ontime.dev"}, lease); err != nil || lease.Spec.HolderIdentity == nil {
		return nil, nil
	}
	leads := func(p *framework.Controller) bool { return p.Running() && p.IsLeader() }
	switch {
	case leads(a) && !leads(b):
		return a, b
	case leads(b) && !leads(a):
		return b, a
	}
	return nil, nil
}

// createdRuns reads the SuccessfulCreate events of both controllers and
// returns each owner's runs as scheduled times: Job names end in the
// scheduled time in minutes since the epoch, in both.
func createdRuns(t *testing.T, c client.Client) map[string][]time.Time {
	t.Helper()
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	runs := map[string][]time.Time{}
	for _, e := range events.Items {
		if e.Reason != "SuccessfulCreate" || (e.InvolvedObject.Kind != "ScheduledJob" && e.InvolvedObject.Kind != "CronJob") {
			continue
		}
		name := strings.TrimPrefix(e.Message, "Created job ")
		minutes, err := strconv.ParseInt(name[strings.LastIndex(name, "-")+1:], 10, 64)
		if err != nil {
			continue // a triggered run
		}
		key := e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name
		runs[key] = append(runs[key], time.Unix(minutes*60, 0).UTC())
	}
	for key := range runs {
		slices.SortFunc(runs[key], time.Time.Compare)
		runs[key] = slices.Compact(runs[key])
	}
	return runs
}

func within(times []time.Time, from, to time.Time) []string {
	var out []string
	for _, t := range times {
		if t.After(from) && t.Before(to) {
			out = append(out, t.Format(time.TimeOnly))
		}
	}
	return out
}

// checkStatus compares each ScheduledJob's status with its Jobs.
func checkStatus(t *testing.T, c client.Client, pairs []pair, runs map[string][]time.Time) {
	t.Helper()
	ctx := context.Background()
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		sj := &v1alpha1.ScheduledJob{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: p.name}, sj); err != nil {
			t.Fatal(err)
		}
		active, succeeded := countJobs(sj, jobs.Items)
		if succeeded > int(p.history) {
			t.Errorf("%s: %d finished Jobs kept, history limit %d", p.name, succeeded, p.history)
		}
		checkScheduledJobStatus(t, p, sj, active, runs["ScheduledJob/"+p.name])
	}
}

// createSpreadJobs creates three ScheduledJobs every three minutes, in a
// Balanced group: three minutes of their own, whatever their hashes say.
func createSpreadJobs(t *testing.T, c client.Client) []string {
	t.Helper()
	names := []string{"spread-a", "spread-b", "spread-c"}
	for _, name := range names {
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: v1alpha1.ScheduledJobSpec{
			Schedule: "H/3 * * * *", Spread: &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, Group: "e2e"},
			JobTemplate: pair{name: name}.template()}}
		if err := c.Create(context.Background(), sj); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// checkRebalanceCLI: ontime spread rebalance reads the group.
func checkRebalanceCLI(t *testing.T, binary, kubeconfig string) {
	t.Helper()
	out := framework.Command(t, nil, binary, "spread", "rebalance", "e2e", "-n", "ontime-system", "--kubeconfig", kubeconfig, "--dry-run")
	if !strings.Contains(out, "would rebalance 3 ScheduledJobs") {
		t.Errorf("ontime spread rebalance --dry-run: %s", out)
	}
}

// checkSpread: the Balanced ScheduledJobs ran at their effective
// schedules, each in a minute of its own (minute mod 3), and the group's
// ConfigMap holds their placements.
func checkSpread(t *testing.T, c client.Client, names []string, runs map[string][]time.Time, from, to time.Time) {
	t.Helper()
	ctx := context.Background()
	owner := map[int]string{}
	for _, name := range names {
		sj := &v1alpha1.ScheduledJob{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, sj); err != nil {
			t.Fatal(err)
		}
		placement := sj.Status.Spread
		if placement == nil || len(placement.Choices) != 1 {
			t.Errorf("%s: status.spread %+v", name, placement)
			continue
		}
		offset := placement.Choices[0]
		if want := fmt.Sprintf("%d-59/3 * * * *", offset); sj.Status.EffectiveSchedule != want {
			t.Errorf("%s: effectiveSchedule %q, want %q", name, sj.Status.EffectiveSchedule, want)
		}
		if other, taken := owner[offset]; taken {
			t.Errorf("%s and %s share the minutes %d-59/3", other, name, offset)
		}
		owner[offset] = name
		ran := within(runs["ScheduledJob/"+name], from, to)
		if len(ran) == 0 {
			t.Errorf("%s did not run between %s and %s", name, from.Format(time.TimeOnly), to.Format(time.TimeOnly))
		}
		for _, at := range runs["ScheduledJob/"+name] {
			if at.Minute()%3 != offset {
				t.Errorf("%s ran at %s, not at its minutes %d-59/3", name, at.Format(time.TimeOnly), offset)
			}
		}
		t.Logf("%s: %s, ran at %v", name, sj.Status.EffectiveSchedule, ran)
	}
	ledger := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ontime-system", Name: "ontime-spread-e2e"}, ledger); err != nil || len(ledger.Data) != len(names) {
		t.Errorf("the group's ConfigMap: %v, %d entries, want %d", err, len(ledger.Data), len(names))
	}
}

// countJobs counts a ScheduledJob's unfinished and finished Jobs.
func countJobs(sj *v1alpha1.ScheduledJob, jobs []batchv1.Job) (active, finishedJobs int) {
	for i := range jobs {
		j := &jobs[i]
		if !metav1.IsControlledBy(j, sj) || j.DeletionTimestamp != nil {
			continue
		}
		if finished(j) {
			finishedJobs++
		} else {
			active++
		}
	}
	return active, finishedJobs
}

// checkScheduledJobStatus compares one ScheduledJob's status with the
// number of its unfinished Jobs and the runs it made.
func checkScheduledJobStatus(t *testing.T, p pair, sj *v1alpha1.ScheduledJob, active int, ran []time.Time) {
	t.Helper()
	status := sj.Status
	ready := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady)
	if int(status.ActiveCount) != len(status.Active) || len(status.Active) != active {
		t.Errorf("%s: status lists %d active (activeCount %d), %d Jobs are unfinished", p.name, len(status.Active), status.ActiveCount, active)
	}
	if status.LastScheduleTime == nil || !status.LastScheduleTime.Time.Equal(ran[len(ran)-1]) {
		t.Errorf("%s: lastScheduleTime %v, last run %v", p.name, status.LastScheduleTime, ran[len(ran)-1])
	}
	if ready == nil || ready.Status != metav1.ConditionTrue || status.ObservedGeneration != sj.Generation {
		t.Errorf("%s: Ready %+v, observedGeneration %d", p.name, ready, status.ObservedGeneration)
	}
	if p.policy != v1alpha1.ForbidConcurrent && (status.NextScheduleTime == nil || !status.NextScheduleTime.After(time.Now())) {
		t.Errorf("%s: nextScheduleTime %v is not ahead", p.name, status.NextScheduleTime)
	}
	if p.policy == "" && status.LastSuccessfulTime == nil {
		t.Errorf("%s: lastSuccessfulTime unset after successful runs", p.name)
	}
}

func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
