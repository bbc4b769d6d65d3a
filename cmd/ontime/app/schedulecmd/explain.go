package schedulecmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// NewExplainCommand is ontime explain: what a schedule means, or why a ScheduledJob runs when it does.
func NewExplainCommand() *cobra.Command {
	var flags scheduleFlags
	var cluster cli.ClusterFlags
	var lead time.Duration
	var output cli.Output
	cmd := &cobra.Command{
		Use:   "explain SCHEDULE | sj/NAME | cj/NAME",
		Short: "Describe a schedule, or a ScheduledJob's, in English and show its next 5 runs",
		Long: `Describe a schedule in English and show its next 5 runs. Given sj/NAME, read
that ScheduledJob from the cluster and describe its schedule as the
controller runs it (its placement, time zone and daylight-saving policy),
with its warm-up: the lead, and for lead Auto how the controller chose it;
then its last 5 runs' lateness by phase (docs/observability.md) and, for a
late one, the change that would have prevented it. Given cj/NAME, the same
for a CronJob with ontime's warm-up annotations.`,
		Example: `  ontime explain '30 2 * * 1-5' --time-zone Europe/Amsterdam
  ontime explain '0 0 L * *'
  ontime explain '0 9 * * 1-5' --time-zone Europe/Amsterdam --lead 15m
  ontime explain sj/nightly-report -n reports
  ontime explain cj/backup -n reports`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (liveObject.MatchString(args[0]) || liveCronJob.MatchString(args[0])) {
				return explainLive(cmd, &cluster, args[0], &output)
			}
			spec, err := flags.parse(args)
			if err != nil {
				return err
			}
			if err := checkLead(lead); err != nil {
				return err
			}
			if err := output.Check(); err != nil {
				return err
			}
			explanation := explain(spec, lead)
			if output.Structured() {
				return output.Write(cmd.OutOrStdout(), explanation)
			}
			printExplanation(cmd.OutOrStdout(), explanation)
			return nil
		},
	}
	flags.register(cmd, true)
	cluster.Bind(cmd, "", "the namespace of sj/NAME or cj/NAME (default: the context's)")
	cmd.ValidArgsFunction = cli.CompleteScheduledJobs(&cluster)
	cmd.Flags().DurationVar(&lead, "lead", 0, "also show when warm-up begins, this long before each run (as spec.warmUp.lead)")
	output.Bind(cmd, "text", "json", "yaml")
	return cmd
}

// explanation is what explain prints; -o json and yaml print it as is.
type explanation struct {
	// ScheduledJob (or CronJob) and TimeZone are set for a live object.
	ScheduledJob string `json:"scheduledJob,omitempty"`
	CronJob      string `json:"cronJob,omitempty"`
	TimeZone     string `json:"timeZone,omitempty"`
	Description  string `json:"description"`
	Lead         string `json:"lead,omitempty"`
	// LeadChoice says how the controller chose the lead under lead Auto.
	LeadChoice string         `json:"leadChoice,omitempty"`
	Next       []explainedRun `json:"next"`
	// RecentRuns are a live ScheduledJob's latest measured starts.
	RecentRuns []explainedStart `json:"recentRuns,omitempty"`
	// StartObjective is how a live ScheduledJob's runs met its
	// spec.startObjective over its window.
	StartObjective *explainedObjective `json:"startObjective,omitempty"`
	// Deadline is a live ScheduledJob's spec.deadline and what the
	// controller says of its latest run (the DeadlineAtRisk condition).
	Deadline *explainedDeadline `json:"deadline,omitempty"`
}

// explainedDeadline is a deadline and the controller's verdict on the
// latest run.
type explainedDeadline struct {
	Deadline string `json:"deadline"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
}

// explainedObjective is a start objective and its attainment.
type explainedObjective struct {
	Objective  string `json:"objective"`
	Runs       int32  `json:"runs"`
	OnTime     int32  `json:"onTime"`
	Attainment string `json:"attainment,omitempty"`
	Met        bool   `json:"met"`
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
	for _, t := range activations(spec, cli.Now(), 5) {
		run := explainedRun{Run: t.Format(time.RFC3339), Weekday: t.Format("Mon")}
		if lead > 0 {
			run.WarmUp = warmUpStart(t, lead).Format(time.RFC3339)
		}
		e.Next = append(e.Next, run)
	}
	return e
}

// explainLive explains the ScheduledJob (sj/NAME) or annotated CronJob
// (cj/NAME) arg names, read from the cluster.
func explainLive(cmd *cobra.Command, cluster *cli.ClusterFlags, arg string, output *cli.Output) error {
	if err := output.Check(); err != nil {
		return err
	}
	explanation, err := explainObject(cmd.Context(), cluster, arg)
	if err != nil {
		return err
	}
	if output.Structured() {
		return output.Write(cmd.OutOrStdout(), explanation)
	}
	printExplanation(cmd.OutOrStdout(), explanation)
	return nil
}

// explainObject reads and explains the object arg names.
func explainObject(ctx context.Context, cluster *cli.ClusterFlags, arg string) (explanation, error) {
	if liveObject.MatchString(arg) {
		sj, err := getScheduledJob(ctx, cluster, arg)
		if err != nil {
			return explanation{}, err
		}
		return explainScheduledJob(sj, cli.Now())
	}
	c, ns, err := cluster.Client()
	if err != nil {
		return explanation{}, err
	}
	_, name, _ := strings.Cut(arg, "/")
	cj := &batchv1.CronJob{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cj); err != nil {
		return explanation{}, err
	}
	return explainCronJob(cj, cli.Now())
}

func printExplanation(out io.Writer, e explanation) {
	if e.ScheduledJob != "" {
		fmt.Fprintf(out, "ScheduledJob %s, in %s:\n", e.ScheduledJob, e.TimeZone)
	}
	if e.CronJob != "" {
		fmt.Fprintf(out, "CronJob %s, in %s:\n", e.CronJob, e.TimeZone)
	}
	fmt.Fprintln(out, e.Description)
	switch {
	case e.LeadChoice != "":
		fmt.Fprintf(out, "Warm-up lead %s; %s.\n", e.Lead, e.LeadChoice)
	case e.Lead != "":
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
	printObjective(out, e.StartObjective)
	if d := e.Deadline; d != nil {
		fmt.Fprintf(out, "Deadline %s: %s.\n", d.Deadline, cmp.Or(d.Message, "no run watched yet"))
	}
	printStarts(out, e.RecentRuns)
}

// printObjective prints a start objective's attainment over its window.
func printObjective(out io.Writer, o *explainedObjective) {
	switch {
	case o == nil:
	case o.Runs == 0:
		fmt.Fprintf(out, "Start objective %s: no run counted yet.\n", o.Objective)
	default:
		verdict := "met"
		if !o.Met {
			verdict = "missed"
		}
		fmt.Fprintf(out, "Start objective %s: %s%% of %d runs on time, %s.\n", o.Objective, o.Attainment, o.Runs, verdict)
	}
}
