package earlywait

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// runCLI runs args at 2026-11-22 10:00 UTC and returns the output and
// the exit code cmd/ontime-wait gives: 2 for an error in the command line.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), args, &stdout, &stderr, func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) })
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, new(UsageError)):
		return stdout.String(), stderr.String() + err.Error(), 2
	}
	return stdout.String(), stderr.String() + err.Error(), 1
}

// TestWaitSleepsUntilTheTime: the wait hands the parsed time to its
// clock and reports release.
func TestWaitSleepsUntilTheTime(t *testing.T) {
	var asked time.Time
	saved := sleepUntil
	sleepUntil = func(_ context.Context, at time.Time) error { asked = at; return nil }
	t.Cleanup(func() { sleepUntil = saved })
	stdout, _, code := runCLI(t, "--until", "2026-11-22T10:09:30+01:00")
	if code != 0 || !asked.Equal(time.Date(2026, 11, 22, 9, 9, 30, 0, time.UTC)) {
		t.Fatalf("exit %d, slept until %v", code, asked)
	}
	if stdout != "waiting until 2026-11-22T10:09:30+01:00 (0s from now)\nreleased\n" {
		t.Errorf("stdout %q", stdout)
	}
	sleepUntil = func(context.Context, time.Time) error { return context.Canceled }
	if _, stderr, code := runCLI(t, "--until", "2026-11-22T11:00:00Z"); code != 1 || !strings.Contains(stderr, "context canceled") {
		t.Errorf("interrupted: exit %d, stderr %q; want 1", code, stderr)
	}
}

// TestWaitThenExec: given a command after --, the wait looks it up
// first (a wrong one fails at once, before any wait), sleeps until the
// time, then replaces itself with the command, arguments as given.
func TestWaitThenExec(t *testing.T) {
	var events []string
	savedSleep, savedExec := sleepUntil, execCommand
	t.Cleanup(func() { sleepUntil, execCommand = savedSleep, savedExec })
	sleepUntil = func(_ context.Context, at time.Time) error {
		events = append(events, "slept until "+at.Format(time.RFC3339))
		return nil
	}
	execCommand = func(path string, argv, env []string) error {
		events = append(events, fmt.Sprintf("exec %s %q with %d env", path, argv, len(env)))
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "--until", "2026-11-22T10:05:00Z", "--", self, "--flag", "$(VAR)", "--")
	want := []string{"slept until 2026-11-22T10:05:00Z", fmt.Sprintf("exec %s %q with %d env", self, []string{self, "--flag", "$(VAR)", "--"}, len(os.Environ()))}
	if code != 0 || !reflect.DeepEqual(events, want) {
		t.Fatalf("exit %d (stderr %q), events %q; want %q", code, stderr, events, want)
	}
	if stdout != "" || stderr != "waiting until 2026-11-22T10:05:00Z (5m0s from now)\nreleased: running "+self+"\n" {
		t.Errorf("stdout %q, stderr %q; want the command's stdout untouched", stdout, stderr)
	}

	for _, args := range [][]string{
		{"--until", "2026-11-22T10:05:00Z", "--", "no-such-command-here"},
		{"--until", "2026-11-22T10:05:00Z", "report"},
		{"--until", "10:05", "--", self},
		{"--", self},
		{"--until", "2026-11-22T10:05:00Z", "--no-such-flag", "--", self},
		{"--until", "2026-11-22T10:05:00Z", "--install", filepath.Join(t.TempDir(), "ontime"), "--", self},
	} {
		events = nil
		if _, stderr, code := runCLI(t, args...); code != 2 || len(events) > 0 {
			t.Errorf("%q: exit %d (stderr %q), events %q; want 2 and no wait", args, code, stderr, events)
		}
	}
}

// TestWaitInstall: --install copies the running binary, executable by
// anyone, and exits without waiting.
func TestWaitInstall(t *testing.T) {
	saved := sleepUntil
	t.Cleanup(func() { sleepUntil = saved })
	sleepUntil = func(context.Context, time.Time) error { t.Error("--install waited"); return nil }
	path := filepath.Join(t.TempDir(), "bin", "ontime")
	stdout, stderr, code := runCLI(t, "--until", "2026-11-22T10:05:00Z", "--install", path)
	if code != 0 || stdout != "installed "+path+"; the containers wait in it until 2026-11-22T10:05:00Z\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(self)
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("the copy differs from %s (%d bytes, want %d): %v", self, len(got), len(want), err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("mode %v (%v), want 0755", info.Mode(), err)
	}
}
