package testenv

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
)

// karpenterVersion reads the Karpenter version hack/karpenter.sh builds:
// the tests install the CapacityBuffer CRD of the autoscaler the e2e and
// make dev run, not a copy.
var karpenterVersion = regexp.MustCompile(`(?m)^version=(v[0-9][^\s]*)$`)

// CapacityBufferCRD returns the path of the CapacityBuffer CRD
// (autoscaling.x-k8s.io) that Karpenter's kwok provider ships, from the
// Go module cache (downloaded through the module proxy when missing).
func CapacityBufferCRD() (string, error) {
	script, err := os.ReadFile(filepath.Join(RepoRoot(), "hack", "karpenter.sh"))
	if err != nil {
		return "", err
	}
	match := karpenterVersion.FindSubmatch(script)
	if match == nil {
		return "", fmt.Errorf("hack/karpenter.sh names no version=")
	}
	module := "sigs.k8s.io/karpenter@" + string(match[1])
	out, err := exec.Command("go", "mod", "download", "-json", module).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w", module, err)
	}
	var downloaded struct{ Dir, Error string }
	if err := json.Unmarshal(out, &downloaded); err != nil {
		return "", fmt.Errorf("go mod download %s: %w", module, err)
	}
	if downloaded.Error != "" {
		return "", fmt.Errorf("go mod download %s: %s", module, downloaded.Error)
	}
	crd := filepath.Join(downloaded.Dir, "kwok", "charts", "crds", "autoscaling.x-k8s.io_capacitybuffers.yaml")
	if _, err := os.Stat(crd); err != nil {
		return "", err
	}
	return crd, nil
}
