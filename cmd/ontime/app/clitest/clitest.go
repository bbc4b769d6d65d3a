// Package clitest starts what the commands' integration tests run against:
// a test API server (envtest) with ontime's scheme and namespace, and a
// kubeconfig for the commands' --kubeconfig.
package clitest

import (
	"context"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// StartAPIServer starts a test API server with the CRDs of crdDirs.
func StartAPIServer(t *testing.T, crdDirs ...string) client.Client {
	t.Helper()
	c, _ := StartAPIServerConfig(t, crdDirs...)
	return c
}

// StartAPIServerConfig is StartAPIServer, with the API server's client
// config (for a kubeconfig).
func StartAPIServerConfig(t *testing.T, crdDirs ...string) (client.Client, *rest.Config) {
	t.Helper()
	env, config, err := testenv.Start(crdDirs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ontime-system"}}); err != nil {
		t.Fatal(err)
	}
	return c, config
}

// StartAPIServerKubeconfig is StartAPIServer with a kubeconfig for it,
// for the commands' --kubeconfig.
func StartAPIServerKubeconfig(t *testing.T, crdDirs ...string) (client.Client, string) {
	t.Helper()
	c, config := StartAPIServerConfig(t, crdDirs...)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.WriteKubeconfig(config, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return c, kubeconfig
}
