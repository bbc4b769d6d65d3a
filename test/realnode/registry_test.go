//go:build realnode

package realnode

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ontime-dev/ontime/test/framework"
)

// servingOn is crane's line when its registry listens.
var servingOn = regexp.MustCompile(`serving on port (\d+)`)

// startRegistry serves an OCI registry on loopback (crane registry serve,
// go-containerregistry's, pinned in hack/tools/crane) until the test ends,
// and returns where a release is published in it: HOST:PORT/ontime-dev, as
// REGISTRY=ghcr.io/ontime-dev is for a real release. The node's containerd
// pulls from it over plain HTTP, which it speaks to 127.0.0.1.
func startRegistry(t *testing.T, crane string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, crane, "registry", "serve", "--address", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	port := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			if m := servingOn.FindStringSubmatch(lines.Text()); m != nil {
				port <- m[1]
			}
		}
	}()
	select {
	case p := <-port:
		return "127.0.0.1:" + p + "/ontime-dev"
	case <-time.After(30 * time.Second):
		t.Fatal("crane registry serve did not say its port within 30 s")
		return ""
	}
}

// release is what make release and make publish wrote and pushed for one
// version.
type release struct {
	version string
	// dist holds install.yaml and the chart; its image/digest the image's.
	dist   string
	digest string
}

// chartVersion is the chart's version of a release: the version without v.
func (r release) chartVersion() string { return strings.TrimPrefix(r.version, "v") }

// publish builds the image of this checkout for platforms (all of make
// image's when empty), packages chartDir, writes install.yaml, and pushes
// the image and the chart to the registry: the targets a release runs,
// with REGISTRY pointed at the loopback one.
func (e *env) publish(t *testing.T, version, chartDir string, platforms ...string) release {
	t.Helper()
	r := release{version: version, dist: filepath.Join(e.cluster.Work, "dist-"+version)}
	args := []string{"--no-print-directory", "image", "install-yaml", "chart-package", "publish",
		"VERSION=" + version, "DIST=" + r.dist, "IMAGE_DIR=" + filepath.Join(r.dist, "image"),
		"REGISTRY=" + e.registry, "CHART=" + chartDir}
	if len(platforms) > 0 {
		args = append(args, "IMAGE_PLATFORMS="+strings.Join(platforms, " "))
	}
	framework.Progress("make image install-yaml chart-package publish VERSION=%s REGISTRY=%s", version, e.registry)
	framework.Command(t, nil, "make", args...)
	digest, err := os.ReadFile(filepath.Join(r.dist, "image", "digest"))
	if err != nil {
		t.Fatal(err)
	}
	r.digest = strings.TrimSpace(string(digest))
	return r
}

// image is the release's controller image as the chart and install.yaml
// name it: repository:tag@digest.
func (e *env) image(r release) string {
	return e.registry + "/ontime:" + r.version + "@" + r.digest
}

// pushPauseImage pushes the real node's pause image (ontime pause) to the
// registry, where placeholders pull it from (controller.placeholderImage):
// the sandboxes' copy of it is the node's own, imported when it starts.
func (e *env) pushPauseImage(t *testing.T) string {
	t.Helper()
	layout := strings.TrimSpace(framework.Command(t, nil, "hack/real-node.sh", "pause-layout"))
	image := e.registry + "/pause:3.10"
	framework.Command(t, nil, e.crane, "push", "--index", layout, image)
	return image
}

// thisArch is the one platform an image built only for this machine has.
var thisArch = "linux/" + runtime.GOARCH

// cranePath is the pinned crane, built into the cache when missing (make
// crane prints its path last).
func cranePath(t *testing.T) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(framework.Command(t, nil, "make", "--no-print-directory", "-s", "crane")), "\n")
	return lines[len(lines)-1]
}
