// Package testenv starts a real etcd and kube-apiserver (controller-runtime's
// envtest) for integration tests, from the binaries hack/kube-binaries.sh
// builds. Nothing here talks to a cluster someone started by hand.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Start starts etcd and kube-apiserver, installs the CRDs found in crdDirs
// (relative to the repository root) and returns the environment and a client
// config for it. The caller stops it with env.Stop().
func Start(crdDirs ...string) (*envtest.Environment, *rest.Config, error) {
	return StartWith(Options{CRDDirs: crdDirs})
}

// startTimeout is how long each control-plane process may take to start:
// KUBEBUILDER_CONTROLPLANE_START_TIMEOUT if set, else 2 minutes.
func startTimeout() time.Duration {
	if value := os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT"); value != "" {
		if d, err := time.ParseDuration(value); err == nil {
			return d
		}
	}
	return 2 * time.Minute
}

// Options say what to install into the test API server.
type Options struct {
	// CRDDirs hold CRD manifests, relative to the repository root unless
	// absolute.
	CRDDirs []string
	// WebhookDirs hold webhook configurations, relative to the repository
	// root. envtest points them at a local server it makes certificates
	// for: serve on env.WebhookInstallOptions.LocalServingHost, Port and
	// CertDir.
	WebhookDirs []string
	// APIServerFlags are kube-apiserver flags beyond envtest's, such as
	// a smaller --max-requests-inflight for a test of its flow control.
	APIServerFlags map[string]string
}

// StartWith starts the test API server with opts.
func StartWith(opts Options) (*envtest.Environment, *rest.Config, error) {
	assets, err := Assets()
	if err != nil {
		return nil, nil, err
	}
	root := RepoRoot()
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		ErrorIfCRDPathMissing: true,
		// make test runs the envtest suites at the lowest CPU priority
		// beside several kwok clusters: on 2 cores a kube-apiserver then
		// took more than envtest's default 20 s to answer, five times in a
		// row (2026-11-27). KUBEBUILDER_CONTROLPLANE_START_TIMEOUT, if set,
		// still wins.
		ControlPlaneStartTimeout: startTimeout(),
		// The same load made the CRDs take more than envtest's default
		// 10 s to be served after they were created (CI, 2026-11-28:
		// "waiting for CRDs to appear as API resources: context deadline
		// exceeded"); the webhook configurations wait likewise.
		CRDInstallOptions:     envtest.CRDInstallOptions{MaxTime: startTimeout()},
		WebhookInstallOptions: envtest.WebhookInstallOptions{MaxTime: startTimeout()},
	}
	for _, dir := range opts.CRDDirs {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, dir)
	}
	for _, dir := range opts.WebhookDirs {
		env.WebhookInstallOptions.Paths = append(env.WebhookInstallOptions.Paths, filepath.Join(root, dir))
	}
	for name, value := range opts.APIServerFlags {
		env.ControlPlane.GetAPIServer().Configure().Set(name, value)
	}
	config, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	return env, config, nil
}

// Assets returns the directory holding etcd and kube-apiserver:
// $KUBEBUILDER_ASSETS when set (make test sets it), else the version-keyed
// cache directory of hack/kube-binaries.sh.
func Assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	out, err := exec.Command(filepath.Join(RepoRoot(), "hack", "kube-binaries.sh"), "--print").Output()
	if err != nil {
		return "", fmt.Errorf("locating the control-plane binaries: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	for _, binary := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, binary)); err != nil {
			return "", fmt.Errorf("%s is not built yet: run `make test` (or hack/kube-binaries.sh), which builds it into %s", binary, dir)
		}
	}
	return dir, nil
}

// WriteKubeconfig writes a kubeconfig for config to path, for a process
// that takes --kubeconfig (the controller, started as users start it).
func WriteKubeconfig(config *rest.Config, path string) error {
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["envtest"] = &clientcmdapi.Cluster{Server: config.Host, CertificateAuthorityData: config.CAData}
	kubeconfig.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{ClientCertificateData: config.CertData, ClientKeyData: config.KeyData, Token: config.BearerToken}
	kubeconfig.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest"}
	kubeconfig.CurrentContext = "envtest"
	return clientcmd.WriteToFile(*kubeconfig, path)
}

// RepoRoot returns the repository's root directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
