package docs

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/test/framework"
)

// TestSamplesArePortable: config/samples run on any cluster (no kwok stage
// annotation, no node pool of make dev's), and config/dev/samples, which
// make dev applies, adds both to the samples that need them.
func TestSamplesArePortable(t *testing.T) {
	portable := kustomize(t, "config/samples")
	for _, local := range []string{"kwok.x-k8s.io", "karpenter.sh/nodepool"} {
		if strings.Contains(portable, local) {
			t.Errorf("config/samples name %s, which only make dev's cluster has", local)
		}
	}
	if n := strings.Count(portable, "kind: ScheduledJob"); n < 8 {
		t.Errorf("config/samples render %d ScheduledJobs", n)
	}
	dev := kustomize(t, "config/dev/samples")
	if n := strings.Count(dev, "pod-complete.stage.kwok.x-k8s.io/delay"); n != 12 {
		t.Errorf("config/dev/samples: %d samples with kwok's run time, want 12 (the warm-up ones, cold-start, forbid-slow, max-active and the concurrency group's four)", n)
	}
	if n := strings.Count(dev, "karpenter.sh/nodepool: batch"); n != 6 {
		t.Errorf("config/dev/samples: %d samples on the NodePool batch, want 6 (the warm-up ones and cold-start)", n)
	}
}

// kustomize renders a kustomization with the local cluster's kubectl.
func kustomize(t *testing.T, dir string) string {
	t.Helper()
	assets, err := testenv.Assets()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(assets, "kubectl"), "kustomize", filepath.Join(framework.RepoRoot(), dir)).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, out)
	}
	return string(out)
}
