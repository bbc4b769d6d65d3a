//go:build realnode

package realnode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/test/framework"
)

// missingDigest names an image no registry has: what a typo in
// image.digest, a registry the nodes cannot reach or a missing pull secret
// look like to the kubelet.
const missingDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// checkResult is one line of ontime check -o json.
type checkResult struct {
	Check, Status, Detail, Fix string
}

// check runs ontime check -o json and returns its results by check, its
// exit code and its stderr's reason.
func (e *env) check(t *testing.T) (results map[string]checkResult, failed bool, out string) {
	t.Helper()
	out, err := framework.CommandErr(nil, e.ontime, "check", "--kubeconfig", e.cluster.Kubeconfig, "-n", workloads, "-o", "json")
	var list []checkResult
	// The JSON is stdout's first line on; a failure adds its reason after.
	start := strings.Index(out, "[")
	if start < 0 {
		t.Fatalf("ontime check -o json printed no JSON (%v): %s", err, out)
	}
	if jerr := json.NewDecoder(strings.NewReader(out[start:])).Decode(&list); jerr != nil {
		t.Fatalf("ontime check -o json: %v: %s", jerr, out)
	}
	results = map[string]checkResult{}
	for _, r := range list {
		results[r.Check] = r
	}
	return results, err != nil, out
}

// expectCheck fails unless the check's status is status and its detail
// holds each of details.
func expectCheck(t *testing.T, situation string, results map[string]checkResult, check, status string, details ...string) {
	t.Helper()
	r := results[check]
	for _, detail := range details {
		if !strings.Contains(r.Detail, detail) {
			t.Errorf("%s: ontime check's %s: %+v, want %q in its detail", situation, check, r, detail)
		}
	}
	if r.Status != status || (status != "OK" && r.Fix == "") {
		t.Errorf("%s: ontime check's %s: %+v, want %s and, unless OK, a fix", situation, check, r, status)
	}
}

// checkBadRollout rolls the installed Deployment to an image the registry
// lacks, as a mistyped upgrade would: the old pods keep serving (the
// rollout adds a pod before it removes one), so ScheduledJob writes and
// runs go on; ontime check warns, naming the image; undoing the rollout
// ends it.
func (e *env) checkBadRollout(t *testing.T) {
	t.Helper()
	results, failed, out := e.check(t)
	if failed {
		t.Fatalf("ontime check on a healthy install failed: %s", out)
	}
	for _, c := range []string{"api", "controller", "webhook", "leader", "rbac", "warm-up"} {
		expectCheck(t, "healthy", results, c, "OK")
	}
	framework.Progress("rolling the controller to an image the registry lacks")
	bad := e.registry + "/ontime:" + version + "@" + missingDigest
	e.cluster.Kubectl(t, "-n", namespace, "set", "image", "deployment/ontime-controller", "manager="+bad)
	framework.Eventually(t, time.Minute, "a pod that cannot pull its image", func() bool {
		results, _, _ = e.check(t)
		return strings.Contains(results["controller"].Detail, "ErrImagePull") || strings.Contains(results["controller"].Detail, "ImagePullBackOff")
	})
	results, failed, out = e.check(t)
	if failed {
		t.Errorf("ontime check failed while the old pods serve: %s", out)
	}
	expectCheck(t, "a rollout that cannot pull", results, "controller", "WARN", "2/3 pods ready")
	framework.Progress("a rollout that cannot pull, ontime check says: %s", results["controller"].Detail)
	if fix := results["controller"].Fix; !strings.Contains(fix, "cannot pull "+bad) {
		t.Errorf("a rollout that cannot pull: fix %q, want it to name %s", fix, bad)
	}
	e.cluster.Kubectl(t, "apply", "-f", writeFile(t, e.scheduledJob("ontime-during-bad-rollout", "0 0 1 1 *", "", "100m", "")))
	e.cluster.Kubectl(t, "-n", namespace, "rollout", "undo", "deployment/ontime-controller")
	e.cluster.Kubectl(t, "-n", namespace, "rollout", "status", "deployment/ontime-controller", "--timeout=2m")
}

// checkWebhookDown scales the controller to zero: ontime check fails,
// naming the pods and the webhook.
func (e *env) checkWebhookDown(t *testing.T) {
	t.Helper()
	e.cluster.Kubectl(t, "-n", namespace, "scale", "deployment/ontime-controller", "--replicas=0")
	// Gone, not only terminating: a stopping pod serves the webhook
	// through its preStop delay.
	framework.Eventually(t, time.Minute, "the controller's pods to go", func() bool {
		var pods corev1.PodList
		if err := e.client.List(context.Background(), &pods, client.InNamespace(namespace),
			client.MatchingLabels{"app.kubernetes.io/name": "ontime"}); err != nil {
			t.Fatal(err)
		}
		return len(pods.Items) == 0
	})
	results, failed, out := e.check(t)
	if !failed || !strings.Contains(out, "ontime: a check failed: controller: no controller pods in "+namespace) {
		t.Errorf("ontime check with the controller scaled to 0: want exit 1 naming the controller check: %s", out)
	}
	expectCheck(t, "scaled to 0", results, "controller", "FAIL", "no controller pods")
	expectCheck(t, "scaled to 0", results, "webhook", "FAIL", "dry-run create")
	framework.Progress("scaled to 0, ontime check says: %s", results["webhook"].Detail)
}

// checkCRDMissing deletes the CRD (the first step of uninstalling
// install.yaml's here): ontime check fails on the API alone.
func (e *env) checkCRDMissing(t *testing.T) {
	t.Helper()
	e.cluster.Kubectl(t, "delete", "crd", "scheduledjobs.ontime.dev", "backfills.ontime.dev", "concurrencygroups.ontime.dev", "clusterconcurrencygroups.ontime.dev", "--wait")
	// The API server's discovery drops the group a moment after the CRD.
	var results map[string]checkResult
	var failed bool
	var out string
	framework.Eventually(t, 30*time.Second, "discovery to drop ontime.dev", func() bool {
		results, failed, out = e.check(t)
		return results["api"].Status != "OK"
	})
	if !failed || len(results) != 1 {
		t.Errorf("ontime check without the CRD: want exit 1 and the api check alone: %s", out)
	}
	expectCheck(t, "no CRD", results, "api", "FAIL", "CRD is not installed")
}

// checkUnpullableImage installs the chart with an image the registry
// lacks: helm install --wait fails at its timeout; ontime check says why,
// naming the image; ScheduledJob writes are refused by a message naming
// the webhook (with failurePolicy Fail nothing unchecked gets in, and
// nothing would run it), while every other write goes through; helm
// uninstall removes everything.
func (e *env) checkUnpullableImage(t *testing.T) {
	framework.Progress("helm install with an image the registry lacks (--wait --timeout 40s)")
	out, err := framework.CommandErr(nil, e.helm, "--kubeconfig", e.cluster.Kubeconfig, "install", "ontime",
		"oci://"+e.registry+"/charts/ontime", "--plain-http", "--version", e.release.chartVersion(), "--namespace", namespace,
		"--create-namespace", "--set", "image.digest="+missingDigest, "--wait", "--timeout", "40s")
	if err == nil {
		t.Fatalf("helm install --wait of an image the registry lacks succeeded: %s", out)
	}
	framework.Progress("helm says: %s", strings.TrimSpace(out))

	results, failed, out := e.check(t)
	if !failed || !strings.Contains(out, "ontime: a check failed: controller: 0/2 pods ready") {
		t.Errorf("ontime check: want exit 1 naming the controller's pods: %s", out)
	}
	controller := results["controller"]
	if !strings.Contains(controller.Detail, "ImagePullBackOff") && !strings.Contains(controller.Detail, "ErrImagePull") {
		t.Errorf("ontime check's controller: %+v, want the kubelet's pull failure", controller)
	}
	if !strings.Contains(controller.Fix, "cannot pull "+e.registry+"/ontime:"+version+"@"+missingDigest) {
		t.Errorf("ontime check's controller: fix %q, want it to name the image", controller.Fix)
	}
	framework.Progress("ontime check says: %s; fix: %s", controller.Detail, controller.Fix)

	out, err = framework.CommandErr(nil, framework.KubeBin(t, "kubectl"), "--kubeconfig", e.cluster.Kubeconfig, "apply", "-f",
		writeFile(t, e.scheduledJob("ontime-refused", "0 0 1 1 *", "", "100m", "")))
	if err == nil || !strings.Contains(out, `failed calling webhook "vscheduledjob.ontime.dev"`) {
		t.Errorf("a ScheduledJob while no controller serves: want the webhook's failure, got %v: %s", err, out)
	}
	framework.Progress("a ScheduledJob write is refused: %s", strings.TrimSpace(out))
	e.cluster.Kubectl(t, "-n", workloads, "create", "cronjob", "unblocked", "--image="+e.registry+"/ontime:"+version, "--schedule=0 0 1 1 *")
	// Its ontime annotations too: the CronJob webhook fails open.
	e.cluster.Kubectl(t, "-n", workloads, "annotate", "cronjob", "unblocked", "ontime.dev/concurrency-group=reports")
	e.cluster.Kubectl(t, "-n", workloads, "delete", "cronjob", "unblocked")

	framework.Command(t, nil, e.helm, "--kubeconfig", e.cluster.Kubeconfig, "uninstall", "ontime", "--namespace", namespace, "--wait")
	e.deleteCRDAndNamespace(t)
	e.checkNothingLeft(t)
}
