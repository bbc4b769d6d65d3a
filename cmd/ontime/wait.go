package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newWaitCommand() *cobra.Command {
	var until string
	cmd := &cobra.Command{
		Use:   "wait --until TIME",
		Short: "Wait until a time, then exit (EarlyStart warm-up's init container)",
		Long: `Wait until an RFC 3339 time, then exit 0. EarlyStart warm-up runs this as
the first init container of a run's pods, so that they hold their nodes from
lead before the run and start their containers at its scheduled time. It
follows the wall clock, checking it every second, so that a clock corrected
by NTP meanwhile is obeyed; it exits at once when the time has passed.`,
		Example: `  ontime wait --until 2026-11-24T10:00:00Z`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			at, err := time.Parse(time.RFC3339, until)
			if err != nil {
				return badInput("--until %q: not an RFC 3339 time such as 2026-11-24T10:00:00Z", until)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "waiting until %s (%s from now)\n", at.Format(time.RFC3339), max(at.Sub(now()), 0).Round(time.Second))
			if err := sleepUntil(cmd.Context(), at); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "released")
			return nil
		},
	}
	cmd.Flags().StringVar(&until, "until", "", "when to exit, RFC 3339")
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
