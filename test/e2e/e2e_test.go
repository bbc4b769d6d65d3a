//go:build e2e

// Package e2e runs ontime against a real local cluster (kwok, binary
// runtime) as a user would: the built binary, kubectl-style manifests and
// the API. It imports only the API package.
//
//	go test -tags e2e -v ./test/e2e     (make test runs it)
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

const namespace = "e2e"

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// command runs a command from the repository root and fails the test on
// error.
func command(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// controllerProcess is one `ontime controller` replica.
type controllerProcess struct {
	name        string
	cmd         *exec.Cmd
	log         string
	metricsPort int
	probePort   int
}

func startController(t *testing.T, binary, kubeconfig, name string, webhook bool) *controllerProcess {
	t.Helper()
	p := &controllerProcess{name: name, metricsPort: freePort(t), probePort: freePort(t), log: filepath.Join(t.TempDir(), name+".log")}
	args := []string{"controller", "--kubeconfig", kubeconfig,
		"--leader-elect", "--leader-election-namespace", "ontime-system",
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", p.metricsPort),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", p.probePort),
		"--webhook=" + strconv.FormatBool(webhook)}
	if webhook {
		// config/dev points the API server at https://localhost:9443.
		args = append(args, "--webhook-dns-name", "localhost", "--webhook-namespace", "ontime-system",
			"--webhook-write-cert-files", "--webhook-cert-dir", t.TempDir())
	}
	log, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Wait()
		if t.Failed() {
			tail(t, p.log)
		}
	})
	return p
}

func (p *controllerProcess) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", p.probePort)); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	tail(t, p.log)
	t.Fatalf("controller %s did not become ready", p.name)
}

func (p *controllerProcess) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.metricsPort))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		if fields := strings.Fields(scanner.Text()); len(fields) == 2 && fields[0] == name {
			v, _ := strconv.ParseFloat(fields[1], 64)
			return v
		}
	}
	return 0
}

func tail(t *testing.T, path string) {
	data, _ := os.ReadFile(path)
	lines := strings.Split(string(data), "\n")
	t.Logf("last lines of %s:\n%s", path, strings.Join(lines[max(0, len(lines)-30):], "\n"))
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
	root := repoRoot()
	binary := filepath.Join(t.TempDir(), "ontime")
	command(t, nil, "go", "build", "-o", binary, "./cmd/ontime")
	kubeBin := strings.TrimSpace(command(t, nil, "hack/kube-binaries.sh", "--print"))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	t.Log("starting the cluster")
	command(t, nil, "hack/cluster.sh", "up", "ontime-e2e", kubeconfig, "4")
	t.Cleanup(func() { command(t, nil, "hack/cluster.sh", "down", "ontime-e2e") })
	kubectl := filepath.Join(kubeBin, "kubectl")
	command(t, nil, kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "-k", filepath.Join(root, "config/dev"))
	// config/default must apply cleanly to a real API server (dry run: kwok
	// cannot run the controller's container).
	command(t, nil, kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "--dry-run=server", "-k", filepath.Join(root, "config/default"))
	c := newClient(t, kubeconfig)
	ctx := context.Background()
	waitFor(t, time.Minute, "the CRD to be established", func() bool {
		return c.List(ctx, &v1alpha1.ScheduledJobList{}) == nil
	})

	// Two replicas with leader election. Only the first serves the webhook:
	// config/dev calls it at localhost:9443.
	first := startController(t, binary, kubeconfig, "first", true)
	first.waitReady(t)
	second := startController(t, binary, kubeconfig, "second", false)
	second.waitReady(t)

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
			if err := c.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	spreadJobs := createSpreadJobs(t, c)
	firstRun := created.Truncate(time.Minute).Add(time.Minute)
	t.Logf("created the pairs at %s; first run at %s", created.Format(time.TimeOnly), firstRun.Format(time.TimeOnly))

	// 40 s after the first run, kill the leader without letting it release
	// its lease: the other replica must take over and miss nothing.
	time.Sleep(time.Until(firstRun.Add(40 * time.Second)))
	leader, follower := currentLeader(t, c, first, second)
	t.Logf("killing the leader, %s", leader.name)
	_ = leader.cmd.Process.Kill()
	_ = leader.cmd.Wait() // reap it, so its ProcessState says it is gone
	waitFor(t, 45*time.Second, "the other replica to take over", func() bool {
		l, _ := currentLeader(t, c, first, second)
		return l == follower
	})

	// Run until three more runs have passed, then compare.
	end := firstRun.Add(3*time.Minute + 25*time.Second)
	time.Sleep(time.Until(end))
	runs := createdRuns(t, c)
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
	checkStatus(t, c, pairs, runs)
	checkSpread(t, c, spreadJobs, runs, created, end)
	checkRebalanceCLI(t, binary, kubeconfig)
	if n := follower.metric(t, "ontime_job_creation_skew_seconds_count"); n < 1 {
		t.Errorf("the new leader observed %v creation skews", n)
	}

	// The killed replica comes back as a follower (and, if it was the one,
	// serves the webhook again, which the trigger's update goes through).
	restarted := startController(t, binary, kubeconfig, leader.name+"-restarted", leader == first)
	restarted.waitReady(t)
	if l, _ := currentLeader(t, c, follower, restarted); l != follower {
		t.Errorf("the restarted replica took the lead from %s", follower.name)
	}

	// Run now, through the CLI.
	out := command(t, nil, binary, "trigger", "sj/minutely", "-n", namespace, "--kubeconfig", kubeconfig, "--wait")
	if !strings.Contains(out, "started") {
		t.Errorf("ontime trigger: %s", out)
	}
}

func newClient(t *testing.T, kubeconfig string) client.Client {
	t.Helper()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	scheme := k8sruntime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func waitFor(t *testing.T, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// currentLeader tells which replica leads: controllers start their workers
// only in the replica that holds the leader-election Lease.
func currentLeader(t *testing.T, c client.Client, a, b *controllerProcess) (leader, other *controllerProcess) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ontime-system", Name: "ontime-controller.ontime.dev"}, lease); err != nil || lease.Spec.HolderIdentity == nil {
		return nil, nil
	}
	leads := func(p *controllerProcess) bool {
		data, _ := os.ReadFile(p.log)
		return strings.Contains(string(data), `"Starting workers"`) && p.cmd.ProcessState == nil
	}
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
	out := command(t, nil, binary, "spread", "rebalance", "e2e", "-n", "ontime-system", "--kubeconfig", kubeconfig, "--dry-run")
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
