// Package app is the ontime binary's command line: the root command and
// the user's commands (next, explain, prime, spread, convert, trigger,
// backfill, pause, check, report, uninstall-preview, version), beside the
// controller's (controllercmd) and the EarlyStart wait's (waitcmd). The
// binary's main package only calls Run, as cert-manager's cmd/<binary>
// calls its app package.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/cmd/ontime/app/clustercmd"
	"github.com/ontime-dev/ontime/cmd/ontime/app/controllercmd"
	"github.com/ontime-dev/ontime/cmd/ontime/app/schedulecmd"
	"github.com/ontime-dev/ontime/cmd/ontime/app/waitcmd"
)

// Exit codes: 0 success, 1 a failure at run time (for example the API
// server is unreachable), 2 invalid input (a bad flag, schedule or zone).
const (
	exitOK       = 0
	exitFailure  = 1
	exitBadInput = 2
)

// Run executes the command line and returns the process exit code. Errors
// are printed as one line on stderr, never with a stack trace.
func Run(args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(stdout, stderr)
	// Errors raised before a command starts running are about the command
	// line itself (unknown command, missing required flag): exit 2.
	started := false
	for _, cmd := range root.Commands() {
		if runE := cmd.RunE; runE != nil {
			cmd.RunE = func(cmd *cobra.Command, args []string) error {
				started = true
				return runE(cmd, args)
			}
		}
	}
	root.SetArgs(args)
	// SIGINT and SIGTERM cancel the context: the controller shuts down
	// cleanly and releases its leader-election lease.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "ontime: %v\n", err)
	var input cli.InputError
	if errors.As(err, &input) || !started {
		return exitBadInput
	}
	return exitFailure
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "ontime",
		Short: "Scheduled Kubernetes jobs that start on time",
		Long: `ontime runs scheduled Kubernetes jobs on time: a CronJob-compatible
operator (ontime controller) and offline tools for cron schedules.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	// Installed as kubectl-ontime (krew), kubectl runs it for `kubectl
	// ontime …`: usage lines say so.
	if strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-") {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl ontime"}
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Flag errors are the user's: exit 2.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Input(err) })
	root.AddCommand(
		newVersionCommand(),
		controllercmd.NewCommand(version),
		schedulecmd.NewNextCommand(),
		schedulecmd.NewExplainCommand(),
		schedulecmd.NewPrimeCommand(),
		schedulecmd.NewSpreadCommand(),
		clustercmd.NewTriggerCommand(),
		clustercmd.NewBackfillCommand(),
		waitcmd.NewCommand(func() time.Time { return cli.Now() }),
		clustercmd.NewPauseCommand(),
		schedulecmd.NewConvertCommand(),
		clustercmd.NewUninstallPreviewCommand(),
		clustercmd.NewCheckCommand(version),
		schedulecmd.NewReportCommand(),
	)
	for _, cmd := range root.Commands() {
		cmd.Args = wrapArgs(cmd.Args)
	}
	return root
}

// wrapArgs makes positional-argument errors exit with code 2.
func wrapArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		return nil
	}
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return cli.Input(err)
		}
		return nil
	}
}
