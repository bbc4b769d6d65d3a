// Package earlywait is what EarlyStart pods run: wait until a run's time,
// then exit or become the run's command. It imports the standard library
// only, so that the binary built from it (cmd/ontime-wait, about 2 MB) is
// what an EarlyStart pod copies and runs: its init container has 10m of
// CPU, in which starting and copying the 57 MB ontime binary took 16 to
// 28 s on the real node (docs/performance.md, "EarlyStart's wait binary").
package earlywait

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Usage is the command line both `ontime-wait` and `ontime wait` take.
const Usage = "--until TIME [--install PATH | -- COMMAND [ARG...]]"

// UsageError is an error in the command line: the caller exits with 2.
type UsageError struct{ msg string }

func (e UsageError) Error() string { return e.msg }

func usage(format string, args ...any) error { return UsageError{fmt.Sprintf(format, args...)} }

// Run waits as args say: until --until, then exits, or, given a command
// after --, replaces this process with it (same process: the command gets
// the container's signals and its exit code is the container's). With
// --install PATH it copies this binary to PATH and returns at once, for
// the run's containers to wait in. A command is looked up before the wait,
// so that a wrong one fails now, not at the run's time. The wall clock
// decides (checked at least every second), so a clock NTP corrects
// meanwhile is obeyed; now only says how long the wait will be.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, now func() time.Time) error {
	flags := flag.NewFlagSet("ontime-wait", flag.ContinueOnError)
	flags.SetOutput(stderr)
	until := flags.String("until", "", "when to exit or run the command, RFC 3339")
	install := flags.String("install", "", "copy this binary to `PATH` and exit at once, for the run's containers to wait in")
	if err := flags.Parse(args); err != nil {
		return usage("%v (usage: %s)", err, Usage)
	}
	at, err := time.Parse(time.RFC3339, *until)
	if err != nil {
		return usage("--until %q: not an RFC 3339 time such as 2026-11-24T10:00:00Z", *until)
	}
	command := flags.Args()
	if len(command) > 0 && !afterDash(args, command) {
		return usage("%q: the command to run at --until goes after --, as in: --until %s -- %s", command[0], *until, command[0])
	}
	if *install != "" {
		if len(command) > 0 {
			return usage("--install %q: copies this binary and exits; it runs no command", *install)
		}
		if err := installSelf(*install); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "installed %s; the containers wait in it until %s\n", *install, at.Format(time.RFC3339))
		return nil
	}
	var path string
	if len(command) > 0 {
		if path, err = exec.LookPath(command[0]); err != nil {
			return usage("command %q: %v", command[0], err)
		}
		// The command's output is the container's stdout: ours goes
		// to stderr.
		stdout = stderr
	}
	fmt.Fprintf(stdout, "waiting until %s (%s from now)\n", at.Format(time.RFC3339), max(at.Sub(now()), 0).Round(time.Second))
	if err := sleepUntil(ctx, at); err != nil {
		return err
	}
	if path == "" {
		fmt.Fprintln(stdout, "released")
		return nil
	}
	fmt.Fprintf(stdout, "released: running %s\n", path)
	return execCommand(path, command, os.Environ())
}

// afterDash says whether command, what the flags left of args, came after
// a "--" (the flag package drops it).
func afterDash(args, command []string) bool {
	at := len(args) - len(command) - 1
	return at >= 0 && args[at] == "--"
}

// sleepUntil returns at t by the wall clock, or when ctx ends; tests
// replace it.
var sleepUntil = func(ctx context.Context, t time.Time) error {
	for {
		// Round(0) drops the monotonic reading: the wall clock decides.
		remaining := t.Sub(time.Now().Round(0))
		if remaining <= 0 {
			return nil
		}
		timer := time.NewTimer(min(remaining, time.Second))
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// execCommand replaces this process with the command; tests replace it.
var execCommand = syscall.Exec

// installSelf copies the running binary to path, executable by any user
// (the run's containers may run as any user).
func installSelf(path string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	from, err := os.Open(self)
	if err != nil {
		return err
	}
	defer from.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	to, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(to, from); err != nil {
		return errors.Join(fmt.Errorf("copying %s to %s: %w", self, path, err), to.Close())
	}
	if err := to.Close(); err != nil {
		return err
	}
	// The mode asked of OpenFile is reduced by the umask.
	return os.Chmod(path, 0o755)
}
