package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeConvertible writes the hourly CronJobs and a Service into a
// directory and returns it and the CronJobs' file.
func writeConvertible(t *testing.T) (dir, cronJobs string) {
	t.Helper()
	dir = t.TempDir()
	cronJobs = filepath.Join(dir, "reports.yaml")
	service := filepath.Join(dir, "service.yaml")
	serviceYAML := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
	if err := os.WriteFile(cronJobs, []byte(hourlyCronJobs), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(service, []byte(serviceYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, cronJobs
}

func TestConvert(t *testing.T) {
	dir, cronJobs := writeConvertible(t)

	stdout, stderr, code := runCLI(t, "convert", "-f", dir)
	if code != 0 || strings.Count(stdout, "kind: ScheduledJob") != 2 || strings.Contains(stdout, "kind: Service") {
		t.Fatalf("to stdout: exit %d, %q, %q", code, stdout, stderr)
	}
	if written, _ := os.ReadFile(cronJobs); string(written) != hourlyCronJobs {
		t.Fatal("without --in-place the file changed")
	}

	stdout, stderr, code = runCLI(t, "convert", "-f", dir, "--in-place", "-o", "json")
	// One line per object: its file, and what convert.Converted says.
	var report []struct {
		File string `json:"file"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &report) != nil || len(report) != 2 {
		t.Fatalf("--in-place -o json: exit %d, %q, %q", code, stdout, stderr)
	}
	written, _ := os.ReadFile(cronJobs)
	if !strings.Contains(string(written), "# team a") || strings.Contains(string(written), "batch/v1") {
		t.Errorf("the file is not the ScheduledJobs with their comments:\n%s", written)
	}
	if info, _ := os.Stat(cronJobs); info.Mode().Perm() != 0o640 {
		t.Errorf("permissions %v", info.Mode().Perm())
	}
}

func TestConvertRefuses(t *testing.T) {
	dir, cronJobs := writeConvertible(t)
	if _, stderr, code := runCLI(t, "convert", "-f", dir, "--in-place"); code != 0 {
		t.Fatalf("to ScheduledJobs: exit %d, %q", code, stderr)
	}
	written, _ := os.ReadFile(cronJobs)
	// H has no CronJob form: nothing is written, and the error names it.
	_, stderr, code := runCLI(t, "convert", "-f", dir, "--to", "cronjob", "--in-place")
	if code != exitBadInput || !strings.Contains(stderr, `spec.schedule "H * * * *"`) {
		t.Errorf("H to a CronJob: exit %d, %q", code, stderr)
	}
	if again, _ := os.ReadFile(cronJobs); string(again) != string(written) {
		t.Error("a failed conversion wrote the file")
	}
	if _, stderr, code = runCLI(t, "convert", "-f", dir, "--to", "job"); code != exitBadInput || !strings.Contains(stderr, `--to "job"`) {
		t.Errorf("--to job: exit %d, %q", code, stderr)
	}
}

func TestOutputFormats(t *testing.T) {
	for _, args := range [][]string{
		{"next", "0 9 * * *", "--from", "2026-11-25T00:00:00Z", "--count", "1"},
		{"explain", "0 9 * * *"},
		{"prime", "0 9 * * *", "--lead", "10m"},
		{"version"},
		{"spread", "--every", "30m", "--keys", "a,b"},
	} {
		t.Run(args[0], func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append(args, "-o", "json")...)
			var decoded any
			if code != 0 || json.Unmarshal([]byte(stdout), &decoded) != nil {
				t.Errorf("-o json: exit %d, %q, %q", code, stdout, stderr)
			}
			stdout, stderr, code = runCLI(t, append(args, "-o", "yaml")...)
			if code != 0 || strings.HasPrefix(strings.TrimSpace(stdout), "{") || strings.HasPrefix(strings.TrimSpace(stdout), "[") || stdout == "" {
				t.Errorf("-o yaml: exit %d, %q, %q", code, stdout, stderr)
			}
			if _, stderr, code = runCLI(t, append(args, "-o", "xml")...); code != exitBadInput || !strings.Contains(stderr, `-o "xml"`) {
				t.Errorf("-o xml: exit %d, %q", code, stderr)
			}
		})
	}
}

// TestInternalCommandsHidden: the commands that images run (wait in
// EarlyStart pods, pause as a pause container) work but are not listed by
// --help.
func TestInternalCommandsHidden(t *testing.T) {
	stdout, _, code := runCLI(t, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, hidden := range []string{"\n  wait ", "\n  pause "} {
		if strings.Contains(stdout, hidden) {
			t.Errorf("--help lists %q:\n%s", strings.TrimSpace(hidden), stdout)
		}
	}
	if !strings.Contains(stdout, "\n  convert ") {
		t.Errorf("--help lists no convert, so the check sees nothing:\n%s", stdout)
	}
	if _, _, code := runCLI(t, "wait", "--until", "2000-01-01T00:00:00Z"); code != 0 {
		t.Errorf("hidden wait: exit %d, want it to run", code)
	}
}
