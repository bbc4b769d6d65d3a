// Package cli is what ontime's commands share: the error a user caused
// (exit code 2) and kubectl's flags for reaching a cluster.
package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/internal/scheme"
)

// InputError marks errors the user caused; they exit with code 2.
type InputError struct{ err error }

func (e InputError) Error() string { return e.err.Error() }
func (e InputError) Unwrap() error { return e.err }

// Input marks err as one the user caused.
func Input(err error) error { return InputError{err} }

// BadInput is an InputError that says what was wrong, naming the flag or
// argument and its value.
func BadInput(format string, args ...any) error {
	return InputError{fmt.Errorf(format, args...)}
}

// ClusterFlags are kubectl's flags for reaching a cluster, on every command
// that talks to one: --kubeconfig, --context, --namespace (-n), and --as /
// --as-group to act as someone else, as kubectl does.
type ClusterFlags struct {
	Kubeconfig, Context, Namespace, As string
	AsGroups                           []string
}

// Bind adds the flags to cmd; namespaceDefault and namespaceHelp say what
// the command's namespace means (no --namespace without help).
func (f *ClusterFlags) Bind(cmd *cobra.Command, namespaceDefault, namespaceHelp string) {
	flags := cmd.Flags()
	flags.StringVar(&f.Kubeconfig, "kubeconfig", "", "path to a kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	flags.StringVar(&f.Context, "context", "", "the kubeconfig context to use (default: its current context)")
	flags.StringVar(&f.As, "as", "", "user to impersonate, as kubectl --as")
	flags.StringSliceVar(&f.AsGroups, "as-group", nil, "group to impersonate, as kubectl --as-group (repeatable)")
	if namespaceHelp != "" {
		flags.StringVarP(&f.Namespace, "namespace", "n", namespaceDefault, namespaceHelp)
	}
}

// Loader follows kubectl's loading rules with the flags' overrides.
func (f *ClusterFlags) Loader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{
		CurrentContext: f.Context,
		AuthInfo:       clientcmdapi.AuthInfo{Impersonate: f.As, ImpersonateGroups: f.AsGroups},
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}

// RestConfig is the cluster's address and credentials.
func (f *ClusterFlags) RestConfig() (*rest.Config, error) {
	config, err := f.Loader().ClientConfig()
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
