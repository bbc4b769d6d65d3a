//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ontime-dev/ontime/test/framework"
)

// Other projects' CRDs the chart's optional objects need, at the versions
// the chart is checked against.
var thirdPartyCRDs = map[string][]string{
	"github.com/prometheus-operator/prometheus-operator@v0.85.0": {
		"example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml",
		"example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml",
	},
	"github.com/cert-manager/cert-manager@v1.21.2": {
		"deploy/crds/cert-manager.io_certificates.yaml",
		"deploy/crds/cert-manager.io_issuers.yaml",
	},
}

// checkInstallManifests renders the chart for every case of its values
// matrix (charts/ontime/ci) and has the API server validate each rendering
// (server-side dry run): what helm install or kubectl apply of
// dist/install.yaml would send. kwok cannot run the controller's container
// itself; the next issue runs it on a real node.
func checkInstallManifests(t *testing.T, cluster *framework.Cluster) {
	for module, files := range thirdPartyCRDs {
		dir := framework.ModuleDir(t, module)
		for _, file := range files {
			cluster.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(dir, file))
		}
	}
	cluster.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com",
		"crd/certificates.cert-manager.io", "crd/issuers.cert-manager.io")
	helm := framework.Helm(t)
	cases, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "charts/ontime/ci/*-values.yaml"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no values in charts/ontime/ci (%v)", err)
	}
	for _, values := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(values), "-values.yaml"), func(t *testing.T) {
			rendered := filepath.Join(t.TempDir(), "manifests.yaml")
			out := framework.Command(t, nil, helm, "template", "ontime", "charts/ontime", "--kube-version", chartKubeVersion, "--namespace", "ontime-system", "--include-crds", "-f", values)
			if err := os.WriteFile(rendered, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
			// kubectl's own field manager, which applied config/dev: the
			// rendering replaces what it set (the webhook at a URL becomes
			// the webhook behind a Service), as an install over make dev's
			// objects would.
			if _, err := framework.CommandErr(nil, framework.KubeBin(t, "kubectl"), "--kubeconfig", cluster.Kubeconfig,
				"apply", "--server-side", "--dry-run=server", "-f", rendered); err != nil {
				t.Error(err)
			}
		})
	}
}

// checkEditRole proves the aggregated roles: alice, bound to Kubernetes'
// edit role in one namespace only, creates a ScheduledJob and triggers it
// there (ontime trigger --as alice), and can do neither in another.
// chartKubeVersion is the Kubernetes version helm template renders for,
// as the Makefile's CHART_KUBE_VERSION: the oldest release of make
// compat's matrix (helm's default, 1.20, is below the chart's kubeVersion).
var chartKubeVersion = func() string {
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "test", "compat", "versions"))
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	panic("test/compat/versions names no release")
}()

func checkEditRole(t *testing.T, cluster *framework.Cluster, binary string) {
	helm := framework.Helm(t)
	roles := filepath.Join(t.TempDir(), "roles.yaml")
	out := framework.Command(t, nil, helm, "template", "ontime", "charts/ontime", "--kube-version", chartKubeVersion, "--namespace", "ontime-system", "--show-only", "templates/aggregated-roles.yaml")
	if err := os.WriteFile(roles, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	cluster.Kubectl(t, "apply", "--server-side", "-f", roles)
	for _, ns := range []string{"team-a", "team-b"} {
		cluster.Kubectl(t, "create", "namespace", ns)
	}
	cluster.Kubectl(t, "create", "rolebinding", "alice-edit", "-n", "team-a", "--clusterrole=edit", "--user=alice")
	// kube-controller-manager's aggregation controller copies ontime-edit's
	// rules into edit.
	framework.Eventually(t, time.Minute, "edit to include ScheduledJobs", func() bool {
		out, _ := framework.CommandErr(nil, framework.KubeBin(t, "kubectl"), "--kubeconfig", cluster.Kubeconfig,
			"auth", "can-i", "create", "scheduledjobs.ontime.dev", "-n", "team-a", "--as", "alice")
		return strings.TrimSpace(out) == "yes"
	})
	manifest := filepath.Join(t.TempDir(), "sj.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: ontime.dev/v1alpha1
kind: ScheduledJob
metadata:
  name: report
spec:
  schedule: "0 0 1 1 *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: report
            image: busybox
`), 0o600); err != nil {
		t.Fatal(err)
	}
	asAlice := func(args ...string) (string, error) {
		return framework.CommandErr(nil, framework.KubeBin(t, "kubectl"), append([]string{"--kubeconfig", cluster.Kubeconfig, "--as", "alice"}, args...)...)
	}
	if out, err := asAlice("create", "-n", "team-a", "-f", manifest); err != nil {
		t.Fatalf("alice cannot create a ScheduledJob where she may edit: %v", err)
	} else {
		t.Logf("team-a: %s", strings.TrimSpace(out))
	}
	out = framework.Command(t, nil, binary, "trigger", "sj/report", "-n", "team-a", "--kubeconfig", cluster.Kubeconfig, "--as", "alice", "--wait")
	if !strings.Contains(out, "started") {
		t.Errorf("ontime trigger --as alice in team-a: %s", out)
	}

	if out, err := asAlice("create", "-n", "team-b", "-f", manifest); err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("alice created a ScheduledJob in team-b, where she has no role: %v %s", err, out)
	}
	cluster.Kubectl(t, "create", "-n", "team-b", "-f", manifest)
	out, err := framework.CommandErr(nil, binary, "trigger", "sj/report", "-n", "team-b", "--kubeconfig", cluster.Kubeconfig, "--as", "alice")
	if err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("alice triggered a run in team-b, where she has no role: %v %s", err, out)
	}
}

// checkMonitoring parses the alert rules and the dashboard with
// Prometheus' own packages and checks that every metric they name is on
// the replicas' /metrics, but the families a controller exports only once
// a concurrency group or a Backfill exists (this test has neither; that
// the code defines them, test/docs' TestEveryQueriedMetricIsDefined).
func checkMonitoring(t *testing.T, replicas ...*framework.Controller) {
	var urls []string
	for _, r := range replicas {
		if r == nil { // a replica whose start failed, which its subtest reported
			continue
		}
		urls = append(urls, r.MetricsURL())
	}
	root := framework.RepoRoot()
	args := []string{"-c", `cd hack/tools/promcheck && go run . "$@"`, "promcheck",
		"-rules", filepath.Join(root, "config/prometheus/rules.yaml"),
		"-dashboard", filepath.Join(root, "config/prometheus/dashboard.json"),
		"-metrics", strings.Join(urls, ","), "-may-be-absent", "ontime_concurrency_group_,ontime_backfill_,ontime_start_objective_"}
	out, err := framework.CommandErr(nil, "bash", args...)
	if err != nil {
		t.Error(err)
	}
	t.Log(strings.TrimSpace(out))
}
