//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/test/framework"
)

// controllerServiceAccount is the chart's ServiceAccount in the namespace
// the e2e renders it for.
const controllerServiceAccount = "system:serviceaccount:ontime-system:ontime-controller"

// checkFlowControl applies the chart's FlowSchemas and has the API server
// classify requests made as the controller's ServiceAccount (impersonated):
// a Lease of its namespace goes to the leader-election schema, a list of
// Jobs to the controller's. The API server names the FlowSchema that
// matched in each response's X-Kubernetes-PF-FlowSchema-UID. The schemas
// are deleted after.
func checkFlowControl(t *testing.T, cluster *framework.Cluster) {
	helm := framework.Helm(t)
	manifest := filepath.Join(t.TempDir(), "flowcontrol.yaml")
	out := framework.Command(t, nil, helm, "template", "ontime", "charts/ontime", "--kube-version", chartKubeVersion, "--namespace", "ontime-system",
		"--show-only", "templates/flowcontrol.yaml")
	if err := os.WriteFile(manifest, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	cluster.Kubectl(t, "apply", "--server-side", "-f", manifest)
	defer cluster.Kubectl(t, "delete", "-f", manifest)
	c := framework.NewClient(t, cluster.Kubeconfig)
	uids := map[string]string{}
	for _, name := range []string{"ontime-controller", "ontime-controller-leader-election"} {
		var schema flowcontrolv1.FlowSchema
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, &schema); err != nil {
			t.Fatal(err)
		}
		uids[string(schema.UID)] = name
	}
	asController, host := impersonating(t, cluster.Kubeconfig, controllerServiceAccount)
	for path, want := range map[string]string{
		"/apis/coordination.k8s.io/v1/namespaces/ontime-system/leases/ontime-controller.ontime.dev": "ontime-controller-leader-election",
		"/apis/batch/v1/jobs?limit=1": "ontime-controller",
	} {
		// The API server takes up new FlowSchemas a moment after they
		// are written.
		framework.Eventually(t, time.Minute, path+" classified by "+want, func() bool {
			resp, err := asController.Get(host + path)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return uids[resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID")] == want
		})
	}
}

// impersonating is an HTTP client to the cluster's API server as user, in
// the groups every ServiceAccount's token carries, and the server's URL.
func impersonating(t *testing.T, kubeconfig, user string) (*http.Client, string) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	config.Impersonate = rest.ImpersonationConfig{UserName: user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ontime-system", "system:authenticated"}}
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		t.Fatal(err)
	}
	return httpClient, config.Host
}
