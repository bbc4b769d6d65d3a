package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryIsCurrent fails when docs/install.md's table or the
// chart's kubeVersion say something else than test/compat/results.tsv.
func TestRepositoryIsCurrent(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"../../docs/install.md": "install.md", "../../charts/ontime/Chart.yaml": "Chart.yaml"}
	for from, to := range files {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run("../../test/compat/results.tsv", filepath.Join(dir, "install.md"), filepath.Join(dir, "Chart.yaml")); err != nil {
		t.Fatal(err)
	}
	for from, to := range files {
		want, _ := os.ReadFile(filepath.Join(dir, to))
		got, _ := os.ReadFile(from)
		if string(got) != string(want) {
			t.Errorf("%s does not match test/compat/results.tsv: run go run ./hack/compattable test/compat/results.tsv docs/install.md charts/ontime/Chart.yaml", from)
		}
	}
}

func TestSetKubeVersion(t *testing.T) {
	chart := "name: ontime\nkubeVersion: \">=1.30.0-0\"\n"
	row := func(version, suite, outcome string) result {
		return result{version, suite, outcome, "1", "2026-11-29", "abc"}
	}
	tests := []struct {
		name    string
		results []result
		want    string
	}{
		{"every release passed", []result{row("v1.37.2", "envtest", "passed"), row("v1.34.4", "envtest", "passed"), row("v1.35.4", "envtest", "passed")}, `kubeVersion: ">=1.34.0-0"`},
		{"a release that failed one suite is not claimed", []result{row("v1.37.2", "envtest", "passed"), row("v1.34.4", "envtest", "passed"), row("v1.34.4", "kwok-smoke", "failed")}, `kubeVersion: ">=1.37.0-0"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := setKubeVersion(chart, tc.results)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %s", got, tc.want)
			}
		})
	}
	if _, err := setKubeVersion(chart, []result{row("v1.37.2", "envtest", "failed")}); err == nil {
		t.Error("no release passed, and no error")
	}
}

func TestRenderTable(t *testing.T) {
	table := renderTable([]result{
		{"v1.34.4", "envtest", "passed", "300", "2026-11-29", "abc"},
		{"v1.37.2", "envtest", "passed", "280", "2026-11-29", "abc"},
		{"v1.37.2", "kwok-smoke", "failed", "400", "2026-11-29", "abc"},
	})
	lines := strings.Split(strings.TrimSpace(table), "\n")
	want := []string{
		"| v1.37.2 | passed (280 s, 2026-11-29, abc) | failed (400 s, 2026-11-29, abc) |",
		"| v1.34.4 | passed (300 s, 2026-11-29, abc) | not run |",
	}
	if len(lines) != 4 || lines[2] != want[0] || lines[3] != want[1] {
		t.Errorf("got\n%s\nwant rows\n%s", table, strings.Join(want, "\n"))
	}
}
