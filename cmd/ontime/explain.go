package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newExplainCommand() *cobra.Command {
	var flags scheduleFlags
	cmd := &cobra.Command{
		Use:   "explain SCHEDULE",
		Short: "Describe a schedule in English and show its next 5 runs",
		Example: `  ontime explain '30 2 * * 1-5' --time-zone Europe/Amsterdam
  ontime explain '0 0 L * *'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := flags.parse(args)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, spec.Describe())
			fmt.Fprintln(out, "Next runs:")
			for _, t := range activations(spec, now(), 5) {
				fmt.Fprintf(out, "  %s  %s\n", t.Format(time.RFC3339), t.Format("Mon"))
			}
			return nil
		},
	}
	flags.register(cmd, true)
	return cmd
}
