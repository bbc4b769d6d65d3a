// Command image builds ontime's container image without a container
// engine, from binaries built by the go command, with
// github.com/google/go-containerregistry: a multi-platform OCI image index
// (linux/amd64 and linux/arm64), each image one layer holding the static
// binary /ontime (and, for the controller's image, /ontime-wait, the small
// binary EarlyStart pods run) on an empty base, run as the non-root user
// 65532 with /ontime as its entrypoint. The binary carries its own zone database
// (built with -tags timetzdata), so spec.timeZone works without
// /usr/share/zoneinfo.
//
// The same binaries and flags give the same digest: every timestamp is
// -created (make image passes the commit's time), the layer's tar has fixed
// owners and modes, and nothing else varies.
//
//	go run . -out DIR -version v0.1.0 -revision SHA -created 2026-11-25T00:00:00Z \
//	  -binary linux/amd64=PATH -binary linux/arm64=PATH \
//	  [-wait-binary linux/amd64=PATH -wait-binary linux/arm64=PATH] [-cmd pause]
//
// It writes DIR/oci (an OCI image layout), DIR/ontime-image.tar (the same
// layout as one tar, which `ctr images import` and `crane push` take) and
// DIR/digest (the index's digest), and prints the digest.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the image's user and group: distroless's "nonroot".
const User = "65532:65532"

// Entrypoint is the binary's path in the image.
const Entrypoint = "/ontime"

// WaitPath is where the image holds ontime-wait (cmd/ontime-wait), which
// the controller's EarlyStart pods run (internal/warmup.WaitCommand).
const WaitPath = "/ontime-wait"

// Options say what to build.
type Options struct {
	// Binaries maps a platform ("linux/amd64") to the path of the ontime
	// binary built for it.
	Binaries map[string]string
	// WaitBinaries maps a platform to the path of its ontime-wait binary:
	// given for the controller's image, not for the real node's pause
	// image.
	WaitBinaries map[string]string
	Version      string
	Revision     string
	Created      time.Time
	// Source is the repository's URL, for the source label.
	Source string
	// Cmd is the image's default arguments to the entrypoint: none for the
	// controller's image; "pause" for the pause image of the local
	// cluster's real node (hack/real-node.sh).
	Cmd []string
}

// Labels are the image's org.opencontainers.image.* labels.
func (o Options) Labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "ontime",
		"org.opencontainers.image.description": "Scheduled Kubernetes jobs that start on time: a CronJob-compatible controller with warm-up and spreading",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.created":     o.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.source":      o.Source,
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
}

func main() {
	opts := Options{Binaries: map[string]string{}, WaitBinaries: map[string]string{}}
	out := flag.String("out", "", "output directory")
	created := flag.String("created", "", "the image's creation time, RFC 3339 (make image passes the commit's)")
	flag.StringVar(&opts.Version, "version", "dev", "the version label")
	flag.StringVar(&opts.Revision, "revision", "", "the revision label (a commit)")
	flag.StringVar(&opts.Source, "source", "https://github.com/ontime-dev/ontime", "the source label")
	flag.Func("cmd", "a default argument of the entrypoint (repeat for more), such as pause", func(value string) error {
		opts.Cmd = append(opts.Cmd, value)
		return nil
	})
	flag.Func("binary", "PLATFORM=PATH, such as linux/arm64=bin/ontime-linux-arm64 (repeat per platform)", platformPath(opts.Binaries))
	flag.Func("wait-binary", "PLATFORM=PATH of ontime-wait, such as linux/arm64=bin/ontime-wait-linux-arm64 (repeat per platform)", platformPath(opts.WaitBinaries))
	flag.Parse()
	t, err := time.Parse(time.RFC3339, *created)
	if err != nil || *out == "" || len(opts.Binaries) == 0 {
		fmt.Fprintln(os.Stderr, "image: -out, -created (RFC 3339) and at least one -binary are required")
		os.Exit(2)
	}
	opts.Created = t
	digest, err := Write(*out, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Println(digest)
}

// platformPath reads a flag's PLATFORM=PATH into paths.
func platformPath(paths map[string]string) func(string) error {
	return func(value string) error {
		platform, path, ok := strings.Cut(value, "=")
		if !ok {
			return errors.New("want PLATFORM=PATH")
		}
		paths[platform] = path
		return nil
	}
}

// Write builds the image index and writes it to dir, returning its digest.
func Write(dir string, opts Options) (v1.Hash, error) {
	index, err := Build(opts)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := index.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	ociDir := filepath.Join(dir, "oci")
	if err := os.RemoveAll(ociDir); err != nil {
		return v1.Hash{}, err
	}
	if _, err := layout.Write(ociDir, index); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the OCI layout: %w", err)
	}
	if err := tarDir(ociDir, filepath.Join(dir, "ontime-image.tar"), opts.Created); err != nil {
		return v1.Hash{}, err
	}
	return digest, os.WriteFile(filepath.Join(dir, "digest"), []byte(digest.String()+"\n"), 0o644)
}

// Build returns the image index: one image per platform, in a fixed order.
func Build(opts Options) (v1.ImageIndex, error) {
	platforms := make([]string, 0, len(opts.Binaries))
	for platform := range opts.Binaries {
		platforms = append(platforms, platform)
	}
	sort.Strings(platforms)
	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for platform := range opts.WaitBinaries {
		if opts.Binaries[platform] == "" {
			return nil, fmt.Errorf("%s: an ontime-wait binary without an ontime binary", platform)
		}
	}
	for _, platform := range platforms {
		img, p, err := buildImage(platform, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", platform, err)
		}
		index = mutate.AppendManifests(index, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	return index, nil
}

func buildImage(platform string, opts Options) (v1.Image, *v1.Platform, error) {
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		return nil, nil, err
	}
	files := map[string]string{Entrypoint: opts.Binaries[platform]}
	copied := "COPY ontime " + Entrypoint
	if wait := opts.WaitBinaries[platform]; wait != "" {
		files[WaitPath] = wait
		copied += ", ontime-wait " + WaitPath
	}
	layerTar, err := binaryLayer(files, opts.Created)
	if err != nil {
		return nil, nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerTar)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, nil, err
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: opts.Created}, CreatedBy: "hack/tools/image: " + copied, Comment: opts.Version},
	})
	if err != nil {
		return nil, nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	config, err := img.ConfigFile()
	if err != nil {
		return nil, nil, err
	}
	config = config.DeepCopy()
	config.OS, config.Architecture, config.Variant = p.OS, p.Architecture, p.Variant
	config.Created = v1.Time{Time: opts.Created}
	config.Config = v1.Config{
		Entrypoint: []string{Entrypoint},
		Cmd:        opts.Cmd,
		User:       User,
		WorkingDir: "/",
		Labels:     opts.Labels(),
		Env:        []string{"PATH=/"},
	}
	img, err = mutate.ConfigFile(img, config)
	return img, p, err
}

// binaryLayer is a tar holding each file (its path in the image → the
// binary to copy there) in name order, owned by root and executable by
// everyone, dated created.
func binaryLayer(files map[string]string, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		content, err := os.ReadFile(files[name])
		if err != nil {
			return nil, err
		}
		header := &tar.Header{Name: strings.TrimPrefix(name, "/"), Mode: 0o755, Size: int64(len(content)),
			ModTime: created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(header); err != nil {
			return nil, err
		}
		if _, err := tw.Write(content); err != nil {
			return nil, err
		}
	}
	err := tw.Close()
	return buf.Bytes(), err
}

// tarDir writes the files under dir into one tar, in a fixed order, dated
// created.
func tarDir(dir, path string, created time.Time) error {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	for _, file := range files {
		content, err := os.ReadFile(file)
		if err != nil {
			return errors.Join(err, out.Close())
		}
		name, _ := filepath.Rel(dir, file)
		header := &tar.Header{Name: filepath.ToSlash(name), Mode: 0o644, Size: int64(len(content)), ModTime: created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(header); err != nil {
			return errors.Join(err, out.Close())
		}
		if _, err := tw.Write(content); err != nil {
			return errors.Join(err, out.Close())
		}
	}
	return errors.Join(tw.Close(), out.Close())
}
