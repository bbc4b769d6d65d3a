package schedulecmd

import (
	"fmt"
	"regexp"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// NewNextCommand is ontime next: a schedule's or a ScheduledJob's next runs.
func NewNextCommand() *cobra.Command {
	var flags scheduleFlags
	var from string
	var output cli.Output
	var count int
	var lead time.Duration
	var cluster cli.ClusterFlags
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "next SCHEDULE | sj/NAME | sj",
		Short: "Print a schedule's next activation times",
		Long: `Print a schedule's next activation times, one RFC 3339 time per line in
the schedule's time zone. The extended syntax (H, L, W, #, 7 for Sunday) is
accepted unless --strict is given. With --lead, each line also says when
warm-up for that run begins: the run's time minus the lead, in elapsed time,
as the controller computes it. Given sj/NAME, read that ScheduledJob from the
cluster and print its next runs as the controller runs them (its placement,
time zone and daylight-saving policy), with its fixed warm-up lead unless
--lead is given. Given sj alone, print the next runs of every ScheduledJob
of the namespace (of every namespace with -A), merged in time order: what
runs next, and when its warm-up begins.`,
		Example: `  ontime next '30 2 * * 1-5' --time-zone Europe/Amsterdam
  ontime next 'H/15 * * * *' --hash-key team-a/report --count 4
  ontime next '0 0 29 2 *' --from 2096-03-01T00:00:00Z --count 2 -o json
  ontime next '0 0 * * *' --lead 10m --count 2
  ontime next sj/nightly-report -n reports --count 3
  ontime next sj -A --count 10`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			live := len(args) == 1 && liveObject.MatchString(args[0])
			every := len(args) == 1 && everyScheduledJob.MatchString(args[0])
			start, err := parseFrom(from)
			if err != nil {
				return err
			}
			if err := checkNextFlags(cmd, count, lead, &output, allNamespaces, live, every, cluster.Namespace); err != nil {
				return err
			}
			if every {
				return nextOfEvery(cmd, &cluster, allNamespaces, start, count, &output)
			}
			if live {
				err := nextLive(cmd, &cluster, args[0], start, count, lead, &output)
				if apierrors.IsNotFound(err) && looksLikeACount.MatchString(cluster.Namespace) {
					return fmt.Errorf("%w (-n %s is the namespace; the number of runs is --count %s)", err, cluster.Namespace, cluster.Namespace)
				}
				return err
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
	// -n is the namespace, as on every command and in kubectl; it was the
	// count before, and a script that still says -n 3 gets an error
	// naming --count (namespaceOfASchedule).
	cluster.Bind(cmd, "", "the ScheduledJob's namespace, with sj/NAME (default: the context's)")
	cmd.ValidArgsFunction = cli.CompleteScheduledJobs(&cluster)
	cmd.Flags().StringVar(&from, "from", "", "start after this RFC 3339 time (default: now)")
	cmd.Flags().IntVar(&count, "count", 5, "how many activation times to print")
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "with sj alone: the ScheduledJobs of every namespace")
	output.Bind(cmd, "text", "wide", "json", "yaml")
	cmd.Flags().DurationVar(&lead, "lead", 0, "also print when warm-up begins, this long before each run (as spec.warmUp.lead)")
	return cmd
}

// checkNextFlags refuses flags that mean nothing for what args name: a
// schedule (neither live nor every), sj/NAME (live) or the kind alone
// (every).
func checkNextFlags(cmd *cobra.Command, count int, lead time.Duration, output *cli.Output, allNamespaces, live, every bool, namespace string) error {
	if count < 1 || count > 100000 {
		return cli.BadInput("--count %d: must be from 1 to 100000", count)
	}
	if output.Format == "wide" && !every {
		return cli.BadInput("-o wide adds the schedule and time zone to the list of ontime next sj; a single schedule's output has none to add")
	}
	if allNamespaces && !every {
		return cli.BadInput("-A lists the ScheduledJobs of every namespace: give the kind alone, as in ontime next sj -A")
	}
	if !live && !every && cmd.Flags().Changed("namespace") {
		return namespaceOfASchedule(namespace)
	}
	if err := output.Check(); err != nil {
		return err
	}
	return checkLead(lead)
}

// nextLive prints the next runs of the ScheduledJob arg names, with when
// each one's warm-up begins under a fixed lead (or --lead).
func nextLive(cmd *cobra.Command, cluster *cli.ClusterFlags, arg string, from time.Time, count int, lead time.Duration, output *cli.Output) error {
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

// looksLikeACount is a -n value that was most likely meant as the count.
var looksLikeACount = regexp.MustCompile(`^[0-9]+$`)

// namespaceOfASchedule refuses -n with a schedule, where a namespace means
// nothing: most likely a script from when -n was the count.
func namespaceOfASchedule(namespace string) error {
	if looksLikeACount.MatchString(namespace) {
		return cli.BadInput("-n %s: -n is the namespace (of sj/NAME), as in kubectl; the number of times is --count: ontime next SCHEDULE --count %s", namespace, namespace)
	}
	return cli.BadInput("-n %s: a schedule has no namespace; -n is for sj/NAME (the number of times is --count)", namespace)
}
