//go:build realnode

package realnode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

// earlyStarts is how many EarlyStart ScheduledJobs whose containers wait in
// `ontime-wait` share each minute: lateness samples for the p99. One more,
// ontime-early-held, runs the image's entrypoint (no command), so its pod
// is held in the init container instead.
const earlyStarts = 5

// earlyStartP99Bound is issue #19's bound on EarlyStart's lateness, from
// the scheduled time to the first line the run's program writes, for
// containers that wait in `ontime-wait` and exec their command at the
// minute: earlyStarts of them at once, beside three more runs, on 2 cores.
const earlyStartP99Bound = 2 * time.Second

// installBound is how long an EarlyStart pod's ontime-wait init container
// may run to install ontime-wait (10m of CPU), by the pod's status (whole
// seconds): with the 57 MB ontime binary it took 16 to 28 s of the lead on
// this node; with ontime-wait 1.8 to 3.2 s by the kubelet's clock and up
// to 4 s by the status beside make test's other work (2026-11-30).
const installBound = 10 * time.Second

// heldStartBound is what this test holds an EarlyStart pod held in its
// init container to: its container starts after the kubelet notices the
// wait's exit (a relist every second) and creates it, measured here at
// 2.7 to 3.7 s with six pods released at once (docs/performance.md, "On a
// real node").
const heldStartBound = 6 * time.Second

// lead is the warm-ups' lead: long enough for an EarlyStart pod's sandbox,
// its init container and its container to start before the minute on a
// loaded machine. With 30 s, a cold CI run (the e2e tests and cold builds
// beside it) once started a container 6 s after the minute.
const lead = 50 * time.Second

// checkRuns runs, every minute for two measured minutes: a ScheduledJob
// without warm-up, EarlyStart ones (their pods wait in `ontime-wait` on the
// node until the minute), and a Placeholder one whose placeholder holds a
// CPU its run then needs (the run's pod preempts it). Between the two
// minutes the leader's container is killed. At the first minute, two runs
// are late on purpose (lateOnPurpose). Then a run is triggered.
func (e *env) checkRuns(t *testing.T) {
	t.Helper()
	// Its Jobs are kept for checkNoRunLost, here and after the upgrade.
	objects := []string{e.scheduledJob("ontime-plain", "* * * * *", "", "100m", "\n  successfulJobsHistoryLimit: 20")}
	earlyStart := fmt.Sprintf("{lead: %s, strategy: EarlyStart}", lead)
	for i := range earlyStarts {
		objects = append(objects, withCommand(e.scheduledJob(fmt.Sprintf("ontime-early-%d", i), "* * * * *", earlyStart, "50m", "")))
	}
	objects = append(objects, e.scheduledJob("ontime-early-held", "* * * * *", earlyStart, "50m", ""))
	// 1 CPU: the node (2 CPUs, 0.45 requested by the rest) cannot hold the
	// placeholder and the run's pod at once.
	objects = append(objects, e.scheduledJob("ontime-placeholder", "* * * * *",
		fmt.Sprintf("{lead: %s, strategy: Placeholder}", lead), "1", ""))
	created := time.Now()
	// The first minute with a whole lead after creation, and the next.
	first := created.Add(lead + 5*time.Second).Truncate(time.Minute).Add(time.Minute)
	second := first.Add(time.Minute)
	objects = append(objects, e.lateOnPurpose(t, first)...)
	e.cluster.Kubectl(t, "apply", "-f", writeFile(t, strings.Join(objects, "---\n")))
	framework.Progress("runs measured at %s and %s", first.Format(time.TimeOnly), second.Format(time.TimeOnly))

	sleepUntil(first.Add(5 * time.Second))
	killed := e.killLeader(t)

	sleepUntil(second.Add(20 * time.Second))
	var installed, released, lateness, held []time.Duration
	for _, at := range []time.Time{first, second} {
		e.checkPlainRun(t, at)
		i, r, l := e.checkEarlyStartRuns(t, at)
		installed, released, lateness = append(installed, i...), append(released, r...), append(lateness, l...)
		held = append(held, e.checkHeldEarlyStartRun(t, at))
		e.checkPlaceholderRun(t, at)
	}
	if worst := report("EarlyStart, the ontime-wait init container installing ontime-wait (the pod's status, in seconds)", installed); worst > installBound {
		t.Errorf("an ontime-wait init container ran %v, want ≤ %v", worst, installBound)
	}
	report("EarlyStart, waiting in the container: scheduled time to ontime-wait's exec", released)
	if p99 := report("EarlyStart lateness, waiting in the container: scheduled time to the program's first line", lateness); p99 > earlyStartP99Bound {
		t.Errorf("EarlyStart lateness p99 %v, want ≤ %v (samples %v)", p99, earlyStartP99Bound, lateness)
	}
	if worst := report("EarlyStart lateness, held in the init container: scheduled time to the container's start (containerd)", held); worst > heldStartBound {
		t.Errorf("EarlyStart lateness of a pod held in its init container %v, want ≤ %v", worst, heldStartBound)
	}
	e.checkNoRunLost(t, "ontime-plain", first, second)
	e.checkRecordedStarts(t, first, second)
	e.checkLateOnPurpose(t, first)
	e.checkControllersHealthy(t, killed)

	framework.Progress("ontime trigger sj/ontime-plain")
	pod := e.waitForRunPod(t, e.trigger(t, "ontime-plain"), time.Minute)
	e.checkRunPod(t, pod, "main")
}

func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }

// runPod waits for the run of sj at the scheduled time at and returns its
// finished pod.
func (e *env) runPod(t *testing.T, sj string, at time.Time) corev1.Pod {
	t.Helper()
	return e.waitForRunPod(t, v1alpha1.RunJobName(sj, at), time.Minute)
}

func (e *env) checkPlainRun(t *testing.T, at time.Time) {
	t.Helper()
	e.checkRunPod(t, e.runPod(t, "ontime-plain", at), "main")
}

// withCommand gives a scheduledJob's container the image's entrypoint as
// its command, so that EarlyStart has it wait in the container.
func withCommand(object string) string {
	return strings.Replace(object, "args: [version]", "command: [/ontime]\n            args: [version]", 1)
}

// checkEarlyStartRuns checks the EarlyStart runs at at whose containers
// waited in `ontime-wait`: the init container installed it and exited 0,
// the container's command ran and exited 0, and the container was running
// before the minute (it was created during the lead). It returns, for
// each run, how long its init container ran, when ontime-wait released
// the command (its line just before the exec) and the run's lateness: to
// the first line the program wrote, which counts the program's own
// start-up too. The last two are the container runtime's stamps: it
// stamps each line as it reads it, in nanoseconds.
func (e *env) checkEarlyStartRuns(t *testing.T, at time.Time) (installed, released, lateness []time.Duration) {
	t.Helper()
	for i := range earlyStarts {
		pod := e.runPod(t, fmt.Sprintf("ontime-early-%d", i), at)
		e.checkRunPod(t, pod, "main")
		e.checkWaitContainer(t, pod, "installed /.ontime-wait/ontime-wait; the containers wait in it until "+at.UTC().Format(time.RFC3339)+"\n")
		installed = append(installed, initRuntime(t, pod, "ontime-wait"))
		if started := e.containerStarted(t, pod, "main"); !started.Before(at) {
			t.Errorf("pod %s: container started at %s, want during the lead, before %s", pod.Name,
				started.Format(time.StampMilli), at.Format(time.TimeOnly))
		}
		released = append(released, e.logLineAt(t, pod.Name, "main", "released: running /ontime").Sub(at))
		lateness = append(lateness, e.logLineAt(t, pod.Name, "main", "ontime "+version+" ").Sub(at))
	}
	return installed, released, lateness
}

// initRuntime is how long the pod's init container ran, by its status (to
// the second).
func initRuntime(t *testing.T, pod corev1.Pod, container string) time.Duration {
	t.Helper()
	for _, s := range pod.Status.InitContainerStatuses {
		if s.Name == container && s.State.Terminated != nil {
			return s.State.Terminated.FinishedAt.Sub(s.State.Terminated.StartedAt.Time)
		}
	}
	t.Fatalf("pod %s: init container %s has not terminated", pod.Name, container)
	return 0
}

// checkHeldEarlyStartRun checks the EarlyStart run at at held in its init
// container (ontime-wait exited 0 at the minute, then the container ran)
// and returns its lateness, to the container's start.
func (e *env) checkHeldEarlyStartRun(t *testing.T, at time.Time) time.Duration {
	t.Helper()
	pod := e.runPod(t, "ontime-early-held", at)
	e.checkRunPod(t, pod, "main")
	e.checkWaitContainer(t, pod, "released\n")
	return e.containerStarted(t, pod, "main").Sub(at)
}

// checkRecordedStarts: the runs' starts are recorded in status with phases
// that add up to their lateness, by the kubelet's own timestamps; the
// EarlyStart run held in its init container, whose pod was created and
// scheduled during the lead, spent its lateness on the node only (the
// init container, creating the container).
func (e *env) checkRecordedStarts(t *testing.T, runs ...time.Time) {
	t.Helper()
	onTheNode := []v1alpha1.RunPhaseName{v1alpha1.PhasePodSandbox, v1alpha1.PhaseInitContainers, v1alpha1.PhaseImagePull}
	for _, name := range []string{"ontime-plain", "ontime-early-held", "ontime-placeholder"} {
		var recorded map[time.Time]v1alpha1.RunStart
		framework.Eventually(t, time.Minute, name+"'s runs' starts to be recorded", func() bool {
			sj := &v1alpha1.ScheduledJob{}
			if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: workloads, Name: name}, sj); err != nil {
				t.Fatal(err)
			}
			recorded = map[time.Time]v1alpha1.RunStart{}
			for _, s := range sj.Status.RecentRunStarts {
				recorded[s.ScheduledTime.Time] = s
			}
			_, ok := recorded[runs[len(runs)-1]]
			return ok
		})
		for _, at := range runs {
			s, ok := recorded[at]
			if !ok {
				t.Errorf("%s: no recorded start of the run at %s", name, at.Format(time.TimeOnly))
				continue
			}
			for _, p := range s.Phases {
				if name == "ontime-early-held" && !slices.Contains(onTheNode, p.Name) {
					t.Errorf("%s at %s: %s in %s, want only %v (its pod was created during the lead)", name, at.Format(time.TimeOnly), p.Duration.Duration, p.Name, onTheNode)
				}
			}
			if sum := s.PhasesTotal(); sum != s.Lateness.Duration {
				t.Errorf("%s at %s: phases %v add up to %s, lateness %s", name, at.Format(time.TimeOnly), s.Phases, sum, s.Lateness.Duration)
			}
			framework.Progress("%s at %s: %s late: %v", name, at.Format(time.TimeOnly), s.Lateness.Duration, s.Phases)
		}
	}
}

// checkWaitContainer checks that an EarlyStart pod's init container
// ontime-wait exited 0 and that its log ends with last.
func (e *env) checkWaitContainer(t *testing.T, pod corev1.Pod, last string) {
	t.Helper()
	if code, ok := exitCode(pod.Status.InitContainerStatuses, "ontime-wait"); !ok || code != 0 {
		t.Errorf("pod %s: ontime-wait exit code %d (terminated %v), want 0", pod.Name, code, ok)
	}
	if logs := e.cluster.Kubectl(t, "logs", "-n", workloads, pod.Name, "-c", "ontime-wait"); !strings.HasSuffix(logs, last) {
		t.Errorf("pod %s: ontime-wait logged %q, want it to end with %q", pod.Name, logs, last)
	}
}

// containerStarted is when containerd's StartContainer returned for the
// pod's container, from containerd's log.
func (e *env) containerStarted(t *testing.T, pod corev1.Pod, container string) time.Time {
	t.Helper()
	var id string
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			id = strings.TrimPrefix(s.ContainerID, "containerd://")
		}
	}
	logs, err := os.ReadFile(filepath.Join(e.nodeLogs, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	// time="2026-11-25T15:40:01.709068507Z" level=info msg="StartContainer for \"ID\" returns successfully"
	for _, line := range strings.Split(string(logs), "\n") {
		if id != "" && strings.Contains(line, `StartContainer for \"`+id+`\" returns successfully`) {
			stamp, _, _ := strings.Cut(strings.TrimPrefix(line, `time="`), `"`)
			if at, err := time.Parse(time.RFC3339Nano, stamp); err == nil {
				return at
			}
		}
	}
	t.Fatalf("pod %s: no start of container %s (%q) in containerd's log", pod.Name, container, id)
	return time.Time{}
}

// report prints the percentiles of samples and returns the p99.
func report(what string, samples []time.Duration) time.Duration {
	slices.Sort(samples)
	framework.Progress("%s: p50 %s, p99 %s, max %s over %d runs", what, framework.Percentile(samples, 50),
		framework.Percentile(samples, 99), samples[len(samples)-1].Round(10*time.Millisecond), len(samples))
	return samples[len(samples)*99/100]
}

// logLineAt is when the container wrote its first line starting with
// prefix, by the container runtime's stamp.
func (e *env) logLineAt(t *testing.T, pod, container, prefix string) time.Time {
	t.Helper()
	logs := e.cluster.Kubectl(t, "logs", "-n", workloads, pod, "-c", container, "--timestamps")
	for _, line := range strings.Split(logs, "\n") {
		if stamp, text, _ := strings.Cut(line, " "); strings.HasPrefix(text, prefix) {
			at, err := time.Parse(time.RFC3339Nano, stamp)
			if err != nil {
				t.Fatalf("pod %s: log line %q has no timestamp: %v", pod, line, err)
			}
			return at
		}
	}
	t.Fatalf("pod %s: no line starting with %q in %q", pod, prefix, logs)
	return time.Time{}
}

// checkPlaceholderRun checks that the run's placeholder really ran its pause
// container and that the run's pod preempted it, then ran on the node.
func (e *env) checkPlaceholderRun(t *testing.T, at time.Time) {
	t.Helper()
	pod := e.runPod(t, "ontime-placeholder", at)
	e.checkRunPod(t, pod, "main")
	placeholder := v1alpha1.RunJobName("ontime-placeholder", at) + "-placeholder-0"
	reasons := e.eventReasons(t, placeholder)
	if !slices.Contains(reasons, "Started") || !slices.Contains(reasons, "Preempted") {
		t.Errorf("placeholder %s: events %v, want Started (its pause container ran) and Preempted (by the run's pod)", placeholder, reasons)
	}
}

// eventReasons lists the reasons of the events about a pod.
func (e *env) eventReasons(t *testing.T, pod string) []string {
	t.Helper()
	var events corev1.EventList
	if err := e.client.List(context.Background(), &events, client.InNamespace(workloads),
		client.MatchingFields{"involvedObject.name": pod}); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, event := range events.Items {
		reasons = append(reasons, event.Reason)
	}
	return reasons
}

// killLeader kills the leader's container (SIGKILL, through containerd: a
// crash, not a shutdown), checks that the other replica leads within the
// Lease's duration and a few retries, and returns the killed one's pod.
func (e *env) killLeader(t *testing.T) (pod string) {
	t.Helper()
	leader, identity := e.waitForLeader(t, "", time.Second)
	var leaderPod corev1.Pod
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: leader}, &leaderPod); err != nil {
		t.Fatal(err)
	}
	container := strings.TrimPrefix(leaderPod.Status.ContainerStatuses[0].ContainerID, "containerd://")
	killed := time.Now()
	if out, err := exec.Command("ctr", "--address", socket, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", container).CombinedOutput(); err != nil {
		t.Fatalf("killing %s's container: %v: %s", leader, err, out)
	}
	const leaseDuration = 15 * time.Second
	next, _ := e.waitForLeader(t, identity, leaseDuration+20*time.Second)
	took := time.Since(killed)
	framework.Progress("killed the leader's container in %s; a new leader (in %s) %s later", leader, next, took.Round(100*time.Millisecond))
	// The Lease expires 15 s after the killed leader's last renewal (at
	// most a retry period before the kill); candidates retry every 2 s
	// with up to 1.2 × 2 s of jitter.
	if bound := leaseDuration + 10*time.Second; took > bound {
		t.Errorf("the new leader took %v after the kill, want within the lease (%v) and its retries: %v", took, leaseDuration, bound)
	}
	return leader
}

// checkControllersHealthy: minutes after the install, no controller
// container restarted but the one killLeader killed, and none logged a
// request its RBAC refused or a cache that could not sync. The standby's
// Lease watch is where a missing rule shows: its cache would not sync,
// and after the controller's 2-minute sync timeout the process exits.
func (e *env) checkControllersHealthy(t *testing.T, killed string) {
	t.Helper()
	for _, pod := range e.controllerPods(t) {
		want := int32(0)
		if pod.Name == killed {
			want = 1
		}
		if got := pod.Status.ContainerStatuses[0].RestartCount; got != want {
			t.Errorf("controller %s restarted %d times, want %d", pod.Name, got, want)
		}
		logs := e.cluster.Kubectl(t, "logs", "-n", namespace, pod.Name)
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, "is forbidden") || strings.Contains(line, "Could not wait for Cache to sync") {
				t.Errorf("controller %s logged: %s", pod.Name, line)
			}
		}
	}
}

// checkNoRunLost checks that the ScheduledJob has exactly one Job for every
// minute from first to last (Job names are the run's minute: a duplicate
// could only be a second pod, which waitForRunPod refuses).
func (e *env) checkNoRunLost(t *testing.T, sj string, first, last time.Time) {
	t.Helper()
	var jobs batchv1.JobList
	if err := e.client.List(context.Background(), &jobs, client.InNamespace(workloads)); err != nil {
		t.Fatal(err)
	}
	have := map[time.Time]bool{}
	for _, job := range jobs.Items {
		if at, ok := framework.JobScheduledTime(job.Name); ok && strings.HasPrefix(job.Name, sj+"-") {
			have[at] = true
		}
	}
	for at := first; !at.After(last); at = at.Add(time.Minute) {
		if !have[at] {
			t.Errorf("%s: no Job for the run at %s", sj, at.Format(time.TimeOnly))
		}
	}
}
