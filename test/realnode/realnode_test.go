//go:build realnode

// Package realnode installs ontime as users do on a local cluster whose
// only node is real (hack/real-node.sh: a kubelet with containerd, runc,
// CNI bridge networking and kube-proxy): released with make release and
// make publish to a registry on loopback, then installed from it, with no
// image imported by hand (containerd pulls the controller's, the wait
// container's and the placeholders' images). First docs/getting-started.md,
// run block by block; then the Helm chart from the registry (real runs,
// the leader killed, an upgrade to the next version published the same
// way); then the released install.yaml (ontime check on it healthy, with
// the webhook scaled to zero and with the CRD gone); then an image the
// registry lacks. With the shipped RBAC and nothing added: the controller
// runs in its pods, reaches the API server through the kubernetes Service,
// and the API server calls its webhook through the webhook's Service.
//
//	go test -tags realnode -count=1 -v ./test/realnode/   (make e2e-real-node; root)
package realnode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

const (
	clusterName = "ontime-real"
	nodeName    = "ontime-real-node"
	// version is the release's version, as make release stamps it.
	version   = "v0.0.0-realnode"
	namespace = "ontime-system"
	leaseName = "ontime-controller.ontime.dev"
	// workloads is where the test's ScheduledJobs run.
	workloads = "default"
	socket    = "/run/ontime-real-node/containerd.sock"
)

// env is what every step needs.
type env struct {
	cluster *framework.Cluster
	client  client.Client
	ontime  string // the ontime CLI of the release, built from this checkout
	// helm and helm4 are the pinned Helm 3 and Helm 4: getting started
	// installs with Helm 4, the helm subtest with Helm 3, upgrades with
	// Helm 4 and once more with Helm 3.
	helm, helm4 string
	crane       string // the pinned crane, which serves the registry and pushes to it
	// registry is where releases are published: HOST:PORT/ontime-dev on
	// loopback, as ghcr.io/ontime-dev is for a real one.
	registry string
	// release is version's, published before the first install.
	release release
	// pauseImage is the placeholders' image, in the registry.
	pauseImage string
	// nodeLogs holds the kubelet's, containerd's and kube-proxy's logs.
	nodeLogs string
}

func TestInstallOnRealNode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("a real node needs root: containerd, mounts, iptables (hack/real-node.sh)")
	}
	// The packages first (apt-get, when missing): the snapshot of the
	// host reads iptables' chains, and they are not the node's to remove.
	framework.Command(t, nil, "hack/real-node.sh", "packages")
	before := snapshotHost(t)
	// Registered first, so it runs last: after the node and the cluster
	// are gone.
	t.Cleanup(func() { checkHostClean(t, before) })

	cluster := framework.StartCluster(t, clusterName, framework.ClusterOptions{Nodes: 0})
	framework.Progress("starting the real node")
	// Alone in its cluster, the node needs no taint: every pod runs on it.
	t.Cleanup(func() {
		if _, err := framework.CommandErr(nil, "hack/real-node.sh", "down"); err != nil {
			t.Error(err)
		}
	})
	nodeLogs := filepath.Join(cluster.Work, "node-logs")
	framework.Command(t, []string{"ONTIME_REAL_NODE_TAINT=", "ONTIME_REAL_NODE_LOGS=" + nodeLogs},
		"hack/real-node.sh", "up", cluster.Kubeconfig)

	e := &env{cluster: cluster, client: framework.NewClient(t, cluster.Kubeconfig), helm: framework.Helm(t), helm4: framework.Helm4(t), nodeLogs: nodeLogs}
	e.crane = cranePath(t)
	e.registry = startRegistry(t, e.crane)
	e.release = e.publish(t, version, "charts/ontime")
	e.pauseImage = e.pushPauseImage(t)
	e.ontime = filepath.Join(cluster.Work, "ontime")
	framework.Command(t, nil, "go", "build", "-ldflags", "-X github.com/ontime-dev/ontime/cmd/ontime/app.version="+version, "-o", e.ontime, "./cmd/ontime")

	// Each install goes where the last was: only after a clean uninstall.
	if !t.Run("getting started", e.runGettingStarted) {
		return
	}
	if !t.Run("helm", func(t *testing.T) {
		framework.Progress("helm install from oci://%s/charts/ontime", e.registry)
		e.createScraper(t)
		e.enforceRestricted(t)
		e.helmInstall(t, e.helm, "install", e.release)
		e.checkInstalled(t, e.release)
		e.checkMetricsAccess(t)
		e.checkSamples(t)
		e.checkRuns(t)
		e.checkUpgrade(t)
		framework.Progress("uninstalling as docs/install.md says")
		e.deleteWorkloads(t)
		framework.Command(t, nil, e.helm, "--kubeconfig", cluster.Kubeconfig, "uninstall", "ontime", "--namespace", namespace, "--wait")
		e.deleteCRDAndNamespace(t)
		e.checkNothingLeft(t)
	}) {
		return
	}
	if !t.Run("install.yaml", func(t *testing.T) {
		framework.Progress("kubectl apply --server-side -f install.yaml (the release's, its image by digest)")
		cluster.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(e.release.dist, "install.yaml"))
		e.checkInstalled(t, e.release)
		e.checkTriggeredRun(t)
		e.checkBadRollout(t)
		framework.Progress("uninstalling as docs/install.md says, with ontime check between the steps")
		e.deleteWorkloads(t)
		e.checkWebhookDown(t)
		cluster.Kubectl(t, "delete", "validatingwebhookconfiguration,mutatingwebhookconfiguration,priorityclass,flowschema,clusterrole,clusterrolebinding",
			"-l", "app.kubernetes.io/name=ontime", "--wait")
		cluster.Kubectl(t, "delete", "-n", namespace, "deploy,svc,secret,sa,role,rolebinding,pdb",
			"-l", "app.kubernetes.io/name=ontime", "--wait")
		e.checkCRDMissing(t)
		cluster.Kubectl(t, "delete", "namespace", namespace, "--wait", "--timeout=2m")
		e.checkNothingLeft(t)
	}) {
		return
	}
	t.Run("unpullable image", e.checkUnpullableImage)
}

// helmInstall runs helm install or upgrade of the release's chart from the
// registry, with the placeholders' image from it too, and waits for the
// rollout.
func (e *env) helmInstall(t *testing.T, helm, verb string, r release, args ...string) {
	t.Helper()
	framework.Command(t, nil, helm, append([]string{"--kubeconfig", e.cluster.Kubeconfig, verb, "ontime",
		"oci://" + e.registry + "/charts/ontime", "--plain-http", "--version", r.chartVersion(), "--namespace", namespace,
		"--set", "controller.placeholderImage=" + e.pauseImage,
		"--set", "metrics.readers[0].name=" + scraperName, "--set", "metrics.readers[0].namespace=" + scraperNamespace,
		"--wait", "--timeout", "3m"}, args...)...)
}

// checkInstalled waits for two ready replicas on the real node, a leader,
// and the webhook answering through its Service.
func (e *env) checkInstalled(t *testing.T, r release) {
	t.Helper()
	e.cluster.Kubectl(t, "rollout", "status", "-n", namespace, "deployment/ontime-controller", "--timeout=3m")
	pods := e.controllerPods(t)
	if len(pods) != 2 {
		t.Fatalf("%d controller pods, want 2", len(pods))
	}
	for _, pod := range pods {
		if pod.Spec.NodeName != nodeName || !podReady(pod) {
			t.Errorf("pod %s on node %q, ready %v: want ready on %s", pod.Name, pod.Spec.NodeName, podReady(pod), nodeName)
		}
		// Pulled from the registry: nothing else has an image of that name.
		if image := pod.Spec.Containers[0].Image; image != e.image(r) {
			t.Errorf("pod %s runs %s, want the published %s", pod.Name, image, e.image(r))
		}
	}
	leader, _ := e.waitForLeader(t, "", time.Minute)
	framework.Progress("two replicas ready on %s; leader %s", nodeName, leader)

	// A malformed ScheduledJob is refused by the webhook (its parser's
	// words, which no schema has) with the field's path; a valid one is
	// admitted (the runs below).
	// Ready pods are not yet reachable through the Service until
	// kube-proxy has programmed it on the node: the API server's call is
	// refused meanwhile, as any webhook's is, or, before the Service's
	// own rules exist, goes wherever the node routes its ClusterIP (on
	// this machine, an egress proxy that answers with a certificate of its
	// own). Such an answer is tried again, for at most 30 s.
	bad := writeFile(t, e.scheduledJob("ontime-bad", "61 * * * *", "", "100m", ""))
	var out string
	var err error
	ready := time.Now()
	framework.Eventually(t, 30*time.Second, "the webhook to answer through its Service", func() bool {
		out, err = framework.CommandErr(nil, framework.KubeBin(t, "kubectl"), "--kubeconfig", e.cluster.Kubeconfig, "apply", "-f", bad)
		return !notRoutedYet(out)
	})
	framework.Progress("the webhook answered through its Service %s after the pods were ready", time.Since(ready).Round(100*time.Millisecond))
	if err == nil || !strings.Contains(out, `spec.schedule: Invalid value: "61 * * * *"`) || !strings.Contains(out, "61 is above the maximum 59") {
		t.Errorf("a schedule of minute 61: want the webhook's refusal naming spec.schedule, got %v: %s", err, out)
	}
	e.checkCronJobAnnotationsRefused(t)
}

// checkCronJobAnnotationsRefused: the chart's CronJob webhook (selected by
// its matchConditions) refuses a CronJob whose priority annotation is not
// a number, naming it; a CronJob without ontime's annotations is admitted.
func (e *env) checkCronJobAnnotationsRefused(t *testing.T) {
	t.Helper()
	cronJob := func(name, annotations string) string {
		return writeFile(t, `apiVersion: batch/v1
kind: CronJob
metadata:
  name: `+name+`
  namespace: `+workloads+`
  annotations: {`+annotations+`}
spec:
  schedule: "0 0 1 1 *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: report
            image: `+e.registry+`/pause:3.10
`)
	}
	kubectl := framework.KubeBin(t, "kubectl")
	out, err := framework.CommandErr(nil, kubectl, "--kubeconfig", e.cluster.Kubeconfig, "apply", "--dry-run=server", "-f",
		cronJob("ontime-bad-priority", `"ontime.dev/concurrency-group": reports, "ontime.dev/concurrency-priority": high`))
	if err == nil || !strings.Contains(out, `metadata.annotations[ontime.dev/concurrency-priority]: Invalid value: "high"`) {
		t.Errorf("a CronJob with priority high: want the CronJob webhook's refusal naming the annotation, got %v: %s", err, out)
	}
	framework.Progress("a CronJob's bad annotation is refused: %s", strings.TrimSpace(out))
	if out, err := framework.CommandErr(nil, kubectl, "--kubeconfig", e.cluster.Kubeconfig, "apply", "--dry-run=server", "-f", cronJob("plain", "")); err != nil {
		t.Errorf("a CronJob without ontime's annotations: %v: %s", err, out)
	}
}

// checkSamples: config/samples, which the README says run on any
// cluster, are applied as they are (their own namespace) to a cluster with
// no kwok and no Karpenter, and the controller schedules every
// ScheduledJob (status.nextScheduleTime); config/samples/extended, the
// ones for kwok and Karpenter, is admitted in a server-side dry run (the
// webhooks and the API server's validation, nothing created). Then the
// samples' namespace goes.
func (e *env) checkSamples(t *testing.T) {
	t.Helper()
	out := e.cluster.Kubectl(t, "apply", "--server-side", "-k", "config/samples")
	applied := strings.Count(out, "serverside-applied")
	if applied < 10 {
		t.Errorf("config/samples: %d objects applied, want every one:\n%s", applied, out)
	}
	framework.Eventually(t, time.Minute, "every sample ScheduledJob to have its next run time", func() bool {
		times := e.cluster.Kubectl(t, "get", "scheduledjobs", "-n", samplesNamespace, "-o", `jsonpath={range .items[*]}{.status.nextScheduleTime}{"\n"}{end}`)
		lines := strings.Split(strings.TrimSpace(times), "\n")
		return len(lines) >= 9 && !slices.Contains(lines, "")
	})
	framework.Progress("config/samples applied: %d objects, every ScheduledJob scheduled", applied)
	out = e.cluster.Kubectl(t, "apply", "--server-side", "--dry-run=server", "-k", "config/samples/extended")
	if n := strings.Count(out, "serverside-applied (server dry run)"); n < 28 {
		t.Errorf("config/samples/extended: %d objects admitted, want every one:\n%s", n, out)
	}
	framework.Progress("config/samples/extended admitted (server dry run): %d objects", strings.Count(out, "(server dry run)"))
	e.cluster.Kubectl(t, "delete", "namespace", samplesNamespace, "--wait", "--timeout=2m")
}

// samplesNamespace is config/samples' own namespace.
const samplesNamespace = "ontime-samples"

// notRoutedYet reports whether a call through the webhook's Service
// failed because the Service is not routed to its pods yet: refused, or
// answered by another server (a certificate that names no ontime Service).
// A certificate of ontime's for the wrong name is not that, and fails.
func notRoutedYet(out string) bool {
	if strings.Contains(out, "connect: connection refused") {
		return true
	}
	_, names, ok := strings.Cut(out, "x509: certificate is valid for ")
	names, _, _ = strings.Cut(names, ", not ")
	return ok && !strings.Contains(names, "ontime")
}

// controllerPods are the controller's running pods.
func (e *env) controllerPods(t *testing.T) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := e.client.List(context.Background(), &pods, client.InNamespace(namespace),
		client.MatchingLabels{"app.kubernetes.io/name": "ontime"}); err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
}

// waitForLeader waits until a controller process other than the one
// notIdentity names holds the Lease, and returns its pod and identity (the
// pod's name and a per-process suffix: a killed container restarted in the
// same pod is a new identity).
func (e *env) waitForLeader(t *testing.T, notIdentity string, timeout time.Duration) (pod, identity string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var lease coordinationv1.Lease
		err := e.client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: leaseName}, &lease)
		if err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != notIdentity {
			for _, p := range e.controllerPods(t) {
				if strings.HasPrefix(*lease.Spec.HolderIdentity, p.Name+"_") {
					return p.Name, *lease.Spec.HolderIdentity
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leader other than %q after %v (lease: %v)", notIdentity, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func podReady(pod corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// scheduledJob is a ScheduledJob whose pods run the published ontime
// image's `ontime version` (it prints the version and exits 0), asking cpu.
func (e *env) scheduledJob(name, schedule, warmUp, cpu, extra string) string {
	if warmUp != "" {
		warmUp = "\n  warmUp: " + warmUp
	}
	return fmt.Sprintf(`apiVersion: ontime.dev/v1alpha1
kind: ScheduledJob
metadata: {name: %s, namespace: %s}
spec:
  schedule: %q%s%s
  jobTemplate:
    spec:
      backoffLimit: 0
      template:
        spec:
          restartPolicy: Never%s
          containers:
          - name: main
            image: %s/ontime:%s
            args: [version]
            resources: {requests: {cpu: %s}}%s
`, name, workloads, schedule, warmUp, extra, restrictedPod, e.registry, version, cpu, restrictedContainer)
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	return framework.WriteTempFile(t, "object.yaml", content)
}

// checkTriggeredRun triggers a ScheduledJob whose schedule is far away
// through the API (ontime trigger) and checks its container's exit and log.
func (e *env) checkTriggeredRun(t *testing.T) {
	t.Helper()
	e.cluster.Kubectl(t, "apply", "-f", writeFile(t, e.scheduledJob("ontime-yearly", "0 0 1 1 *", "", "100m", "")))
	job := e.trigger(t, "ontime-yearly")
	pod := e.waitForRunPod(t, job, 2*time.Minute)
	e.checkRunPod(t, pod, "main")
}

// trigger runs ontime trigger --wait and returns the run's Job.
func (e *env) trigger(t *testing.T, sj string) string {
	t.Helper()
	out := framework.Command(t, nil, e.ontime, "trigger", "sj/"+sj, "--kubeconfig", e.cluster.Kubeconfig,
		"-n", workloads, "--wait", "-o", "json")
	var result struct {
		Job     string `json:"job"`
		Started bool   `json:"started"`
	}
	if err := json.Unmarshal([]byte(out), &result); err != nil || !result.Started {
		t.Fatalf("ontime trigger: %v: %s", err, out)
	}
	return result.Job
}

// waitForRunPod waits until the Job's one pod has finished and returns it;
// a second pod would be a duplicate run.
func (e *env) waitForRunPod(t *testing.T, job string, timeout time.Duration) corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var pods corev1.PodList
		if err := e.client.List(context.Background(), &pods, client.InNamespace(workloads), client.MatchingLabels{"job-name": job}); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) > 1 {
			t.Fatalf("job %s has %d pods, want 1", job, len(pods.Items))
		}
		if len(pods.Items) == 1 {
			if phase := pods.Items[0].Status.Phase; phase == corev1.PodSucceeded || phase == corev1.PodFailed {
				return pods.Items[0]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: no finished pod after %v", job, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkRunPod checks that a run's pod ran its container on the real node,
// exited 0 and logged the image's version (on a line of its own: an
// EarlyStart container's `ontime-wait` logs first, on stderr).
func (e *env) checkRunPod(t *testing.T, pod corev1.Pod, container string) {
	t.Helper()
	if pod.Spec.NodeName != nodeName {
		t.Errorf("pod %s ran on %q, want %s", pod.Name, pod.Spec.NodeName, nodeName)
	}
	if code, ok := exitCode(pod.Status.ContainerStatuses, container); !ok || code != 0 {
		t.Errorf("pod %s: container %s exit code %d (terminated %v), want 0", pod.Name, container, code, ok)
	}
	logs := e.cluster.Kubectl(t, "logs", "-n", workloads, pod.Name, "-c", container)
	if want := "ontime " + version + " "; !strings.Contains("\n"+logs, "\n"+want) {
		t.Errorf("pod %s: log %q, want a line starting with %q", pod.Name, logs, want)
	}
}

func exitCode(statuses []corev1.ContainerStatus, container string) (int32, bool) {
	for _, s := range statuses {
		if s.Name == container && s.State.Terminated != nil {
			return s.State.Terminated.ExitCode, true
		}
	}
	return -1, false
}

// deleteWorkloads deletes the ScheduledJobs (step 1 of uninstalling), after
// ontime uninstall-preview has listed each with its Jobs, and waits until
// their Jobs and pods are gone.
func (e *env) deleteWorkloads(t *testing.T) {
	t.Helper()
	var sjs v1alpha1.ScheduledJobList
	var jobs batchv1.JobList
	if err := e.client.List(context.Background(), &sjs); err != nil {
		t.Fatal(err)
	}
	if err := e.client.List(context.Background(), &jobs, client.HasLabels{v1alpha1.ScheduledJobLabel}); err != nil {
		t.Fatal(err)
	}
	out := framework.Command(t, nil, e.ontime, "uninstall-preview", "--kubeconfig", e.cluster.Kubeconfig, "-o", "json")
	var preview struct {
		ScheduledJobs []struct{ Name string } `json:"scheduledJobs"`
		Jobs          int                     `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &preview); err != nil || len(preview.ScheduledJobs) != len(sjs.Items) || preview.Jobs != len(jobs.Items) {
		t.Errorf("ontime uninstall-preview: %d ScheduledJobs and %d Jobs, want %d and %d (%v): %s",
			len(preview.ScheduledJobs), preview.Jobs, len(sjs.Items), len(jobs.Items), err, out)
	}
	e.cluster.Kubectl(t, "delete", "scheduledjobs", "--all", "-n", workloads, "--wait")
	e.waitForNoPods(t)
}

// waitForNoPods waits until the garbage collector has deleted the pods of
// deleted ScheduledJobs' Jobs.
func (e *env) waitForNoPods(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var pods corev1.PodList
		if err := e.client.List(context.Background(), &pods, client.InNamespace(workloads)); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pods left in %s two minutes after their ScheduledJobs were deleted", len(pods.Items), workloads)
		}
		time.Sleep(time.Second)
	}
}

// deleteCRDAndNamespace are the last steps of uninstalling.
func (e *env) deleteCRDAndNamespace(t *testing.T) {
	t.Helper()
	e.cluster.Kubectl(t, "delete", "crd", "scheduledjobs.ontime.dev", "backfills.ontime.dev", "concurrencygroups.ontime.dev", "clusterconcurrencygroups.ontime.dev", "--wait")
	e.cluster.Kubectl(t, "delete", "namespace", namespace, "--wait", "--timeout=2m")
}

// checkNothingLeft lists every object of every kind and fails for any
// named after ontime or labeled as its, but the real node's own objects.
func (e *env) checkNothingLeft(t *testing.T) {
	t.Helper()
	var kinds []string
	for _, kind := range strings.Fields(e.cluster.Kubectl(t, "api-resources", "--verbs=list", "-o", "name")) {
		if kind != "events" && kind != "events.events.k8s.io" {
			kinds = append(kinds, kind)
		}
	}
	all := strings.Join(kinds, ",")
	named := e.cluster.Kubectl(t, "get", all, "--all-namespaces", "-o", "custom-columns=KIND:.kind,NAMESPACE:.metadata.namespace,NAME:.metadata.name", "--no-headers")
	labeled := e.cluster.Kubectl(t, "get", all, "--all-namespaces", "-l", "app.kubernetes.io/name=ontime", "-o", "name")
	for _, line := range strings.Split(named, "\n") {
		if strings.Contains(line, "ontime") && !strings.HasSuffix(line, " "+nodeName) && !isWarning(line) {
			t.Errorf("left after uninstalling: %s", strings.Join(strings.Fields(line), " "))
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(labeled), "\n") {
		if line != "" && !isWarning(line) {
			t.Errorf("left after uninstalling, labeled app.kubernetes.io/name=ontime: %s", line)
		}
	}
}

// isWarning tells kubectl's warnings (deprecated kinds it lists) from its
// output.
func isWarning(line string) bool { return strings.HasPrefix(line, "Warning: ") }
