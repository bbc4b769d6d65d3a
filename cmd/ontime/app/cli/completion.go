package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// CompleteScheduledJobs completes a command's first argument with sj/NAME
// for each ScheduledJob of its namespace (-n, else the context's), read
// with its cluster flags (ClusterFlags.CompleteFrom).
func CompleteScheduledJobs(cluster *ClusterFlags) cobra.CompletionFunc {
	complete := cluster.CompleteFrom(listScheduledJobs)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return complete(cmd, args, toComplete)
	}
}

// listScheduledJobs is sj/NAME of the namespace's ScheduledJobs.
func listScheduledJobs(ctx context.Context, c client.Client, namespace string) ([]string, error) {
	var list v1alpha1.ScheduledJobList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var names []string
	for _, sj := range list.Items {
		names = append(names, "sj/"+sj.Name)
	}
	return names, nil
}

// ScheduledJobName accepts NAME, sj/NAME, scheduledjob/NAME,
// scheduledjobs/NAME and scheduledjob.ontime.dev/NAME.
func ScheduledJobName(arg string) (string, error) {
	kind, name, found := strings.Cut(arg, "/")
	if !found {
		name, kind = kind, "sj"
	}
	switch strings.ToLower(kind) {
	case "sj", "scheduledjob", "scheduledjobs", "scheduledjob.ontime.dev", "scheduledjobs.ontime.dev":
	default:
		return "", BadInput("%q: not a ScheduledJob; write sj/NAME", arg)
	}
	if name == "" {
		return "", BadInput("%q: the name is empty", arg)
	}
	return name, nil
}
