package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const changelog = `# Changelog

Intro.

## Unreleased

### Added
- next thing

## [0.2.0] - 2026-12-24

### Fixed
- a bug

## [0.1.0] - 2026-11-29

### Added
- the first thing

## [0.0.9] - soon
- undated
`

func TestNotes(t *testing.T) {
	tests := []struct {
		version string
		want    string // "" when refused
		refusal string
	}{
		{version: "v0.2.0", want: "ontime v0.2.0, released 2026-12-24.\n\n### Fixed\n- a bug\n"},
		{version: "0.1.0", want: "ontime 0.1.0, released 2026-11-29.\n\n### Added\n- the first thing\n"},
		{version: "v0.3.0", refusal: "no section for v0.3.0"},
		{version: "v0.0.9", refusal: `dated "soon"`},
		{version: "Unreleased", refusal: `dated ""`},
		{version: "", refusal: "-version is required"},
	}
	for _, tc := range tests {
		got, err := Notes(changelog, tc.version)
		switch {
		case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
			t.Errorf("%q: error %v, want one saying %q", tc.version, err, tc.refusal)
		case tc.refusal == "" && err != nil:
			t.Errorf("%q: %v", tc.version, err)
		case got != tc.want:
			t.Errorf("%q: notes\n%q\nwant\n%q", tc.version, got, tc.want)
		}
	}
}

func TestReleased(t *testing.T) {
	got, err := Released(changelog)
	if err != nil || got.Version != "0.2.0" {
		t.Errorf("Released: %+v, %v; want 0.2.0", got, err)
	}
	if _, err := Released("# Changelog\n\n## Unreleased\n- x\n"); err == nil {
		t.Error("a changelog with no dated section has a release")
	}
}

// pins are the ways the docs name a release: Helm's --version, the
// forge's download links, the image and the chart by tag.
var pins = []*regexp.Regexp{
	regexp.MustCompile(`--version (\d+\.\d+\.\d+)\b`),
	regexp.MustCompile(`releases/download/v(\d+\.\d+\.\d+)/`),
	regexp.MustCompile(`ghcr\.io/ontime-dev/ontime:v(\d+\.\d+\.\d+)\b`),
	regexp.MustCompile(`ghcr\.io/ontime-dev/charts/ontime:(\d+\.\d+\.\d+)\b`),
}

// TestInstallCommandsNameTheRelease: every install command of the README,
// the docs and the default manifests names the release of CHANGELOG.md's
// newest dated section, and that section makes release notes.
func TestInstallCommandsNameTheRelease(t *testing.T) {
	data, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	released, err := Released(string(data))
	if err != nil {
		t.Fatal(err)
	}
	notes, err := Notes(string(data), "v"+released.Version)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(notes, "\n## ") {
		t.Errorf("the notes of %s hold another section:\n%s", released.Version, notes)
	}
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md", "../../config/manager/manager.yaml", "../../charts/ontime/README.md")
	found := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, pin := range pins {
			for _, m := range pin.FindAllStringSubmatch(string(text), -1) {
				found++
				if m[1] != released.Version {
					t.Errorf("%s: %q names %s; CHANGELOG.md's newest release is %s", strings.TrimPrefix(file, "../../"), m[0], m[1], released.Version)
				}
			}
		}
	}
	if found == 0 {
		t.Error("no install command names a release: the patterns no longer match the docs")
	}
}
