package main

import (
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/internal/scheme"
)

// clusterFlags are kubectl's flags for reaching a cluster, on every command
// that talks to one: --kubeconfig, --context, --namespace (-n), and --as /
// --as-group to act as someone else, as kubectl does.
type clusterFlags struct {
	kubeconfig, context, namespace, as string
	asGroups                           []string
}

// bind adds the flags to cmd; namespaceDefault and namespaceHelp say what
// the command's namespace means.
func (f *clusterFlags) bind(cmd *cobra.Command, namespaceDefault, namespaceHelp string) {
	flags := cmd.Flags()
	flags.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	flags.StringVar(&f.context, "context", "", "the kubeconfig context to use (default: its current context)")
	flags.StringVar(&f.as, "as", "", "user to impersonate, as kubectl --as")
	flags.StringSliceVar(&f.asGroups, "as-group", nil, "group to impersonate, as kubectl --as-group (repeatable)")
	if namespaceHelp != "" {
		flags.StringVarP(&f.namespace, "namespace", "n", namespaceDefault, namespaceHelp)
	}
}

// loader follows kubectl's loading rules with the flags' overrides.
func (f *clusterFlags) loader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	overrides := &clientcmd.ConfigOverrides{
		CurrentContext: f.context,
		AuthInfo:       clientcmdapi.AuthInfo{Impersonate: f.as, ImpersonateGroups: f.asGroups},
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}

// restConfig is the cluster's address and credentials.
func (f *clusterFlags) restConfig() (*rest.Config, error) {
	config, err := f.loader().ClientConfig()
	if err != nil {
		return nil, badInput("loading the kubeconfig: %v", err)
	}
	return config, nil
}

// client connects and returns the namespace to use: -n, else the context's.
func (f *clusterFlags) client() (client.Client, string, error) {
	config, err := f.restConfig()
	if err != nil {
		return nil, "", err
	}
	namespace := f.namespace
	if namespace == "" {
		if namespace, _, err = f.loader().Namespace(); err != nil {
			return nil, "", err
		}
	}
	c, err := client.New(config, client.Options{Scheme: scheme.New()})
	return c, namespace, err
}
