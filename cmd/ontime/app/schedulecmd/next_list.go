package schedulecmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// everyScheduledJob matches the kind alone (sj, scheduledjobs), as
// `kubectl get sj` lists them: the next runs of every ScheduledJob of the
// namespace, or of every namespace with -A.
var everyScheduledJob = regexp.MustCompile(`^(?i:sj|scheduledjobs?(\.ontime\.dev)?)$`)

// upcomingRun is one run of the merged list.
type upcomingRun struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Run       string `json:"run"`
	// WarmUp is when its warm-up begins, under a fixed lead.
	WarmUp string `json:"warmUp,omitempty"`
	// Schedule is the schedule as the controller runs it (H placed), in
	// TimeZone; a one-time run's is empty.
	Schedule string `json:"schedule,omitempty"`
	TimeZone string `json:"timeZone"`
	at       time.Time
}

// nextOfEvery prints the first count runs after from of the ScheduledJobs
// of cluster's namespace (of every namespace when allNamespaces), merged
// in time order: what runs next, and when its warm-up begins. A suspended
// ScheduledJob has no next run, and one whose schedule no longer parses
// is named on stderr and left out.
func nextOfEvery(cmd *cobra.Command, cluster *cli.ClusterFlags, allNamespaces bool, from time.Time, count int, output *cli.Output) error {
	list, err := scheduledJobsOf(cmd.Context(), cluster, allNamespaces)
	if err != nil {
		return err
	}
	var runs []upcomingRun
	for i := range list.Items {
		sj := &list.Items[i]
		if sj.Spec.Suspend != nil && *sj.Spec.Suspend {
			continue
		}
		m, err := meaningOfLive(sj)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "ontime: left out: %v\n", err)
			continue
		}
		for _, t := range nextRuns(sj, m, from, count) {
			run := upcomingRun{Namespace: sj.Namespace, Name: sj.Name, Run: t.Format(time.RFC3339), TimeZone: m.Location.String(), at: t}
			if m.Scheduled() {
				run.Schedule = m.Effective()
			}
			if w := m.WarmUp; w != nil && !w.AutoLead {
				run.WarmUp = warmUpStart(t, w.Lead).Format(time.RFC3339)
			}
			runs = append(runs, run)
		}
	}
	slices.SortFunc(runs, func(a, b upcomingRun) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	runs = runs[:min(count, len(runs))]
	if output.Structured() {
		return output.Write(cmd.OutOrStdout(), runs)
	}
	return printUpcoming(cmd.OutOrStdout(), runs, allNamespaces, output.Format == "wide")
}

// printUpcoming is the table of nextOfEvery, with the namespace under -A
// as kubectl prints it, and the schedule and time zone when wide.
func printUpcoming(w io.Writer, runs []upcomingRun, allNamespaces, wide bool) error {
	if len(runs) == 0 {
		where := "in the namespace"
		if allNamespaces {
			where = "in any namespace"
		}
		_, err := fmt.Fprintf(w, "No ScheduledJob %s has a next run (there is none, or every one is suspended).\n", where)
		return err
	}
	table := cli.NewListTable(w, allNamespaces, wide, "NAME\tRUN\tWARM-UP FROM", "SCHEDULE\tTIME ZONE")
	for _, r := range runs {
		table.Row(r.Namespace, fmt.Sprintf("%s\t%s\t%s", r.Name, r.Run, cmp.Or(r.WarmUp, "-")), fmt.Sprintf("%s\t%s", cmp.Or(r.Schedule, "once"), r.TimeZone))
	}
	return table.Flush()
}

// scheduledJobsOf lists the ScheduledJobs of cluster's namespace, or of
// every namespace when allNamespaces, as kubectl get sj [-A] does.
func scheduledJobsOf(ctx context.Context, cluster *cli.ClusterFlags, allNamespaces bool) (*v1alpha1.ScheduledJobList, error) {
	c, namespace, err := cluster.Client()
	if err != nil {
		return nil, err
	}
	var options []client.ListOption
	if !allNamespaces {
		options = append(options, client.InNamespace(namespace))
	}
	list := &v1alpha1.ScheduledJobList{}
	return list, c.List(ctx, list, options...)
}
