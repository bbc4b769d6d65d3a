// Command krew-manifest writes the krew plugin manifest of a release: one
// platform entry per kubectl-ontime archive in the release directory, with
// its checksum. make release runs it.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// releaseURL is where a release's files are published.
const releaseURL = "https://github.com/ontime-dev/ontime/releases/download"

var manifest = template.Must(template.New("krew").Parse(`apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: ontime
spec:
  version: {{ .Version }}
  homepage: https://github.com/ontime-dev/ontime
  shortDescription: Schedules, next runs and "run now" for ScheduledJobs and CronJobs
  description: |
    The ontime command-line tool as a kubectl plugin: kubectl ontime next,
    explain, prime and spread read cron schedules (H, L, W, # and time
    zones), kubectl ontime trigger runs a ScheduledJob now, kubectl ontime
    convert turns CronJob manifests into ScheduledJobs.
  platforms:
{{- range .Platforms }}
  - selector:
      matchLabels:
        os: {{ .OS }}
        arch: {{ .Arch }}
    uri: {{ .URI }}
    sha256: {{ .SHA256 }}
    bin: kubectl-ontime
{{- end }}
`))

type platform struct{ OS, Arch, URI, SHA256 string }

func main() {
	version := flag.String("version", "", "the release, such as v0.1.0")
	dir := flag.String("dir", "dist", "the release directory holding kubectl-ontime-OS-ARCH.tar.gz")
	flag.Parse()
	if err := write(os.Stdout, *version, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "krew-manifest:", err)
		os.Exit(1)
	}
}

func write(out io.Writer, version, dir string) error {
	if version == "" {
		return fmt.Errorf("-version is required")
	}
	archives, err := filepath.Glob(filepath.Join(dir, "kubectl-ontime-*-*.tar.gz"))
	if err != nil || len(archives) == 0 {
		return fmt.Errorf("no kubectl-ontime-OS-ARCH.tar.gz in %s", dir)
	}
	var platforms []platform
	for _, archive := range archives {
		name := filepath.Base(archive)
		osArch := strings.TrimSuffix(strings.TrimPrefix(name, "kubectl-ontime-"), ".tar.gz")
		goos, arch, _ := strings.Cut(osArch, "-")
		sum, err := sha256File(archive)
		if err != nil {
			return err
		}
		platforms = append(platforms, platform{OS: goos, Arch: arch, URI: releaseURL + "/" + version + "/" + name, SHA256: sum})
	}
	return manifest.Execute(out, struct {
		Version   string
		Platforms []platform
	}{version, platforms})
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
