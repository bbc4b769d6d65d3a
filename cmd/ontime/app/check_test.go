//go:build integration

package app

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/cmd/ontime/app/clitest"
	"github.com/ontime-dev/ontime/cmd/ontime/app/clustercmd"
	"github.com/ontime-dev/ontime/cmd/ontime/app/controllercmd"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// checkAt is the fixed time runCLI's commands see.
var checkAt = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// TestCheck: ontime check on an installation that works says so and exits
// 0; with the webhook not answering, the leader gone, or the CRD missing
// it exits 1 and names the check that failed, with what to do.
func TestCheck(t *testing.T) {
	c, kubeconfig := clitest.StartAPIServerKubeconfig(t, "config/crd/bases")
	ctx := context.Background()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ontime-system", Name: controllercmd.LeaderElectionID},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ontime-controller-5d8f_0b6f7c1e"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: checkAt.Add(-2 * time.Second)}}}
	create(t, c, lease)
	create(t, c, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "ontime-placeholder"}, Value: -5})

	ready := controllerPod(t, c, "ontime-controller-5d8f", "registry.example/ontime:"+version, corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}})

	results := runCheckCLI(t, kubeconfig, 0)
	want := map[string]clustercmd.CheckStatus{"api": clustercmd.CheckOK, "controller": clustercmd.CheckOK, "webhook": clustercmd.CheckWarn, "leader": clustercmd.CheckOK, "rbac": clustercmd.CheckOK, "warm-up": clustercmd.CheckOK}
	for check, status := range want {
		expectCheck(t, "healthy", results[check], status, "")
	}

	// A second pod whose image cannot be pulled: a warning while one
	// serves, a failure that names the image once none does.
	pulling := corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "controller", Image: "registry.example/ontime:v9",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "registry.example/ontime:v9"`}}}}}
	controllerPod(t, c, "ontime-controller-7c4b", "registry.example/ontime:v9", pulling)
	expectCheck(t, "one pod not pulled", runCheckCLI(t, kubeconfig, 0)["controller"], clustercmd.CheckWarn, "1/2 pods ready; ontime-controller-7c4b: ImagePullBackOff")
	if err := c.Delete(ctx, ready); err != nil {
		t.Fatal(err)
	}
	notPulled := runCheckCLI(t, kubeconfig, 1)["controller"]
	expectCheck(t, "no pod pulled", notPulled, clustercmd.CheckFail, `0/1 pods ready; ontime-controller-7c4b: ImagePullBackOff: Back-off pulling image "registry.example/ontime:v9"`)
	if !strings.Contains(notPulled.Fix, "cannot pull registry.example/ontime:v9") {
		t.Errorf("no pod pulled: fix %q, want it to name the image", notPulled.Fix)
	}

	// The webhook registered, its Service not answering.
	create(t, c, brokenWebhook())
	expectCheck(t, "webhook not answering", runCheckCLI(t, kubeconfig, 1)["webhook"], clustercmd.CheckFail, "dry-run create")
	if err := c.Delete(ctx, brokenWebhook()); err != nil {
		t.Fatal(err)
	}

	// The webhook's address takes connections and never answers, as a
	// control plane whose packets a private cluster's firewall drops sees
	// it: the call times out, and the fix says so.
	create(t, c, timingOutWebhook(silentListener(t)))
	timedOut := runCheckCLI(t, kubeconfig, 1)["webhook"]
	expectCheck(t, "webhook call timing out", timedOut, clustercmd.CheckFail, "dry-run create")
	if !strings.Contains(timedOut.Fix, "timed out") || !strings.Contains(timedOut.Fix, "Private clusters") {
		t.Errorf("webhook call timing out: fix %q, want the timeout and docs/install.md's Private clusters", timedOut.Fix)
	}
	if err := c.Delete(ctx, brokenWebhook()); err != nil {
		t.Fatal(err)
	}

	// The leader gone: its Lease last renewed an hour ago.
	lease.Spec.RenewTime = &metav1.MicroTime{Time: checkAt.Add(-time.Hour)}
	if err := c.Update(ctx, lease); err != nil {
		t.Fatal(err)
	}
	expectCheck(t, "leader gone", runCheckCLI(t, kubeconfig, 1)["leader"], clustercmd.CheckFail, "not held")

	// No CRD: a cluster without ontime.
	_, bare := clitest.StartAPIServerConfig(t)
	bareKubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.WriteKubeconfig(bare, bareKubeconfig); err != nil {
		t.Fatal(err)
	}
	results = runCheckCLI(t, bareKubeconfig, 1)
	expectCheck(t, "no CRD", results["api"], clustercmd.CheckFail, "CRD is not installed")
	if len(results) != 1 {
		t.Errorf("no CRD: %+v, want the api check alone", results)
	}

	// The ScheduledJob CRD only: an upgrade that did not apply the new
	// CRDs.
	dir := t.TempDir()
	crd, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "ontime.dev_scheduledjobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scheduledjobs.yaml"), crd, 0o600); err != nil {
		t.Fatal(err)
	}
	_, old := clitest.StartAPIServerConfig(t, dir)
	oldKubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.WriteKubeconfig(old, oldKubeconfig); err != nil {
		t.Fatal(err)
	}
	expectCheck(t, "CRDs not upgraded", runCheckCLI(t, oldKubeconfig, 1)["api"], clustercmd.CheckWarn, "Backfills, ConcurrencyGroups, ClusterConcurrencyGroups are not")
}

// expectCheck: the check has the status, its detail says what, and one
// that is not OK says what to do.
func expectCheck(t *testing.T, situation string, r clustercmd.CheckResult, status clustercmd.CheckStatus, detail string) {
	t.Helper()
	if r.Status != status || !strings.Contains(r.Detail, detail) || (status != clustercmd.CheckOK && r.Fix == "") {
		t.Errorf("%s: %+v, want %s with %q and a fix", situation, r, status, detail)
	}
}

// runCheckCLI runs ontime check -o json and returns its results by check.
func runCheckCLI(t *testing.T, kubeconfig string, wantCode int) map[string]clustercmd.CheckResult {
	t.Helper()
	stdout, stderr, code := runCLI(t, "check", "--kubeconfig", kubeconfig, "-n", "default", "-o", "json")
	if code != wantCode {
		t.Fatalf("exit %d, want %d; stdout %s, stderr %s", code, wantCode, stdout, stderr)
	}
	if wantCode != 0 && !strings.HasPrefix(stderr, "ontime: a check failed: ") {
		t.Errorf("stderr %q, want one line naming the failed check", stderr)
	}
	var results []clustercmd.CheckResult
	if err := json.Unmarshal([]byte(stdout), &results); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	byCheck := map[string]clustercmd.CheckResult{}
	for _, r := range results {
		byCheck[r.Check] = r
	}
	return byCheck
}

// brokenWebhook is ontime's webhook registration with no Service behind it.
func brokenWebhook() *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "ontime-validating-webhook-configuration"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "vscheduledjob.ontime.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "ontime-system", Name: "ontime-webhook-service", Path: ptr.To("/validate")}},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{"ontime.dev"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"scheduledjobs"}}}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// timingOutWebhook is brokenWebhook called at address, waiting 1 s.
func timingOutWebhook(address string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	configuration := brokenWebhook()
	configuration.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://" + address + "/validate")}
	configuration.Webhooks[0].TimeoutSeconds = ptr.To[int32](1)
	return configuration
}

// silentListener accepts connections on loopback and never writes to
// them, until the test ends; it returns its address.
func silentListener(t *testing.T) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			held = append(held, conn)
		}
	}()
	t.Cleanup(func() {
		_ = listener.Close()
		<-done
		for _, conn := range held {
			_ = conn.Close()
		}
	})
	return listener.Addr().String()
}

// controllerPod creates a pod labeled as the controller's, with status.
func controllerPod(t *testing.T, c client.Client, name, image string, status corev1.PodStatus) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ontime-system", Name: name, Labels: map[string]string{"app.kubernetes.io/name": "ontime"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "controller", Image: image}}}}
	create(t, c, pod)
	pod.Status = status
	if err := c.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}
