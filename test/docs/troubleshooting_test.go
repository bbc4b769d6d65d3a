// Package docs checks that the user documentation keeps up with the code:
// every condition and event reason, and every alert, has its section in
// docs/troubleshooting.md, and each alert's runbook_url points there;
// every metric has its row in docs/operations.md; config/samples run on
// any cluster; docs/getting-started.md's commands, which the real-node
// test runs, cover what the page promises; and each promise of
// docs/concurrency-groups.md names the tests that keep it.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ontime-dev/ontime/test/framework"
)

const runbookBase = "https://github.com/ontime-dev/ontime/blob/main/docs/troubleshooting.md#"

// TestEveryReasonAndAlertHasASection fails when a reason constant of the
// API or an alert of config/prometheus/rules.yaml has no "### NAME"
// section in docs/troubleshooting.md, when a section names neither, and
// when an alert's runbook_url is not its section.
func TestEveryReasonAndAlertHasASection(t *testing.T) {
	root := framework.RepoRoot()
	sections := namesOnPage(t, "troubleshooting.md", `(?m)^### (\w+)\s*$`)
	reasons := reasonsOf(t, filepath.Join(root, "api", "v1alpha1"))
	alerts := alertsOf(t, filepath.Join(root, "config", "prometheus", "rules.yaml"))
	if len(reasons) < 20 || len(alerts) < 5 {
		t.Fatalf("found %d reasons and %d alerts: the check does not see them", len(reasons), len(alerts))
	}
	for reason := range reasons {
		if !sections[reason] {
			t.Errorf("reason %s has no section in docs/troubleshooting.md", reason)
		}
	}
	for alert, runbook := range alerts {
		if !sections[alert] {
			t.Errorf("alert %s has no section in docs/troubleshooting.md", alert)
		}
		if want := runbookBase + strings.ToLower(alert); runbook != want {
			t.Errorf("alert %s: runbook_url %q, want %q", alert, runbook, want)
		}
	}
	for section := range sections {
		if _, ok := alerts[section]; !ok && !reasons[section] {
			t.Errorf("section %s names no reason or alert (renamed or removed?)", section)
		}
	}
}

// reasonsOf are the values of the constants named Reason… in dir's Go
// files.
func reasonsOf(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok || len(spec.Names) != 1 || len(spec.Values) != 1 || !strings.HasPrefix(spec.Names[0].Name, "Reason") {
				return true
			}
			if lit, ok := spec.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				value, _ := strconv.Unquote(lit.Value)
				reasons[value] = true
			}
			return true
		})
	}
	return reasons
}

// alertsOf are the alerts of a PrometheusRule, each with its runbook_url.
func alertsOf(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert       string            `json:"alert"`
					Annotations map[string]string `json:"annotations"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &rule); err != nil {
		t.Fatal(err)
	}
	alerts := map[string]string{}
	for _, group := range rule.Spec.Groups {
		for _, r := range group.Rules {
			if r.Alert != "" {
				alerts[r.Alert] = r.Annotations["runbook_url"]
			}
		}
	}
	return alerts
}
