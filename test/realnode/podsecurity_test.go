//go:build realnode

package realnode

import (
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/test/framework"
)

// restricted is the Pod Security Standard level ontime's pods and the
// test's runs are held to.
const restricted = "pod-security.kubernetes.io/enforce=restricted"

// enforceRestricted has the API server enforce the restricted Pod
// Security Standard in ontime's namespace (created here, before the
// install) and in the workloads' namespace, and checks that it does: a
// privileged pod is refused there. Every pod of the helm subtest then
// meets it or is refused: the controller's, the placeholders', the
// EarlyStart runs' with their wait container, the runs'.
func (e *env) enforceRestricted(t *testing.T) {
	t.Helper()
	framework.Progress("enforcing the restricted Pod Security Standard in %s and %s", namespace, workloads)
	e.cluster.Kubectl(t, "create", "namespace", namespace)
	for _, ns := range []string{namespace, workloads} {
		e.cluster.Kubectl(t, "label", "--overwrite", "namespace", ns, restricted, "pod-security.kubernetes.io/enforce-version=latest")
		out, err := framework.CommandErr(nil, framework.KubeBin(t, "kubectl"), "--kubeconfig", e.cluster.Kubeconfig, "-n", ns, "run", "privileged-probe", "--image="+e.pauseImage, "--restart=Never",
			"--dry-run=server", `--overrides={"spec":{"containers":[{"name":"privileged-probe","image":"`+e.pauseImage+`","securityContext":{"privileged":true}}]}}`)
		if err == nil || !strings.Contains(out, `violates PodSecurity "restricted:latest"`) {
			t.Fatalf("a privileged pod in %s was not refused by Pod Security admission (%v): %s", ns, err, out)
		}
	}
}

// restrictedPod is what a run's pod template needs to meet the
// restricted level (the image runs as a non-root user).
const restrictedPod = `
          securityContext:
            runAsNonRoot: true
            seccompProfile: {type: RuntimeDefault}`

// restrictedContainer is what its container needs.
const restrictedContainer = `
            securityContext:
              allowPrivilegeEscalation: false
              capabilities: {drop: [ALL]}`
