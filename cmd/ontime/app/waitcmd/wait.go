// Package waitcmd is ontime wait, the command EarlyStart pods run: it
// waits until a run's time, then exits or becomes the run's command.
package waitcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// NewCommand is `ontime wait`, which runs inside EarlyStart pods; now is
// its clock (what it prints of the wait).
func NewCommand(now func() time.Time) *cobra.Command {
	var until, install string
	cmd := &cobra.Command{
		Use:   "wait --until TIME [--install PATH | -- COMMAND [ARG...]]",
		Short: "Wait until a time, then exit or run a command (EarlyStart warm-up)",
		// Run inside EarlyStart pods, not by people: kept out of --help.
		Hidden: true,
		Long: `Wait until an RFC 3339 time, then exit 0, or, given a command after --,
replace itself with that command (exec: same process, so the command gets
the container's signals and its exit code is the container's).

EarlyStart warm-up creates a run's pods a lead before the run and holds them
with this command in one of two ways. When every container of the run names
its command, the pod's init container runs "ontime wait --install PATH",
which copies this binary to PATH (an emptyDir) and exits at once; each
container then runs "PATH wait --until T -- COMMAND ARG...", so the
containers are created during the lead and their commands start at T within
milliseconds. Otherwise the init container itself waits ("ontime wait
--until T") and the containers start after it exits.

It follows the wall clock, checking it at least every second, so that a
clock corrected by NTP meanwhile is obeyed; when the time has passed it
exits or runs the command at once.`,
		Example: `  ontime wait --until 2026-11-24T10:00:00Z
  ontime wait --until 2026-11-24T10:00:00Z -- /app/report --daily`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			at, err := time.Parse(time.RFC3339, until)
			if err != nil {
				return cli.BadInput("--until %q: not an RFC 3339 time such as 2026-11-24T10:00:00Z", until)
			}
			if cmd.ArgsLenAtDash() != 0 && len(args) > 0 {
				return cli.BadInput("%q: the command to run at --until goes after --, as in: ontime wait --until %s -- %s", args[0], until, args[0])
			}
			out := cmd.OutOrStdout()
			if install != "" {
				if len(args) > 0 {
					return cli.BadInput("--install %q: copies ontime and exits; it runs no command", install)
				}
				if err := installSelf(install); err != nil {
					return err
				}
				fmt.Fprintf(out, "installed %s; the containers wait in it until %s\n", install, at.Format(time.RFC3339))
				return nil
			}
			var path string
			if len(args) > 0 {
				// Looked up before the wait, so that a wrong command
				// fails now, not at the run's time.
				if path, err = exec.LookPath(args[0]); err != nil {
					return cli.BadInput("command %q: %v", args[0], err)
				}
			}
			if path != "" {
				// The command's output is the container's stdout: ours
				// goes to stderr.
				out = cmd.ErrOrStderr()
			}
			fmt.Fprintf(out, "waiting until %s (%s from now)\n", at.Format(time.RFC3339), max(at.Sub(now()), 0).Round(time.Second))
			if err := sleepUntil(cmd.Context(), at); err != nil {
				return err
			}
			if path == "" {
				fmt.Fprintln(out, "released")
				return nil
			}
			fmt.Fprintf(out, "released: running %s\n", path)
			return execCommand(path, args, os.Environ())
		},
	}
	cmd.Flags().StringVar(&until, "until", "", "when to exit or run the command, RFC 3339")
	cmd.Flags().StringVar(&install, "install", "", "copy this binary to `PATH` and exit at once, for the run's containers to wait in")
	_ = cmd.MarkFlagRequired("until")
	return cmd
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
		to.Close()
		return fmt.Errorf("copying %s to %s: %w", self, path, err)
	}
	if err := to.Close(); err != nil {
		return err
	}
	// The mode asked of OpenFile is reduced by the umask.
	return os.Chmod(path, 0o755)
}
