package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/internal/spread"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// now is the CLI's clock; tests replace it.
var now = time.Now

// scheduleFlags are the flags that say how to read a schedule.
type scheduleFlags struct {
	timeZone  string
	dstPolicy string
	hashKey   string
	strict    bool
}

func (f *scheduleFlags) register(cmd *cobra.Command, withStrict bool) {
	cmd.Flags().StringVar(&f.timeZone, "time-zone", "UTC", "IANA time zone the schedule runs in, such as Europe/Amsterdam")
	cmd.Flags().StringVar(&f.dstPolicy, "dst-policy", "cron", `what a daylight-saving change does to the schedule: "cron" (ISC cron) or "kubernetes" (robfig/cron, skip or run twice)`)
	cmd.Flags().StringVar(&f.hashKey, "hash-key", "", "key that seeds H fields, such as namespace/name")
	if withStrict {
		cmd.Flags().BoolVar(&f.strict, "strict", false, "accept only what a batch/v1 CronJob accepts (no H, L, W, # or 7)")
	}
}

// parse parses the schedule (the arguments joined by spaces, so that an
// unquoted "@every 1h" works) with the flags.
func (f *scheduleFlags) parse(args []string) (*cron.Spec, error) {
	loc, err := cron.LoadLocation(f.timeZone)
	if err != nil || f.timeZone == "" || strings.EqualFold(f.timeZone, "Local") {
		return nil, badInput("--time-zone %q: not an IANA time zone name (such as UTC or Europe/Amsterdam)", f.timeZone)
	}
	policy, err := cron.ParseDSTPolicy(f.dstPolicy)
	if err != nil {
		return nil, badInput("--dst-policy %q: must be cron or kubernetes", f.dstPolicy)
	}
	parser := cron.Parser{Dialect: cron.Extended, Location: loc, DSTPolicy: policy, HashKey: f.hashKey}
	if f.strict {
		parser.Dialect = cron.Kubernetes
	}
	spec, err := parser.Parse(strings.Join(args, " "))
	if err != nil {
		return nil, inputError{err}
	}
	return spec, nil
}

func newNextCommand() *cobra.Command {
	var flags scheduleFlags
	var from, output string
	var count int
	cmd := &cobra.Command{
		Use:   "next SCHEDULE",
		Short: "Print a schedule's next activation times",
		Long: `Print a schedule's next activation times, one RFC 3339 time per line in
the schedule's time zone. The extended syntax (H, L, W, #, 7 for Sunday) is
accepted unless --strict is given.`,
		Example: `  ontime next '30 2 * * 1-5' --time-zone Europe/Amsterdam
  ontime next 'H/15 * * * *' --hash-key team-a/report -n 4
  ontime next '0 0 29 2 *' --from 2096-03-01T00:00:00Z -n 2 -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := flags.parse(args)
			if err != nil {
				return err
			}
			start, err := parseFrom(from)
			if err != nil {
				return err
			}
			if count < 1 || count > 100000 {
				return badInput("-n %d: must be from 1 to 100000", count)
			}
			if output != "text" && output != "json" {
				return badInput("-o %q: must be text or json", output)
			}
			times := activations(spec, start, count)
			return printTimes(cmd.OutOrStdout(), times, output)
		},
	}
	flags.register(cmd, true)
	cmd.Flags().StringVar(&from, "from", "", "start after this RFC 3339 time (default: now)")
	cmd.Flags().IntVarP(&count, "count", "n", 5, "how many activation times to print")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func parseFrom(from string) (time.Time, error) {
	if from == "" {
		return now(), nil
	}
	t, err := time.Parse(time.RFC3339, from)
	if err != nil {
		return time.Time{}, badInput("--from %q: not an RFC 3339 time such as 2026-03-08T01:30:00-05:00", from)
	}
	return t, nil
}

// activations returns up to n activations after from; fewer only if the
// schedule stops (possible only under the kubernetes DST policy).
func activations(spec *cron.Spec, from time.Time, n int) []time.Time {
	var times []time.Time
	for at := from; len(times) < n; {
		if at = spec.Next(at); at.IsZero() {
			break
		}
		times = append(times, at)
	}
	return times
}

func printTimes(w io.Writer, times []time.Time, output string) error {
	formatted := make([]string, len(times))
	for i, t := range times {
		formatted[i] = t.Format(time.RFC3339)
	}
	if output == "json" {
		return writeJSON(w, formatted)
	}
	for _, t := range formatted {
		fmt.Fprintln(w, t)
	}
	return nil
}

func writeJSON(w io.Writer, value any) error {
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(value)
}

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

func newPrimeCommand() *cobra.Command {
	var flags scheduleFlags
	var lead time.Duration
	var extended bool
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
			dialect := cron.Kubernetes
			if extended {
				dialect = cron.Extended
			}
			lines, err := cron.Shift(spec, lead, dialect)
			var shiftErr *cron.ShiftError
			if errors.As(err, &shiftErr) {
				if shiftErr.Extended != nil {
					return badInput("%v; rerun with --extended to print it", err)
				}
				return inputError{err}
			}
			if err != nil {
				return err
			}
			for _, line := range lines {
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			warnAboutDST(cmd.ErrOrStderr(), spec, lead, lines, dialect)
			return nil
		},
	}
	flags.register(cmd, false)
	cmd.Flags().DurationVar(&lead, "lead", 0, "how long before each run, in whole minutes from 1m to 168h (7 days)")
	cmd.Flags().BoolVar(&extended, "extended", false, "print extended syntax (L, W, #) when standard syntax cannot express the answer")
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
	start := now()
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
