package app

import (
	"context"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// completeScheduledJobs completes a command's first argument with sj/NAME
// for each ScheduledJob of its namespace (-n, else the context's), read
// with its cluster flags (cli.ClusterFlags.CompleteFrom).
func completeScheduledJobs(cluster *cli.ClusterFlags) cobra.CompletionFunc {
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
