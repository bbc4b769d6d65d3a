package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// completionTimeout bounds the cluster read behind a completion: the shell
// waits on it.
const completionTimeout = 5 * time.Second

// completeScheduledJobs completes a command's first argument with sj/NAME
// for each ScheduledJob of its namespace (-n, else the context's), read
// with its cluster flags, as kubectl completes resource names. Nothing is
// offered when the cluster cannot be read: the shell then completes
// nothing rather than file names.
func completeScheduledJobs(cluster *cli.ClusterFlags) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, namespace, err := cluster.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		var list v1alpha1.ScheduledJobList
		if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []cobra.Completion
		for _, sj := range list.Items {
			if name := "sj/" + sj.Name; strings.HasPrefix(name, toComplete) {
				names = append(names, name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
