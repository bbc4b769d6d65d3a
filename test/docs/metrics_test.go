package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/test/framework"
)

// metricName is a metric ontime defines: a string literal that names one.
var metricName = regexp.MustCompile(`"(ontime_[a-z_]+)"`)

// TestEveryMetricIsDocumented fails when a metric the code defines has no
// row in docs/operations.md's metrics table (the metrics reference), and
// when a row names a metric the code no longer has.
func TestEveryMetricIsDocumented(t *testing.T) {
	root := framework.RepoRoot()
	rows := namesOnPage(t, "operations.md", "(?m)^\\| `(ontime_[a-z_]+)[{`]")
	defined := namesInCode(t, filepath.Join(root, "internal"), metricName, func(path string) bool {
		return strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go")
	})
	if len(defined) < 7 {
		t.Fatalf("found %d metrics in internal/: the search is broken", len(defined))
	}
	for name := range defined {
		if !rows[name] {
			t.Errorf("metric %s has no row in docs/operations.md's metrics table", name)
		}
	}
	for name := range rows {
		if !defined[name] {
			t.Errorf("docs/operations.md documents %s, which the code does not define", name)
		}
	}
}

// namesInCode returns what pattern's first group matches in the files
// below dir that want takes.
func namesInCode(t *testing.T, dir string, pattern *regexp.Regexp, want func(path string) bool) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !want(path) {
			return err
		}
		source, err := os.ReadFile(path)
		for _, m := range pattern.FindAllStringSubmatch(string(source), -1) {
			names[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// namesOnPage reads docs/PAGE and returns what pattern's first group
// matches in it.
func namesOnPage(t *testing.T, page, pattern string) map[string]bool {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(string(text), -1) {
		names[m[1]] = true
	}
	return names
}

// queriedMetric is an ontime metric a PromQL query names, without a
// histogram's series suffix.
var queriedMetric = regexp.MustCompile(`(ontime_[a-z_]+?)(?:_bucket|_count|_sum)?\b`)

// TestEveryQueriedMetricIsDefined fails when an alert of
// config/prometheus/rules.yaml or a panel of the dashboard names an
// ontime metric the code does not define. (The end-to-end test checks the
// same against a running controller's /metrics, for every family it
// exports without a concurrency group or a Backfill.)
func TestEveryQueriedMetricIsDefined(t *testing.T) {
	root := framework.RepoRoot()
	defined := namesInCode(t, filepath.Join(root, "internal"), metricName, func(path string) bool {
		return strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go")
	})
	queried := 0
	for _, file := range []string{"config/prometheus/rules.yaml", "config/prometheus/dashboard.json"} {
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range queriedMetric.FindAllStringSubmatch(string(text), -1) {
			queried++
			if !defined[m[1]] {
				t.Errorf("%s names %s, which the code does not define", file, m[0])
			}
		}
	}
	if queried < 10 {
		t.Fatalf("found %d ontime metrics in the rules and the dashboard: the search is broken", queried)
	}
}
