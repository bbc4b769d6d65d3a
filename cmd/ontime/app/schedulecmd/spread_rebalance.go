package schedulecmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/internal/spread"
)

func newSpreadRebalanceCommand() *cobra.Command {
	var cluster cli.ClusterFlags
	var output cli.Output
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "rebalance GROUP",
		Short: "Place every ScheduledJob of a Balanced spread group again, for the lowest peak",
		Long: `Place every ScheduledJob of a Balanced spread group again, from an empty
group, heaviest first: after ScheduledJobs have come and gone the busiest
minute can hold more than the ideal, and this brings it back down (to the
ideal for a group of one shape, such as all "H * * * *"; within one of it
for mixed shapes). It moves ScheduledJobs: each one moved runs at its new
minute from its next run on, as after a schedule edit (no run is started
for a time it has left). The controller places arrivals by itself and
never moves anyone else; rebalancing is only done when asked.

It rewrites the group's ConfigMap (ontime-spread-GROUP in the controller's
namespace, -n) with the next epoch; the controller picks the placements up.`,
		Example: `  ontime spread rebalance default -n ontime-system --dry-run
  ontime spread rebalance nightly-batch -n ontime-system`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.Check(); err != nil {
				return err
			}
			c, ns, err := cluster.Client()
			if err != nil {
				return err
			}
			return rebalance(cmd.Context(), c, types.NamespacedName{Namespace: ns, Name: spread.LedgerName(args[0])}, dryRun, cmd.OutOrStdout(), &output)
		},
	}
	cluster.Bind(cmd, "ontime-system", "the controller's namespace (its --spread-namespace)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the new placements without writing them")
	output.Bind(cmd, "table", "json", "yaml")
	return cmd
}

// rebalance rewrites a group's ledger with every member placed again; a
// concurrent placement by the controller makes the write conflict, and it
// is made again from the newer ledger (retry.RetryOnConflict: at most five
// attempts, then the conflict is the error).
func rebalance(ctx context.Context, c client.Client, ledger types.NamespacedName, dryRun bool, out io.Writer, output *cli.Output) error {
	var printed func() error
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, ledger, cm); err != nil {
			if apierrors.IsNotFound(err) {
				return cli.BadInput("spread group ConfigMap %s not found (is the group's name right, and -n the controller's namespace?)", ledger)
			}
			return err
		}
		entries, epoch, err := spread.ReadLedger(cm)
		if err != nil {
			return err
		}
		now := time.Now()
		before, err := spread.LedgerLoad(entries, now, v1alpha1.ScheduleParser)
		if err != nil {
			return err
		}
		rebalanced, next, err := spread.RebalanceLedger(entries, epoch, now, v1alpha1.ScheduleParser)
		if err != nil {
			return err
		}
		after, err := spread.LedgerLoad(rebalanced, now, v1alpha1.ScheduleParser)
		if err != nil {
			return err
		}
		if !dryRun {
			if err := spread.WriteLedger(cm, rebalanced, next); err != nil {
				return err
			}
			if err := c.Update(ctx, cm); err != nil {
				return err
			}
		}
		printed = func() error { return printRebalance(out, output, entries, rebalanced, before, after, next, dryRun) }
		return nil
	})
	if err != nil {
		return err
	}
	return printed()
}

// rebalanceResult is what rebalance prints; -o json and yaml print it as is.
type rebalanceResult struct {
	DryRun     bool               `json:"dryRun"`
	Epoch      int64              `json:"epoch"`
	Moved      int                `json:"moved"`
	PeakBefore int64              `json:"peakBefore"`
	PeakAfter  int64              `json:"peakAfter"`
	Ideal      int64              `json:"ideal"`
	Placements []rebalancedMember `json:"placements"`
}

// rebalancedMember is one ScheduledJob's placement, and its former one if
// it moved.
type rebalancedMember struct {
	ScheduledJob string `json:"scheduledJob"`
	Schedule     string `json:"schedule"`
	Choices      []int  `json:"choices"`
	Was          []int  `json:"was,omitempty"`
}

func printRebalance(out io.Writer, output *cli.Output, before, after map[string]spread.LedgerEntry, loadBefore, loadAfter *spread.Load, epoch int64, dryRun bool) error {
	result := rebalanceResult{DryRun: dryRun, Epoch: epoch, PeakBefore: loadBefore.Peak(), PeakAfter: loadAfter.Peak(), Ideal: loadAfter.Ideal()}
	for _, key := range slices.Sorted(maps.Keys(after)) {
		nn, _ := spread.ParseLedgerKey(key)
		member := rebalancedMember{ScheduledJob: nn.String(), Schedule: after[key].Schedule, Choices: after[key].Choices}
		if !slices.Equal(before[key].Choices, member.Choices) {
			member.Was = before[key].Choices
			result.Moved++
		}
		result.Placements = append(result.Placements, member)
	}
	if output.Structured() {
		return output.Write(out, result)
	}
	table := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(table, "SCHEDULEDJOB\tSCHEDULE\tCHOICES\tWAS")
	for _, m := range result.Placements {
		was := ""
		if m.Was != nil {
			was = fmt.Sprint(m.Was)
		}
		fmt.Fprintf(table, "%s\t%s\t%v\t%s\n", m.ScheduledJob, m.Schedule, m.Choices, was)
	}
	if err := table.Flush(); err != nil {
		return err
	}
	verb := "rebalanced"
	if dryRun {
		verb = "would rebalance"
	}
	_, err := fmt.Fprintf(out, "%s %d ScheduledJobs (%d moved), epoch %d: busiest minute %d → %d starts (ideal %d)\n",
		verb, len(after), result.Moved, epoch, result.PeakBefore, result.PeakAfter, result.Ideal)
	return err
}
