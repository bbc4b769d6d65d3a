package schedulecmd

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// NewPrimeCommand is ontime prime: a warm-up's start before each run.
func NewPrimeCommand() *cobra.Command {
	var flags scheduleFlags
	var lead time.Duration
	var extended bool
	var output cli.Output
	cmd := &cobra.Command{
		Use:   "prime SCHEDULE --lead DURATION",
		Short: "Print the schedules that fire exactly a lead time before every run",
		Long: `Print the smallest set of schedules, one per line, whose union fires exactly
--lead before every activation of SCHEDULE: no activation is missed, none is
added, and no two of them fire at the same time. Use them to warm capacity up
ahead of each run.

The output is standard, Kubernetes-valid syntax. When none exists (10m before
"0 0 1 * *" is 23:50 on the last day of the month), ontime prime says why and
exits with code 2; with --extended it prints the extended form instead
("50 23 L * *").`,
		Example: `  ontime prime '*/30 * * * 1-5' --lead 10m
  ontime prime '0 0 1 * *' --lead 10m --extended`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := flags.parse(args)
			if err != nil {
				return err
			}
			if err := output.Check(); err != nil {
				return err
			}
			dialect := cron.Kubernetes
			if extended {
				dialect = cron.Extended
			}
			lines, err := cron.Shift(spec, lead, dialect)
			var shiftErr *cron.ShiftError
			if errors.As(err, &shiftErr) {
				if shiftErr.Extended != nil {
					return cli.BadInput("%v; rerun with --extended to print it", err)
				}
				return cli.Input(err)
			}
			if err != nil {
				return err
			}
			if output.Structured() {
				err = output.Write(cmd.OutOrStdout(), struct {
					Schedules []string `json:"schedules"`
				}{lines})
			} else {
				for _, line := range lines {
					fmt.Fprintln(cmd.OutOrStdout(), line)
				}
			}
			if err != nil {
				return err
			}
			warnAboutDST(cmd.ErrOrStderr(), spec, lead, lines, dialect)
			return nil
		},
	}
	flags.register(cmd, false)
	cmd.Flags().DurationVar(&lead, "lead", 0, "how long before each run, in whole minutes from 1m to 168h (7 days)")
	cmd.Flags().BoolVar(&extended, "extended", false, "print extended syntax (L, W, #) when standard syntax cannot express the answer")
	output.Bind(cmd, "text", "json", "yaml")
	_ = cmd.MarkFlagRequired("lead")
	return cmd
}

// warnAboutDST tells the user when, in the coming two years, daylight-saving
// changes make the real time between a primer and its run differ from the
// lead (the schedules themselves are exact on the wall clock).
func warnAboutDST(w io.Writer, spec *cron.Spec, lead time.Duration, lines []string, dialect cron.Dialect) {
	primers := make([]*cron.Spec, 0, len(lines))
	for _, line := range lines {
		primer, err := cron.Parser{Dialect: dialect, Location: spec.Location(), DSTPolicy: spec.DSTPolicy()}.Parse(line)
		if err != nil {
			return
		}
		primers = append(primers, primer)
	}
	start := cli.Now()
	end := start.AddDate(2, 0, 0)
	differing, runs := 0, 0
	var first time.Time
	for at := spec.Next(start); !at.IsZero() && at.Before(end) && runs < 200000; at = spec.Next(at) {
		runs++
		warmUp := at.Add(-lead)
		fired := false
		for _, primer := range primers {
			fired = fired || primer.Next(warmUp.Add(-time.Second)).Equal(warmUp)
		}
		if !fired {
			if differing == 0 {
				first = at
			}
			differing++
		}
	}
	if differing > 0 {
		fmt.Fprintf(w, "warning: in %s, %d of the %d runs in the next two years (the first at %s) are not exactly %s after a warm-up, because a daylight-saving change falls in between; the schedules above are exact on the wall clock\n",
			spec.Location(), differing, runs, first.Format(time.RFC3339), lead)
	}
}
