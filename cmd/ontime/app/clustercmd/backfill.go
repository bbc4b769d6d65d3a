package clustercmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/internal/validation"
)

// backfillOptions are the flags of ontime backfill.
type backfillOptions struct {
	from, to  string
	name      string
	maxActive int32
	redo      string
	dryRun    bool
	wait      bool
	timeout   time.Duration
}

// NewBackfillCommand is ontime backfill: a ScheduledJob's missed runs over a range, as a Backfill.
func NewBackfillCommand() *cobra.Command {
	var cluster cli.ClusterFlags
	var opts backfillOptions
	cmd := &cobra.Command{
		Use:   "backfill sj/NAME --from TIME --to TIME",
		Short: "Run a ScheduledJob's past times now",
		Long: `Run the times of a ScheduledJob's schedule from --from to --to (both
included), oldest first, at most --max-active at once. The command creates a
Backfill, which the controller carries out: it goes on after the command
exits and across controller restarts, and starts each time at most once. A
time's Job has the name a scheduled run of that time has, so a time that has
a Job is not run again unless --redo asks: missing (the default) runs the
times without a Job, failed also reruns those whose Job failed, all reruns
every time. kubectl get backfill shows the progress; deleting the Backfill
stops it (and deletes its Jobs). --dry-run lists the times and what would
happen to each, creating nothing.

Times are RFC 3339 (2026-11-20T06:00:00Z) or a date (2026-11-20, midnight in
the ScheduledJob's time zone).`,
		Example: `  ontime backfill sj/nightly-report -n reports --from 2026-11-01 --to 2026-11-20 --dry-run
  ontime backfill sj/nightly-report -n reports --from 2026-11-01 --to 2026-11-20 --max-active 3 --wait
  kubectl get backfills -n reports`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, key, err := cluster.ScheduledJob(args[0])
			if err != nil {
				return err
			}
			return runBackfill(cmd.Context(), cmd.OutOrStdout(), c, key, opts)
		},
	}
	cluster.Bind(cmd, "", "namespace of the ScheduledJob (default: the kubeconfig context's)")
	cmd.ValidArgsFunction = cli.CompleteScheduledJobs(&cluster)
	flags := cmd.Flags()
	flags.StringVar(&opts.from, "from", "", "the earliest time to run, included (RFC 3339, or a date)")
	flags.StringVar(&opts.to, "to", "", "the latest time to run, included (RFC 3339, or a date); in the past")
	flags.StringVar(&opts.name, "name", "", "the Backfill's name (default: the ScheduledJob's and a hash of the flags)")
	flags.Int32Var(&opts.maxActive, "max-active", 1, "how many of the backfill's runs may be active at once (1 to 100)")
	flags.StringVar(&opts.redo, "redo", "missing", "which times that have a Job run again: missing (none), failed, or all")
	flags.BoolVar(&opts.dryRun, "dry-run", false, "list the times and what would happen to each; create nothing")
	flags.BoolVar(&opts.wait, "wait", false, "wait until the backfill is complete, printing its progress")
	flags.DurationVar(&opts.timeout, "timeout", time.Hour, "how long --wait waits")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// runBackfill reads the ScheduledJob, builds the Backfill, and lists,
// creates or follows it.
func runBackfill(ctx context.Context, out io.Writer, c client.Client, key types.NamespacedName, opts backfillOptions) error {
	sj := &v1alpha1.ScheduledJob{}
	if err := c.Get(ctx, key, sj); err != nil {
		if apierrors.IsNotFound(err) {
			return cli.BadInput("scheduledjob %s not found in namespace %s", key.Name, key.Namespace)
		}
		return err
	}
	bf, err := buildBackfill(sj, opts, cli.Now())
	if err != nil {
		return err
	}
	if opts.dryRun {
		return listBackfill(ctx, out, c, sj, bf)
	}
	if err := c.Create(ctx, bf); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return cli.BadInput("backfill %s already exists in namespace %s (kubectl get backfill %s -n %s); delete it, or give --name", bf.Name, bf.Namespace, bf.Name, bf.Namespace)
		}
		return fmt.Errorf("creating the backfill: %w", err)
	}
	fmt.Fprintf(out, "backfill.ontime.dev/%s created: %s from %s to %s, at most %d at once, redo %s\n", bf.Name, sj.Name,
		bf.Spec.From.UTC().Format(time.RFC3339), bf.Spec.To.UTC().Format(time.RFC3339), bf.Spec.MaxActive, bf.Spec.Redo)
	if !opts.wait {
		return nil
	}
	return followBackfill(ctx, out, c, client.ObjectKeyFromObject(bf), opts.timeout)
}

// buildBackfill is the Backfill the flags ask for, checked as admission
// will check it.
func buildBackfill(sj *v1alpha1.ScheduledJob, opts backfillOptions, now time.Time) (*v1alpha1.Backfill, error) {
	m, err := sj.Meaning(v1alpha1.PlacementChoices(sj.RecordedPlacement()))
	if err != nil {
		return nil, fmt.Errorf("scheduledjob %s: %w", sj.Name, err)
	}
	from, err := parseBackfillTime("--from", opts.from, m.Location)
	if err != nil {
		return nil, err
	}
	to, err := parseBackfillTime("--to", opts.to, m.Location)
	if err != nil {
		return nil, err
	}
	redo, ok := map[string]v1alpha1.BackfillRedo{"missing": v1alpha1.RedoMissing, "failed": v1alpha1.RedoFailed, "all": v1alpha1.RedoAll}[strings.ToLower(opts.redo)]
	if !ok {
		return nil, cli.BadInput("--redo %q: write missing, failed or all", opts.redo)
	}
	if opts.maxActive < 1 || opts.maxActive > 100 {
		return nil, cli.BadInput("--max-active %d: from 1 to 100", opts.maxActive)
	}
	bf := &v1alpha1.Backfill{
		ObjectMeta: metav1.ObjectMeta{Name: opts.name, Namespace: sj.Namespace},
		Spec: v1alpha1.BackfillSpec{ScheduledJobName: sj.Name, From: metav1.Time{Time: from}, To: metav1.Time{Time: to},
			MaxActive: opts.maxActive, Redo: redo},
	}
	if bf.Name == "" {
		bf.Name = defaultBackfillName(bf)
	}
	if errs := validation.ValidateBackfill(bf, now); len(errs) > 0 {
		return nil, cli.BadInput("%s", strings.ReplaceAll(errs.ToAggregate().Error(), "spec.to", "--to"))
	}
	return bf, nil
}

// parseBackfillTime reads RFC 3339, or a date at midnight in loc.
func parseBackfillTime(flag, value string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, value); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, value, loc); err == nil {
		return t, nil
	}
	return time.Time{}, cli.BadInput("%s %q: write RFC 3339 (2026-11-20T06:00:00Z) or a date (2026-11-20)", flag, value)
}

// defaultBackfillName is the ScheduledJob's name and a hash of what is
// backfilled, so that running the same command twice finds the first
// Backfill instead of starting a second. It fits a label value (63).
func defaultBackfillName(bf *v1alpha1.Backfill) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%d|%s", bf.Spec.ScheduledJobName, bf.Spec.From.Unix(), bf.Spec.To.Unix(), bf.Spec.Redo))
	prefix := bf.Spec.ScheduledJobName
	if len(prefix) > 40 {
		prefix = strings.TrimRight(prefix[:40], "-.")
	}
	return prefix + "-backfill-" + hex.EncodeToString(sum[:])[:8]
}

// listBackfill prints every time the Backfill covers and what it would do
// with it, as the controller decides it (the live schedule's later
// decisions aside).
func listBackfill(ctx context.Context, out io.Writer, c client.Client, sj *v1alpha1.ScheduledJob, bf *v1alpha1.Backfill) error {
	m, _ := sj.Meaning(v1alpha1.PlacementChoices(sj.RecordedPlacement()))
	if !m.RunAt.IsZero() || m.Schedule != nil && m.Schedule.Interval() > 0 {
		return cli.BadInput("scheduledjob %s has no schedule to backfill (runAt or @every)", sj.Name)
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(sj.Namespace), client.MatchingLabels{v1alpha1.ScheduledJobLabel: sj.Name}); err != nil {
		return err
	}
	byName := map[string]*batchv1.Job{}
	for i := range jobs.Items {
		byName[jobs.Items[i].Name] = &jobs.Items[i]
	}
	runs := m.Runs(time.Time{})
	counts := map[string]int{}
	total := 0
	for t := runs.Next(bf.Spec.From.Add(-time.Nanosecond)); !t.IsZero() && !t.After(bf.Spec.To.Time); t = runs.Next(t) {
		if total++; total > v1alpha1.BackfillMaxTimes {
			return cli.BadInput("--from to --to holds more than %d times; split it", v1alpha1.BackfillMaxTimes)
		}
		action := dryRunAction(byName[sj.JobName(t)], bf.Spec.Redo)
		counts[action]++
		fmt.Fprintf(out, "%s  %s  %s\n", t.In(m.Location).Format(time.RFC3339), sj.JobName(t), action)
	}
	fmt.Fprintf(out, "%d times: %d to run, %d to rerun, %d to skip (dry run: nothing created)\n", total, counts["run"], counts["rerun"], total-counts["run"]-counts["rerun"])
	return nil
}

// dryRunAction is what the backfill does with a time whose Job is job.
func dryRunAction(job *batchv1.Job, redo v1alpha1.BackfillRedo) string {
	if job == nil {
		return "run"
	}
	condition, finished := v1alpha1.JobFinished(job)
	switch {
	case redo == v1alpha1.RedoAll, redo == v1alpha1.RedoFailed && finished && condition == batchv1.JobFailed:
		return "rerun"
	case !finished:
		return "skip (its Job is active)"
	case condition == batchv1.JobFailed:
		return "skip (its Job failed)"
	}
	return "skip (its Job succeeded)"
}

// followBackfill prints the Backfill's progress as it changes until it is
// complete.
func followBackfill(ctx context.Context, out io.Writer, c client.Client, key types.NamespacedName, timeout time.Duration) error {
	last := ""
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		bf := &v1alpha1.Backfill{}
		if err := c.Get(ctx, key, bf); err != nil {
			return false, err
		}
		line := fmt.Sprintf("%s done, %d active, %d failed", orDash(bf.Status.Done), bf.Status.ActiveCount, bf.Status.Failed)
		if p := meta.FindStatusCondition(bf.Status.Conditions, v1alpha1.BackfillProgressing); p != nil && p.Status == metav1.ConditionFalse {
			line += fmt.Sprintf(" (%s: %s)", p.Reason, p.Message)
		}
		if line != last {
			fmt.Fprintf(out, "%s  %s\n", cli.Now().UTC().Format(time.TimeOnly), line)
			last = line
		}
		return meta.IsStatusConditionTrue(bf.Status.Conditions, v1alpha1.BackfillComplete), nil
	})
	if err != nil {
		return fmt.Errorf("backfill %s not complete within %v (kubectl describe backfill %s -n %s): %w", key.Name, timeout, key.Name, key.Namespace, err)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
