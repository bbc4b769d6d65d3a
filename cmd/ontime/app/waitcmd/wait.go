// Package waitcmd is ontime wait: the same command as the ontime-wait
// binary EarlyStart pods run (internal/earlywait), kept in ontime for
// pods and scripts that run it from the ontime binary. Cobra reads the
// flags (for --help and the docs' check), earlywait the rest.
package waitcmd

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/internal/earlywait"
)

// NewCommand is `ontime wait`; now is its clock (what it prints of the
// wait).
func NewCommand(now func() time.Time) *cobra.Command {
	var until, install string
	cmd := &cobra.Command{
		Use:   "wait " + earlywait.Usage,
		Short: "Wait until a time, then exit or run a command (EarlyStart warm-up)",
		// Run inside EarlyStart pods, not by people: kept out of --help.
		Hidden: true,
		Long: `Wait until an RFC 3339 time, then exit 0, or, given a command after --,
replace itself with that command (exec: same process, so the command gets
the container's signals and its exit code is the container's). With
--install PATH, copy this binary to PATH and exit at once.

EarlyStart pods run the same command from the smaller ontime-wait binary of
ontime's image (docs/warmup.md).`,
		Example: `  ontime wait --until 2026-11-24T10:00:00Z
  ontime wait --until 2026-11-24T10:00:00Z -- /app/report --daily`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The command line ontime-wait takes: cobra dropped the "--"
			// before the command, which earlywait needs to see.
			line := []string{"--until", until}
			if install != "" {
				line = append(line, "--install", install)
			}
			if cmd.ArgsLenAtDash() == 0 {
				line = append(line, "--")
			}
			err := earlywait.Run(cmd.Context(), append(line, args...), cmd.OutOrStdout(), cmd.ErrOrStderr(), now)
			if errors.As(err, new(earlywait.UsageError)) {
				return cli.Input(err)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&until, "until", "", "when to exit or run the command, RFC 3339")
	cmd.Flags().StringVar(&install, "install", "", "copy this binary to `PATH` and exit at once, for the run's containers to wait in")
	_ = cmd.MarkFlagRequired("until")
	return cmd
}
