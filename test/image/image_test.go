//go:build image

// Package image checks the image make image builds, as a release does.
//
//	go test -tags image -v ./test/image     (make test runs it)
package image

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// testVersion is the version make image is asked to stamp.
const testVersion = "v0.0.0-imagetest"

// What docs/install.md says of the image.
const (
	user       = "65532:65532"
	entrypoint = "/ontime"
	// waitPath is ontime-wait, which EarlyStart pods copy and run.
	waitPath = "/ontime-wait"
)

// maxWaitBinary is how large ontime-wait may grow: every EarlyStart pod
// copies and starts it in an init container of 10m CPU and 32Mi (2 MB
// when it was made, the standard library only; /ontime is 57 MB).
const maxWaitBinary = 4 << 20

// TestMakeImage builds the image twice with make image, as a release does,
// and checks that the digests are the same, that each platform's image is
// as docs/install.md describes it (user, entrypoint, labels, one layer
// holding /ontime and /ontime-wait), that the binary in the image reports
// the build's version and carries its own zone database, that ontime-wait
// is small and waits, and that make sbom describes both the same way
// twice.
func TestMakeImage(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	first, second := t.TempDir(), t.TempDir()
	digests := []string{makeImage(t, root, first), makeImage(t, root, second)}
	if digests[0] != digests[1] {
		t.Fatalf("two builds of the same source: digests %s and %s", digests[0], digests[1])
	}
	oci := ociLayout(filepath.Join(first, "oci"))
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	oci.read(t, "index.json", &index)
	var platforms []string
	for _, desc := range index.Manifests {
		platform := desc.Platform.OS + "/" + desc.Platform.Architecture
		platforms = append(platforms, platform)
		t.Run(platform, func(t *testing.T) { checkImage(t, oci, desc) })
	}
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("platforms %v, want %v", platforms, want)
	}
	t.Run("sbom", func(t *testing.T) {
		checkSBOM(t, root, filepath.Join(first, "ontime-linux-amd64"), filepath.Join(second, "ontime-linux-amd64"))
	})
	t.Run("sbom of ontime-wait", func(t *testing.T) {
		checkWaitSBOM(t, root, filepath.Join(first, "ontime-wait-linux-amd64"), filepath.Join(second, "ontime-wait-linux-amd64"))
	})
}

// cycloneDX is the part of a CycloneDX SBOM the test reads.
type cycloneDX struct {
	BOMFormat    string `json:"bomFormat"`
	SerialNumber string `json:"serialNumber"`
	Metadata     struct {
		Timestamp string `json:"timestamp"`
		Component struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"component"`
	} `json:"metadata"`
	Components []struct {
		Name     string `json:"name"`
		Version  string `json:"version"`
		PURL     string `json:"purl"`
		Hashes   []any  `json:"hashes"`
		Evidence struct {
			Licenses []struct {
				License struct {
					ID string `json:"id"`
				} `json:"license"`
			} `json:"licenses"`
		} `json:"evidence"`
	} `json:"components"`
}

// checkSBOM has make sbom describe two builds of the same binary, as make
// release does each binary it ships, and checks that the SBOMs are the
// same bytes (no timestamp, no random serial number), name the release's
// version, and list the modules go.mod requires at their versions, with
// their hashes and licenses.
func checkSBOM(t *testing.T, root string, binaries ...string) {
	checkSBOMContent(t, root, makeSBOMs(t, root, binaries...))
}

// checkWaitSBOM: the SBOMs of two builds of ontime-wait are the same bytes
// and list no module: it is the standard library only.
func checkWaitSBOM(t *testing.T, root string, binaries ...string) {
	bom := makeSBOMs(t, root, binaries...)
	if bom.Metadata.Component.Version != testVersion || len(bom.Components) != 0 {
		t.Errorf("the SBOM of ontime-wait: version %q, components %v; want %s and none", bom.Metadata.Component.Version, bom.Components, testVersion)
	}
}

// makeSBOMs runs make sbom on binaries, two builds of one binary, checks
// that their SBOMs are the same bytes and returns the first.
func makeSBOMs(t *testing.T, root string, binaries ...string) cycloneDX {
	t.Helper()
	cmd := exec.Command("make", "--no-print-directory", "sbom", "SBOM_BINARIES="+strings.Join(binaries, " "), "VERSION="+testVersion)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make sbom: %v\n%s", err, out)
	}
	var contents [][]byte
	for _, binary := range binaries {
		data, err := os.ReadFile(binary + ".cdx.json")
		if err != nil {
			t.Fatal(err)
		}
		contents = append(contents, data)
	}
	if string(contents[0]) != string(contents[1]) {
		t.Error("two SBOMs of the same binary differ")
	}
	var bom cycloneDX
	if err := json.Unmarshal(contents[0], &bom); err != nil {
		t.Fatal(err)
	}
	return bom
}

// checkSBOMContent checks what an SBOM of the binary must say: the
// release's version, no timestamp or serial number, and the modules
// go.mod requires at their versions, with hashes and licenses.
func checkSBOMContent(t *testing.T, root string, bom cycloneDX) {
	if bom.BOMFormat != "CycloneDX" || bom.SerialNumber != "" || bom.Metadata.Timestamp != "" {
		t.Errorf("format %q, serial number %q, timestamp %q; want CycloneDX, none, none", bom.BOMFormat, bom.SerialNumber, bom.Metadata.Timestamp)
	}
	if bom.Metadata.Component.Version != testVersion {
		t.Errorf("the SBOM describes %s %s, want version %s", bom.Metadata.Component.Name, bom.Metadata.Component.Version, testVersion)
	}
	want := requiredModules(t, root, "sigs.k8s.io/controller-runtime", "k8s.io/client-go", "github.com/spf13/cobra")
	for _, c := range bom.Components {
		version, ok := want[c.Name]
		if !ok {
			continue
		}
		delete(want, c.Name)
		if c.Version != version || len(c.Hashes) == 0 || len(c.Evidence.Licenses) == 0 || c.Evidence.Licenses[0].License.ID != "Apache-2.0" {
			t.Errorf("component %s %s: %d hashes, licenses %v; want version %s, a hash, Apache-2.0", c.Name, c.Version, len(c.Hashes), c.Evidence.Licenses, version)
		}
	}
	if len(want) > 0 {
		t.Errorf("the SBOM lacks %v", want)
	}
}

// requiredModules returns the versions go.mod requires of the modules.
func requiredModules(t *testing.T, root string, modules ...string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, modules...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	versions := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, version, _ := strings.Cut(line, " ")
		versions[path] = version
	}
	return versions
}

// ociLayout is an OCI image layout directory, read with the standard
// library only: index.json and blobs/sha256/….
type ociLayout string

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Platform  *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform,omitempty"`
}

func (l ociLayout) blob(digest string) string {
	return filepath.Join(string(l), "blobs", strings.Replace(digest, ":", string(filepath.Separator), 1))
}

// read decodes a JSON file of the layout: index.json, or a blob's digest.
func (l ociLayout) read(t *testing.T, name string, v any) {
	t.Helper()
	path := filepath.Join(string(l), name)
	if strings.HasPrefix(name, "sha256:") {
		path = l.blob(name)
	}
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
}

// makeImage runs make image into dir and returns the digest it wrote.
func makeImage(t *testing.T, root, dir string) string {
	t.Helper()
	cmd := exec.Command("make", "--no-print-directory", "image", "IMAGE_DIR="+dir, "VERSION="+testVersion)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	digest, err := os.ReadFile(filepath.Join(dir, "digest"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ontime-image.tar")); err != nil {
		t.Error(err)
	}
	return strings.TrimSpace(string(digest))
}

// imageConfig is the part of an OCI image config the test reads.
type imageConfig struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
}

func checkImage(t *testing.T, oci ociLayout, desc descriptor) {
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	oci.read(t, desc.Digest, &manifest)
	var config imageConfig
	oci.read(t, manifest.Config.Digest, &config)
	if config.Config.User != user || !slices.Equal(config.Config.Entrypoint, []string{entrypoint}) {
		t.Errorf("user %q, entrypoint %v; want %q, [%s]", config.Config.User, config.Config.Entrypoint, user, entrypoint)
	}
	if config.OS != desc.Platform.OS || config.Architecture != desc.Platform.Architecture {
		t.Errorf("config says %s/%s, the index %s/%s", config.OS, config.Architecture, desc.Platform.OS, desc.Platform.Architecture)
	}
	checkLabels(t, config.Config.Labels)
	if len(manifest.Layers) != 1 {
		t.Fatalf("%d layers, want 1", len(manifest.Layers))
	}
	files := layerFiles(t, oci.blob(manifest.Layers[0].Digest))
	binary, wait := files[entrypoint], files[waitPath]
	if len(wait) > maxWaitBinary {
		t.Errorf("%s is %d bytes, want at most %d: EarlyStart pods copy and start it on 10m of CPU", waitPath, len(wait), maxWaitBinary)
	}
	if desc.Platform.Architecture != runtime.GOARCH {
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ontime")
	if err := os.WriteFile(path, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	checkWait(t, wait, filepath.Join(dir, "ontime-wait"))
	out, err := exec.Command(path, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ontime "+testVersion+" ") {
		t.Errorf("ontime version in the image: %q (%v), want it to report %s", out, err, testVersion)
	}
	// The zone database is in the binary (time/tzdata): the image has no
	// /usr/share/zoneinfo.
	info, err := exec.Command("go", "version", "-m", path).CombinedOutput()
	if err != nil || !strings.Contains(string(info), "-tags=timetzdata") {
		t.Errorf("the binary was not built with -tags timetzdata: %s (%v)", info, err)
	}
}

// checkLabels: the image has every org.opencontainers.image label
// docs/install.md lists, its version the build's.
func checkLabels(t *testing.T, labels map[string]string) {
	t.Helper()
	for _, name := range []string{"title", "version", "revision", "created", "source", "licenses"} {
		if labels["org.opencontainers.image."+name] == "" {
			t.Errorf("no label org.opencontainers.image.%s: %v", name, labels)
		}
	}
	if labels["org.opencontainers.image.version"] != testVersion {
		t.Errorf("version label %q, want %q", labels["org.opencontainers.image.version"], testVersion)
	}
}

// checkWait runs the image's ontime-wait as EarlyStart pods do: installed
// into a directory by itself, then from there until a time that has passed
// and on to a command.
func checkWait(t *testing.T, content []byte, path string) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o755); err != nil {
		t.Fatal(err)
	}
	installed := filepath.Join(filepath.Dir(path), "volume", "ontime-wait")
	if out, err := exec.Command(path, "--until", "2026-11-24T10:00:00Z", "--install", installed).CombinedOutput(); err != nil {
		t.Fatalf("ontime-wait --install: %v: %s", err, out)
	}
	out, err := exec.Command(installed, "--until", "2026-11-24T10:00:00Z", "--", installed, "--until", "2026-11-24T10:00:00Z").CombinedOutput()
	if want := "waiting until 2026-11-24T10:00:00Z (0s from now)\nreleased: running " + installed + "\n" +
		"waiting until 2026-11-24T10:00:00Z (0s from now)\nreleased\n"; err != nil || string(out) != want {
		t.Errorf("the installed ontime-wait, running itself: %q (%v), want %q", out, err, want)
	}
}

// layerFiles returns the content of each file of the layer (a gzipped
// tar) by its path, after checking that it holds /ontime and /ontime-wait,
// executable, and nothing else.
func layerFiles(t *testing.T, layer string) map[string][]byte {
	t.Helper()
	f, err := os.Open(layer)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	var names []string
	for {
		header, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if header.Mode != 0o755 {
			t.Errorf("layer holds %s with mode %o, want 755", header.Name, header.Mode)
		}
		name := "/" + header.Name
		names = append(names, name)
		if files[name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{entrypoint, waitPath}; !slices.Equal(names, want) {
		t.Fatalf("the layer holds %v, want %v", names, want)
	}
	return files
}
