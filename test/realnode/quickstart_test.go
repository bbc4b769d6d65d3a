//go:build realnode

package realnode

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/test/framework"
)

// gettingStarted is the page whose sh blocks runGettingStarted runs.
const gettingStarted = "docs/getting-started.md"

// runGettingStarted runs docs/getting-started.md's sh blocks in order, each
// in a bash of its own as a reader would paste it, with kubectl, helm and
// this release's ontime on PATH and the cluster as KUBECONFIG, and checks
// the output each block promises. It differs from the reader's in two
// words only: the registry (the one on loopback instead of ghcr.io, plain
// HTTP for Helm) and the version (the release just published instead of
// v0.1.0). Then nothing of ontime may be left.
func (e *env) runGettingStarted(t *testing.T) {
	blocks, err := framework.ShellBlocks(filepath.Join(framework.RepoRoot(), gettingStarted))
	if err != nil {
		t.Fatal(err)
	}
	differences := strings.NewReplacer(
		"oci://ghcr.io/ontime-dev/charts/ontime", "oci://"+e.registry+"/charts/ontime --plain-http",
		"ghcr.io/ontime-dev", e.registry,
		"--version 0.1.0", "--version "+e.release.chartVersion(),
		"v0.1.0", e.release.version,
	)
	path := e.toolsOnPath(t)
	dir := t.TempDir()
	for _, block := range blocks {
		if block.NotRun != "" {
			framework.Progress("%s:%d not run: %s", gettingStarted, block.Line, block.NotRun)
			continue
		}
		script := differences.Replace(block.Script)
		framework.Progress("%s:%d\n%s", gettingStarted, block.Line, script)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "KUBECONFIG="+e.cluster.Kubeconfig, "PATH="+path+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		t.Logf("%s:%d output:\n%s", gettingStarted, block.Line, out)
		if err != nil {
			t.Fatalf("%s:%d failed: %v\n%s", gettingStarted, block.Line, err, out)
		}
		for _, promised := range block.OutputContains {
			if want := differences.Replace(promised); !strings.Contains(string(out), want) {
				t.Errorf("%s:%d: the output lacks %q, which the page promises:\n%s", gettingStarted, block.Line, want, out)
			}
		}
	}
	// The page's clean-up deleted the ScheduledJob, whose Jobs' pods the
	// garbage collector deletes after.
	e.waitForNoPods(t)
	e.checkNothingLeft(t)
}

// toolsOnPath is a directory holding kubectl, helm and ontime, as a
// reader's PATH has them: a new reader's helm is Helm 4.
func (e *env) toolsOnPath(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"kubectl": framework.KubeBin(t, "kubectl"), "helm": e.helm4, "ontime": e.ontime} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
