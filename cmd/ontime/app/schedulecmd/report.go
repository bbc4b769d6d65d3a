package schedulecmd

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// errObjectivesMissed makes the exit code 1 once the report is printed.
var errObjectivesMissed = errors.New("a ScheduledJob misses its start objective")

// NewReportCommand is ontime report: each start objective's attainment.
func NewReportCommand() *cobra.Command {
	var cluster cli.ClusterFlags
	var output cli.Output
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Rank the ScheduledJobs with a start objective, those missing it first",
		Long: `Read the ScheduledJobs of the namespace (of every namespace with -A) that
have a spec.startObjective, and print how their runs met it over its window
(status.startObjective), worst first: those missing their objective, by how
far, then those meeting it, by how little margin they have, then those with
no run counted yet. For each, the latest late start of its recent runs and
where most of its time went; ontime explain sj/NAME says what would have
prevented it. The exit code is 1 when a ScheduledJob misses its objective.`,
		Example: `  ontime report -n reports
  ontime report -A -o wide
  ontime report -A -o jsonpath='{.items[?(@.met==false)].name}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.Check(); err != nil {
				return err
			}
			return runReport(cmd, &cluster, allNamespaces, &output)
		},
	}
	cluster.Bind(cmd, "", "the namespace whose ScheduledJobs to report (default: the context's)")
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "the ScheduledJobs of every namespace")
	output.Bind(cmd, "text", "wide", "json", "yaml")
	return cmd
}

// objectiveReport is one ScheduledJob's line of the report.
type objectiveReport struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Objective reads as "99% within 30s over 7d".
	Objective string `json:"objective"`
	// Runs and OnTime are status.startObjective's counts over the window;
	// Attainment is its percentage ("" while no run is counted).
	Runs       int32  `json:"runs"`
	OnTime     int32  `json:"onTime"`
	Attainment string `json:"attainment,omitempty"`
	Met        bool   `json:"met"`
	// LastLate is the latest late start among the recent runs
	// (status.recentRunStarts), if any: when, how late, and where most of
	// its time went.
	LastLate *lateStart `json:"lastLate,omitempty"`
	// margin is attainment minus target, in percentage points: the sort
	// key (NaN while no run is counted).
	margin float64
}

// lateStart is a run that started later than the objective allowed.
type lateStart struct {
	ScheduledTime string `json:"scheduledTime"`
	Lateness      string `json:"lateness"`
	Phase         string `json:"phase,omitempty"`
	PhaseTook     string `json:"phaseTook,omitempty"`
}

// runReport lists the ScheduledJobs, reports those with an objective and
// fails when one misses it.
func runReport(cmd *cobra.Command, cluster *cli.ClusterFlags, allNamespaces bool, output *cli.Output) error {
	list, err := scheduledJobsOf(cmd.Context(), cluster, allNamespaces)
	if err != nil {
		return err
	}
	reports := objectiveReports(list.Items)
	if output.Structured() {
		err = output.Write(cmd.OutOrStdout(), reports)
	} else {
		err = printReport(cmd.OutOrStdout(), reports, len(list.Items), allNamespaces, output.Format == "wide")
	}
	if err != nil {
		return err
	}
	if missing := missingCount(reports); missing > 0 {
		return fmt.Errorf("%w: %d of %d", errObjectivesMissed, missing, len(reports))
	}
	return nil
}

// objectiveReports are the lines of the ScheduledJobs with an objective,
// worst first.
func objectiveReports(items []v1alpha1.ScheduledJob) []objectiveReport {
	var reports []objectiveReport
	for i := range items {
		if r, ok := reportOf(&items[i]); ok {
			reports = append(reports, r)
		}
	}
	slices.SortFunc(reports, func(a, b objectiveReport) int {
		return cmp.Or(compareMargins(a.margin, b.margin), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return reports
}

// compareMargins orders the smallest margin first and no margin (no run
// counted) last.
func compareMargins(a, b float64) int {
	if aNone, bNone := math.IsNaN(a), math.IsNaN(b); aNone || bNone {
		return cmp.Compare(boolRank(aNone), boolRank(bNone))
	}
	return cmp.Compare(a, b)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reportOf is sj's line; false without an objective.
func reportOf(sj *v1alpha1.ScheduledJob) (objectiveReport, bool) {
	o := sj.Spec.StartObjective
	if o == nil {
		return objectiveReport{}, false
	}
	r := objectiveReport{Namespace: sj.Namespace, Name: sj.Name, Objective: o.String(), Met: true, margin: math.NaN()}
	if s := sj.Status.StartObjective; s != nil {
		r.Runs, r.OnTime, r.Attainment, r.Met = s.Runs, s.OnTime, s.Attainment, s.Met
		target, err := o.Ratio()
		if attained, perr := strconv.ParseFloat(s.Attainment, 64); err == nil && perr == nil {
			r.margin = attained - 100*target
		}
	}
	for _, start := range recentStarts(sj.Status.RecentRunStarts, sj.Status.LastRunStart) {
		if !o.OnTime(start.Lateness.Duration) {
			r.LastLate = lateStartOf(start)
			break
		}
	}
	return r, true
}

// lateStartOf describes a late start by its dominant phase.
func lateStartOf(start v1alpha1.RunStart) *lateStart {
	late := &lateStart{ScheduledTime: start.ScheduledTime.UTC().Format(time.RFC3339), Lateness: start.Lateness.Duration.String()}
	if dominant, ok := start.Dominant(); ok {
		late.Phase, late.PhaseTook = string(dominant.Name), dominant.Duration.Duration.String()
	}
	return late
}

func missingCount(reports []objectiveReport) int {
	missing := 0
	for _, r := range reports {
		if !r.Met {
			missing++
		}
	}
	return missing
}

// printReport prints the report as a table, with the namespace under -A
// and the late run's time when wide, then a summary line.
func printReport(w io.Writer, reports []objectiveReport, listed int, allNamespaces, wide bool) error {
	if len(reports) == 0 {
		_, err := fmt.Fprintf(w, "None of the %d ScheduledJobs has a spec.startObjective.\n", listed)
		return err
	}
	table := cli.NewListTable(w, allNamespaces, wide, "NAME\tOBJECTIVE\tATTAINMENT\tRUNS\tLATE\tMET\tLAST LATE START", "SCHEDULED")
	for _, r := range reports {
		attainment, met := "-", "yes"
		if r.Attainment != "" {
			attainment = r.Attainment + "%"
		}
		if !r.Met {
			met = "no"
		}
		last, scheduled := "-", "-"
		if l := r.LastLate; l != nil {
			last, scheduled = l.Lateness, l.ScheduledTime
			if l.Phase != "" {
				last += fmt.Sprintf(" (%s %s)", l.Phase, l.PhaseTook)
			}
		}
		table.Row(r.Namespace, fmt.Sprintf("%s\t%s\t%s\t%d\t%d\t%s\t%s", r.Name, r.Objective, attainment, r.Runs, r.Runs-r.OnTime, met, last), scheduled)
	}
	if err := table.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d of %d ScheduledJobs with a start objective miss it (%d listed).\n", missingCount(reports), len(reports), listed)
	return err
}
