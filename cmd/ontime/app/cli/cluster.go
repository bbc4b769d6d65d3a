package cli

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/internal/scheme"
)

// ClusterFlags are kubectl's flags for reaching a cluster, on every command
// that talks to one, from k8s.io/cli-runtime as kubectl has them:
// --kubeconfig, --context, --cluster, --user, --server, --token, the TLS
// files, --as, --as-group, --as-uid, --request-timeout and, where the
// command has a namespace, -n (--namespace).
type ClusterFlags struct {
	// Namespace is -n: the command's namespace, else the context's.
	Namespace string
	config    *genericclioptions.ConfigFlags
	flags     *pflag.FlagSet
	// connection names the flags ConfigFlags added, but -n.
	connection []string
}

// Bind adds the flags to cmd; namespaceDefault and namespaceHelp say what
// the command's namespace means (no --namespace without help).
func (f *ClusterFlags) Bind(cmd *cobra.Command, namespaceDefault, namespaceHelp string) {
	f.config = genericclioptions.NewConfigFlags(false)
	f.config.Namespace = nil
	f.Namespace = namespaceDefault
	if namespaceHelp != "" {
		f.config.Namespace = &f.Namespace
	}
	f.flags = cmd.Flags()
	before := map[string]bool{}
	f.flags.VisitAll(func(flag *pflag.Flag) { before[flag.Name] = true })
	f.config.AddFlags(f.flags)
	f.flags.VisitAll(func(flag *pflag.Flag) {
		if !before[flag.Name] && flag.Name != "namespace" {
			f.connection = append(f.connection, flag.Name)
		}
	})
	if namespaceHelp != "" {
		f.flags.Lookup("namespace").Usage = namespaceHelp
		_ = cmd.RegisterFlagCompletionFunc("namespace", f.CompleteFrom(listNamespaces))
	}
	_ = cmd.RegisterFlagCompletionFunc("context", f.completeContexts)
	// ontime reads no discovery: kubectl's cache directory means nothing.
	_ = f.flags.MarkHidden("cache-dir")
}

// CompletionTimeout bounds the cluster read behind a completion: the shell
// waits on it.
const CompletionTimeout = 5 * time.Second

// CompleteFrom completes with the names list reads from the cluster, in
// the flags' namespace, that start with what is typed, as kubectl
// completes names; nothing (and no file names) when the cluster cannot be
// read.
func (f *ClusterFlags) CompleteFrom(list func(ctx context.Context, c client.Client, namespace string) ([]string, error)) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		c, namespace, err := f.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), CompletionTimeout)
		defer cancel()
		names, err := list(ctx, c, namespace)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return matching(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// listNamespaces is the cluster's namespaces, for -n.
func listNamespaces(ctx context.Context, c client.Client, _ string) ([]string, error) {
	var list corev1.NamespaceList
	if err := c.List(ctx, &list); err != nil {
		return nil, err
	}
	var names []string
	for _, ns := range list.Items {
		names = append(names, ns.Name)
	}
	return names, nil
}

// completeContexts completes --context with the kubeconfig's contexts.
func (f *ClusterFlags) completeContexts(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	raw, err := f.Loader().RawConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for name := range raw.Contexts {
		names = append(names, name)
	}
	slices.Sort(names)
	return matching(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// matching keeps the names that start with prefix.
func matching(names []string, prefix string) []cobra.Completion {
	var kept []cobra.Completion
	for _, name := range names {
		if strings.HasPrefix(name, prefix) {
			kept = append(kept, name)
		}
	}
	return kept
}

// Named reports whether a flag names the cluster or the credentials,
// rather than leaving them to the kubeconfig's current context (the
// controller then uses its pod's service account).
func (f *ClusterFlags) Named() bool {
	return slices.ContainsFunc(f.connection, f.flags.Changed)
}

// Loader follows kubectl's loading rules with the flags' overrides.
func (f *ClusterFlags) Loader() clientcmd.ClientConfig {
	return f.config.ToRawKubeConfigLoader()
}

// RestConfig is the cluster's address and credentials.
func (f *ClusterFlags) RestConfig() (*rest.Config, error) {
	// ontime's own --as-group split its value at commas before it took
	// kubectl's, which does not: a script's "--as-group a,b" would now
	// act as one group named "a,b".
	for _, group := range *f.config.ImpersonateGroup {
		if strings.Contains(group, ",") {
			return nil, BadInput("--as-group %q: one group per flag, as in kubectl: --as-group %s", group, strings.ReplaceAll(group, ",", " --as-group "))
		}
	}
	config, err := f.config.ToRESTConfig()
	if err != nil {
		return nil, BadInput("loading the kubeconfig: %v", err)
	}
	return config, nil
}

// Client connects and returns the namespace to use: -n, else the
// context's.
func (f *ClusterFlags) Client() (client.Client, string, error) {
	config, err := f.RestConfig()
	if err != nil {
		return nil, "", err
	}
	namespace := f.Namespace
	if namespace == "" {
		if namespace, _, err = f.Loader().Namespace(); err != nil {
			return nil, "", err
		}
	}
	c, err := client.New(config, client.Options{Scheme: scheme.New()})
	return c, namespace, err
}

// ScheduledJob is the client and the key of the ScheduledJob arg names
// (sj/NAME, in -n's namespace, else the context's).
func (f *ClusterFlags) ScheduledJob(arg string) (client.Client, types.NamespacedName, error) {
	name, err := ScheduledJobName(arg)
	if err != nil {
		return nil, types.NamespacedName{}, err
	}
	c, namespace, err := f.Client()
	if err != nil {
		return nil, types.NamespacedName{}, err
	}
	return c, types.NamespacedName{Namespace: namespace, Name: name}, nil
}
