package cli

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
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
	f.config.AddFlags(f.flags)
	if namespaceHelp != "" {
		f.flags.Lookup("namespace").Usage = namespaceHelp
		_ = cmd.RegisterFlagCompletionFunc("namespace", f.completeNamespaces)
	}
	_ = cmd.RegisterFlagCompletionFunc("context", f.completeContexts)
	// ontime reads no discovery: kubectl's cache directory means nothing.
	_ = f.flags.MarkHidden("cache-dir")
}

// completeNamespaces completes -n with the cluster's namespaces, as
// kubectl does; nothing when they cannot be read.
func (f *ClusterFlags) completeNamespaces(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, _, err := f.Client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var list corev1.NamespaceList
	if err := c.List(ctx, &list); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []cobra.Completion
	for _, ns := range list.Items {
		if strings.HasPrefix(ns.Name, toComplete) {
			names = append(names, ns.Name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeContexts completes --context with the kubeconfig's contexts.
func (f *ClusterFlags) completeContexts(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	raw, err := f.Loader().RawConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []cobra.Completion
	for name := range raw.Contexts {
		if strings.HasPrefix(name, toComplete) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, cobra.ShellCompDirectiveNoFileComp
}

// Named reports whether a flag names the cluster or the credentials,
// rather than leaving them to the kubeconfig's current context (the
// controller then uses its pod's service account).
func (f *ClusterFlags) Named() bool {
	named := false
	f.flags.Visit(func(flag *pflag.Flag) {
		if flag.Name != "namespace" && f.isConnectionFlag(flag.Name) {
			named = true
		}
	})
	return named
}

// isConnectionFlag says whether name is one of ConfigFlags' flags.
func (f *ClusterFlags) isConnectionFlag(name string) bool {
	set := pflag.NewFlagSet("", pflag.ContinueOnError)
	genericclioptions.NewConfigFlags(false).AddFlags(set)
	return set.Lookup(name) != nil
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
