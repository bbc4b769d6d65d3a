package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newExplainCommand() *cobra.Command {
	var flags scheduleFlags
	var lead time.Duration
	cmd := &cobra.Command{
		Use:   "explain SCHEDULE",
		Short: "Describe a schedule in English and show its next 5 runs",
		Example: `  ontime explain '30 2 * * 1-5' --time-zone Europe/Amsterdam
  ontime explain '0 0 L * *'
  ontime explain '0 9 * * 1-5' --time-zone Europe/Amsterdam --lead 15m`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := flags.parse(args)
			if err != nil {
				return err
			}
			if err := checkLead(lead); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, spec.Describe())
			if lead > 0 {
				fmt.Fprintf(out, "Warm-up begins %s before each run.\n", lead)
			}
			fmt.Fprintln(out, "Next runs:")
			for _, t := range activations(spec, now(), 5) {
				fmt.Fprintf(out, "  %s  %s", t.Format(time.RFC3339), t.Format("Mon"))
				if lead > 0 {
					fmt.Fprintf(out, "  warm-up from %s", warmUpStart(t, lead).Format(time.RFC3339))
				}
				fmt.Fprintln(out)
			}
			return nil
		},
	}
	flags.register(cmd, true)
	cmd.Flags().DurationVar(&lead, "lead", 0, "also show when warm-up begins, this long before each run (as spec.warmUp.lead)")
	return cmd
}
