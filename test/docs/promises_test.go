package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/test/framework"
)

// promiseSections are the sections of a page whose every list item is a
// promise that names the tests keeping it.
var promiseSections = map[string][]string{
	"concurrency-groups.md": {"How a run waits and starts", "What happens when…"},
	"observability.md":      {"What the deadline promises"},
}

// testName is a test or benchmark named in backquotes.
var testName = regexp.MustCompile("`((?:Test|Benchmark)[A-Za-z0-9_]+)`")

// listItem begins an item of a Markdown list, bulleted or numbered.
var listItem = regexp.MustCompile(`^(?:- |\d+\. )`)

// TestPromisesNameTheirTests fails when a list item of a promise section
// names no test, or names a test or benchmark that no _test.go file of
// the repository declares (renamed or removed): a promise cannot drift
// from the code unseen.
func TestPromisesNameTheirTests(t *testing.T) {
	declared := declaredTests(t)
	for page, sections := range promiseSections {
		text, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		for _, section := range sections {
			items := listItems(string(text), section)
			if len(items) < 3 {
				t.Errorf("docs/%s, %q: %d list items; the section is gone or renamed", page, section, len(items))
			}
			for _, item := range items {
				names := testName.FindAllStringSubmatch(item, -1)
				if len(names) == 0 {
					t.Errorf("docs/%s, %q: names no test:\n%s", page, section, item)
				}
				for _, name := range names {
					if !declared[name[1]] {
						t.Errorf("docs/%s, %q: names %s, which no _test.go file declares", page, section, name[1])
					}
				}
			}
		}
	}
}

// listItems are the top-level list items of the section headed heading
// (## or ###), each with its continuation lines.
func listItems(page, heading string) []string {
	var items []string
	in := false
	for line := range strings.Lines(page) {
		if strings.HasPrefix(line, "#") {
			in = strings.TrimSpace(strings.TrimLeft(line, "#")) == heading
			continue
		}
		switch {
		case !in:
		case listItem.MatchString(line):
			items = append(items, line)
		case len(items) > 0 && strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "":
			items[len(items)-1] += line
		}
	}
	return items
}

// testDeclaration declares a test or benchmark.
var testDeclaration = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark)[A-Za-z0-9_]+)\(`)

// declaredTests are the names of the Test and Benchmark functions that
// the repository's _test.go files declare, whatever their build tags.
func declaredTests(t *testing.T) map[string]bool {
	t.Helper()
	return namesInCode(t, framework.RepoRoot(), testDeclaration, func(path string) bool { return strings.HasSuffix(path, "_test.go") })
}
