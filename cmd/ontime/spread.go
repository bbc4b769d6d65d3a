package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/internal/spread"
)

func newSpreadCommand() *cobra.Command {
	var every time.Duration
	var keys []string
	var strategy, output string
	cmd := &cobra.Command{
		Use:   "spread --every DURATION --keys K1,K2,...",
		Short: "Give each key its own schedule, firing exactly every DURATION, spread over the period",
		Long: `Give each key (a tenant id, a job name) its own schedule that fires exactly
every DURATION, so that the jobs do not all start at once.

  balanced  spaces the keys evenly: no minute holds more than
            ceil(N·runs-per-hour/60) starts for N keys, however the keys are
            distributed. Adding a key may move the others.
  hash      places each key by its hash alone (Jenkins H): adding or removing
            keys never moves another.

DURATION divides an hour (1m … 60m) or is whole hours dividing a day (2h … 24h).`,
		Example: `  ontime spread --every 30m --keys 7,20,863,195,81,3
  ontime spread --every 6h --keys team-a/index,team-b/index --strategy hash -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "table" && output != "json" {
				return badInput("-o %q: must be table or json", output)
			}
			assignments, err := spread.Schedules(every, keys, spread.Strategy(strategy))
			if err != nil {
				return inputError{err}
			}
			if output == "json" {
				return writeJSON(cmd.OutOrStdout(), assignments)
			}
			table := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(table, "KEY\tSCHEDULE")
			for _, a := range assignments {
				fmt.Fprintf(table, "%s\t%s\n", a.Key, a.Schedule)
			}
			return table.Flush()
		},
	}
	cmd.Flags().DurationVar(&every, "every", 0, "interval each key runs at, such as 30m or 6h")
	cmd.Flags().StringSliceVar(&keys, "keys", nil, "comma-separated keys, one schedule each")
	cmd.Flags().StringVar(&strategy, "strategy", string(spread.Balanced), "balanced or hash")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	_ = cmd.MarkFlagRequired("every")
	_ = cmd.MarkFlagRequired("keys")
	return cmd
}
