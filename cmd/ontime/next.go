package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

func newNextCommand() *cobra.Command {
	var flags scheduleFlags
	var from string
	var output outputFlag
	var count int
	var lead time.Duration
	var cluster cli.ClusterFlags
	cmd := &cobra.Command{
		Use:   "next SCHEDULE | sj/NAME",
		Short: "Print a schedule's next activation times",
		Long: `Print a schedule's next activation times, one RFC 3339 time per line in
the schedule's time zone. The extended syntax (H, L, W, #, 7 for Sunday) is
accepted unless --strict is given. With --lead, each line also says when
warm-up for that run begins: the run's time minus the lead, in elapsed time,
as the controller computes it. Given sj/NAME, read that ScheduledJob from the
cluster and print its next runs as the controller runs them (its placement,
time zone and daylight-saving policy), with its fixed warm-up lead unless
--lead is given.`,
		Example: `  ontime next '30 2 * * 1-5' --time-zone Europe/Amsterdam
  ontime next 'H/15 * * * *' --hash-key team-a/report -n 4
  ontime next '0 0 29 2 *' --from 2096-03-01T00:00:00Z -n 2 -o json
  ontime next '0 0 * * *' --lead 10m -n 2
  ontime next sj/nightly-report --namespace reports`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			live := len(args) == 1 && liveObject.MatchString(args[0])
			start, err := parseFrom(from)
			if err != nil {
				return err
			}
			if count < 1 || count > 100000 {
				return cli.BadInput("-n %d: must be from 1 to 100000", count)
			}
			if err := output.check(); err != nil {
				return err
			}
			if err := checkLead(lead); err != nil {
				return err
			}
			if live {
				return nextLive(cmd, &cluster, args[0], start, count, lead, &output)
			}
			spec, err := flags.parse(args)
			if err != nil {
				return err
			}
			times := activations(spec, start, count)
			return printTimes(cmd.OutOrStdout(), times, lead, &output)
		},
	}
	flags.register(cmd, true)
	// -n is the count here, as it has been: the namespace is --namespace.
	cluster.Bind(cmd, "", "")
	cmd.Flags().StringVar(&cluster.Namespace, "namespace", "", "the ScheduledJob's namespace, with sj/NAME (default: the context's)")
	cmd.Flags().StringVar(&from, "from", "", "start after this RFC 3339 time (default: now)")
	cmd.Flags().IntVarP(&count, "count", "n", 5, "how many activation times to print")
	output.bind(cmd, "text", "json", "yaml")
	cmd.Flags().DurationVar(&lead, "lead", 0, "also print when warm-up begins, this long before each run (as spec.warmUp.lead)")
	return cmd
}

// nextLive prints the next runs of the ScheduledJob arg names, with when
// each one's warm-up begins under a fixed lead (or --lead).
func nextLive(cmd *cobra.Command, cluster *cli.ClusterFlags, arg string, from time.Time, count int, lead time.Duration, output *outputFlag) error {
	sj, err := getScheduledJob(cmd.Context(), cluster, arg)
	if err != nil {
		return err
	}
	m, err := meaningOfLive(sj)
	if err != nil {
		return err
	}
	if w := m.WarmUp; lead == 0 && w != nil && !w.AutoLead {
		lead = w.Lead
	}
	return printTimes(cmd.OutOrStdout(), nextRuns(sj, m, from, count), lead, output)
}
