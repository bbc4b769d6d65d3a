// Command releasenotes prints the release notes of one version: its dated
// section of CHANGELOG.md, and nothing else of the file. make release
// writes them into the release's directory, and the release workflow
// publishes them as the forge's release notes.
//
//	go run ./hack/releasenotes -version v0.1.0 [-changelog CHANGELOG.md]
//
// A version with no section, or with one that is not dated
// ("## [0.1.0] - 2026-11-29"), is refused: a release's notes are written
// before it is cut.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

func main() {
	version := flag.String("version", "", "the release, such as v0.1.0")
	changelog := flag.String("changelog", "CHANGELOG.md", "the changelog to read")
	flag.Parse()
	data, err := os.ReadFile(*changelog)
	if err == nil {
		var notes string
		if notes, err = Notes(string(data), *version); err == nil {
			fmt.Print(notes)
			return
		}
	}
	fmt.Fprintf(os.Stderr, "releasenotes: %v\n", err)
	os.Exit(1)
}

// heading is a version's section heading, as Keep a Changelog writes it:
// "## [0.1.0] - 2026-11-29". "## Unreleased" is a heading too, undated.
var heading = regexp.MustCompile(`^## \[?([^\]\s]+)\]?(?: - (\S+))?\s*$`)

// Section is one "## " section of a changelog.
type Section struct {
	Version string // "0.1.0", or "Unreleased"
	Date    string // as written; empty when undated
	Body    string // the lines after the heading, up to the next section
}

// Sections are the changelog's sections, newest (first written) first.
func Sections(changelog string) []Section {
	var sections []Section
	for line := range strings.Lines(changelog) {
		if m := heading.FindStringSubmatch(strings.TrimRight(line, "\n")); m != nil {
			sections = append(sections, Section{Version: m[1], Date: m[2]})
			continue
		}
		if n := len(sections); n > 0 {
			sections[n-1].Body += line
		}
	}
	return sections
}

// Released is the newest section with a date: the version the install
// commands name.
func Released(changelog string) (Section, error) {
	for _, s := range Sections(changelog) {
		if s.Date != "" {
			return s, nil
		}
	}
	return Section{}, fmt.Errorf("no dated section (\"## [X.Y.Z] - YYYY-MM-DD\") in the changelog")
}

// Notes are the release notes of version (v0.1.0 or 0.1.0): its section's
// body, with a title. The section must be dated with a real date.
func Notes(changelog, version string) (string, error) {
	want := strings.TrimPrefix(version, "v")
	if want == "" {
		return "", fmt.Errorf("-version is required, such as v0.1.0")
	}
	for _, s := range Sections(changelog) {
		if s.Version != want {
			continue
		}
		if _, err := time.Parse(time.DateOnly, s.Date); err != nil {
			return "", fmt.Errorf("the section of %s is dated %q, want a date such as \"## [%s] - 2026-11-29\"", version, s.Date, want)
		}
		body := strings.TrimSpace(s.Body)
		if body == "" {
			return "", fmt.Errorf("the section of %s (%s) is empty", version, s.Date)
		}
		return fmt.Sprintf("ontime %s, released %s.\n\n%s\n", version, s.Date, body), nil
	}
	return "", fmt.Errorf("the changelog has no section for %s: add \"## [%s] - YYYY-MM-DD\" above the previous release's", version, want)
}
