package docs

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/test/framework"
)

// TestSamplesArePortable: config/samples run on any cluster and cost
// nothing worth counting: in their own namespace, images pinned, no kwok
// stage annotation, no node pool of make dev's, no warm-up, no
// cluster-scoped object, nothing every minute, no Backfill's burst.
// config/samples/extended holds the rest, and config/dev/samples, which
// make dev applies, adds kwok's annotations and the node pool to the
// samples that need them.
func TestSamplesArePortable(t *testing.T) {
	portable := kustomize(t, "config/samples")
	for _, costly := range []string{"kwok.x-k8s.io", "karpenter.sh/nodepool", "warmUp:", "kind: ClusterConcurrencyGroup", `schedule: '* * * * *'`, "kind: Backfill", "cpu:"} {
		if strings.Contains(portable, costly) {
			t.Errorf("config/samples has %q: it belongs in config/samples/extended", costly)
		}
	}
	for _, doc := range strings.Split(portable, "\n---\n") {
		if !strings.Contains(doc, "kind: Namespace") && !strings.Contains(doc, "namespace: ontime-samples") {
			t.Errorf("config/samples: an object outside the namespace ontime-samples:\n%s", doc)
		}
	}
	for _, dir := range []string{"config/samples", "config/samples/extended"} {
		for _, line := range strings.Split(kustomize(t, dir), "\n") {
			if image, ok := strings.CutPrefix(strings.TrimSpace(line), "image: "); ok && !strings.Contains(image, ":") {
				t.Errorf("%s: image %s has no tag", dir, image)
			}
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
