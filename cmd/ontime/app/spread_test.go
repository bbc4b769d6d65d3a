package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const hourlyCronJobs = `# two reports
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report-a   # team a
  namespace: reports
spec:
  schedule: "H * * * *"
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report-b
  namespace: reports
spec:
  schedule: "H * * * *"
`

func TestSpreadFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "reports.yaml")
	if err := os.WriteFile(path, []byte(hourlyCronJobs), 0o640); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "spread", "-f", dir, "-o", "json-map")
	var preview map[string]string
	if code != 0 || json.Unmarshal([]byte(stdout), &preview) != nil || len(preview) != 2 {
		t.Fatalf("-o json-map: exit %d, %q, %q", code, stdout, stderr)
	}
	if written, _ := os.ReadFile(path); string(written) != hourlyCronJobs {
		t.Fatal("-o json-map wrote the file")
	}

	stdout, stderr, code = runCLI(t, "spread", "-f", dir)
	if code != 0 || !strings.Contains(stdout, "reports/report-a") {
		t.Fatalf("exit %d, %q, %q", code, stdout, stderr)
	}
	written, _ := os.ReadFile(path)
	for key, schedule := range preview {
		if strings.Contains(schedule, "H") || !strings.Contains(string(written), `schedule: "`+schedule+`"`) {
			t.Errorf("%s: %q is not in the written file:\n%s", key, schedule, written)
		}
	}
	if preview["reports/report-a"] == preview["reports/report-b"] {
		t.Errorf("both reports at %q", preview["reports/report-a"])
	}
	if !strings.Contains(string(written), "# team a") {
		t.Errorf("the comment is gone:\n%s", written)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Errorf("permissions %v", info.Mode().Perm())
	}
}

// TestSpreadRunsInFlight: with --run-duration the busiest minute counts
// runs in flight and is reported on stderr; --limit fails (exit 1) when it
// is above the limit, after printing the schedules.
func TestSpreadRunsInFlight(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "reports.yaml"), []byte(hourlyCronJobs), 0o600); err != nil {
		t.Fatal(err)
	}
	// Two hourly runs of 40 minutes: 80 run-minutes an hour, so some
	// minute holds both.
	stdout, stderr, code := runCLI(t, "spread", "-f", dir, "-o", "json-map", "--run-duration", "40m", "--limit", "2")
	if code != 0 || !strings.Contains(stderr, "busiest minute: 2 runs in flight at ") || !strings.Contains(stderr, "(no placement can have fewer than 2)") {
		t.Fatalf("limit 2: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "spread", "-f", dir, "-o", "json-map", "--run-duration", "40m", "--limit", "1")
	if code != 1 || !strings.Contains(stdout, "reports/report-a") ||
		!strings.Contains(stderr, "the busiest minute has 2 runs in flight, above --limit 1: runs will wait in the concurrency group") {
		t.Fatalf("limit 1: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// 30-minute runs fit one after the other.
	_, stderr, code = runCLI(t, "spread", "-f", dir, "-o", "json-map", "--run-duration", "30m", "--limit", "1")
	if code != 0 || !strings.Contains(stderr, "busiest minute: 1 runs in flight") {
		t.Fatalf("30m, limit 1: exit %d, stderr %q", code, stderr)
	}
	// Without a duration or limit nothing is added to stderr.
	if _, stderr, code := runCLI(t, "spread", "-f", dir, "-o", "json-map"); code != 0 || stderr != "" {
		t.Fatalf("plain: exit %d, stderr %q", code, stderr)
	}
}

func TestSpreadBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(hourlyCronJobs, `"H * * * *"`, `"H(0-70) * * * *"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"spread", "-f", bad}, `bad.yaml: CronJob reports/report-a: spec.schedule "H(0-70) * * * *": cron: minute "H(0-70)": range must lie within 0-59`},
		{[]string{"spread", "-f", filepath.Join(dir, "missing")}, "-f " + filepath.Join(dir, "missing") + ": "},
		{[]string{"spread", "-f", dir, "-o", "xml"}, `-o "xml": with -f, must be table, json, yaml or json-map`},
		{[]string{"spread", "-f", dir, "--every", "30m", "--keys", "a"}, "none of the others can be"},
		{[]string{"spread"}, "at least one of the flags in the group [keys filename] is required"},
		{[]string{"spread", "-f", dir, "--run-duration", "25h"}, "--run-duration 25h0m0s: must be above 0 and at most 24h"},
		{[]string{"spread", "-f", dir, "--limit", "-1"}, "--limit -1: must be a concurrency group's maxActive, at least 1"},
		{[]string{"spread", "--every", "30m", "--keys", "a", "--limit", "3"}, "none of the others can be"},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, stderr, tt.stderr)
		}
	}
}

func TestSpreadKeysJSONMap(t *testing.T) {
	stdout, _, code := runCLI(t, "spread", "--every", "30m", "--keys", "7,20", "-o", "json-map")
	var got map[string]string
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil {
		t.Fatalf("exit %d: %q", code, stdout)
	}
	if len(got) != 2 || got["7"] == "" || got["20"] == "" || got["7"] == got["20"] {
		t.Errorf("json-map %v", got)
	}
}
