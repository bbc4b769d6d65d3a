// Package waitcmd is ontime wait: the same command as the ontime-wait
// binary EarlyStart pods run (internal/earlywait), kept in ontime for
// pods and scripts that run it from the ontime binary.
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
	return &cobra.Command{
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
		// earlywait parses the command line, as ontime-wait does: one
		// parser for both.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := earlywait.Run(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr(), now)
			if errors.As(err, new(earlywait.UsageError)) {
				return cli.Input(err)
			}
			return err
		},
	}
}
