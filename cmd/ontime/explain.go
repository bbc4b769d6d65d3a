package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/pkg/cron"
)

func newExplainCommand() *cobra.Command {
	var flags scheduleFlags
	var lead time.Duration
	var output outputFlag
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
			if err := output.check(); err != nil {
				return err
			}
			explanation := explain(spec, lead)
			if output.structured() {
				return output.write(cmd.OutOrStdout(), explanation)
			}
			printExplanation(cmd.OutOrStdout(), explanation)
			return nil
		},
	}
	flags.register(cmd, true)
	cmd.Flags().DurationVar(&lead, "lead", 0, "also show when warm-up begins, this long before each run (as spec.warmUp.lead)")
	output.bind(cmd, "text", "json", "yaml")
	return cmd
}

// explanation is what explain prints; -o json and yaml print it as is.
type explanation struct {
	Description string         `json:"description"`
	Lead        string         `json:"lead,omitempty"`
	Next        []explainedRun `json:"next"`
}

// explainedRun is one coming run, and when its warm-up begins.
type explainedRun struct {
	Run     string `json:"run"`
	Weekday string `json:"weekday"`
	WarmUp  string `json:"warmUp,omitempty"`
}

func explain(spec *cron.Spec, lead time.Duration) explanation {
	e := explanation{Description: spec.Describe()}
	if lead > 0 {
		e.Lead = lead.String()
	}
	for _, t := range activations(spec, now(), 5) {
		run := explainedRun{Run: t.Format(time.RFC3339), Weekday: t.Format("Mon")}
		if lead > 0 {
			run.WarmUp = warmUpStart(t, lead).Format(time.RFC3339)
		}
		e.Next = append(e.Next, run)
	}
	return e
}

func printExplanation(out io.Writer, e explanation) {
	fmt.Fprintln(out, e.Description)
	if e.Lead != "" {
		fmt.Fprintf(out, "Warm-up begins %s before each run.\n", e.Lead)
	}
	fmt.Fprintln(out, "Next runs:")
	for _, run := range e.Next {
		fmt.Fprintf(out, "  %s  %s", run.Run, run.Weekday)
		if run.WarmUp != "" {
			fmt.Fprintf(out, "  warm-up from %s", run.WarmUp)
		}
		fmt.Fprintln(out)
	}
}
