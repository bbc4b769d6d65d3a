//go:build integration

package controller

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// TestSecureMetrics serves /metrics as the controller does by default
// (MetricsServer, secure) against a real API server and checks who it
// answers: a caller without a token is refused (401), a service account
// without get on /metrics too (403), and one bound to a ClusterRole
// granting it, as the chart binds its scraper, reads the metrics (200).
// Not secure, anyone reads them.
func TestSecureMetrics(t *testing.T) {
	env, config, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	clientset := kubernetes.NewForConfigOrDie(config)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	scraper := tokenOf(ctx, t, clientset, "scraper", true)
	stranger := tokenOf(ctx, t, clientset, "stranger", false)

	secure, plain := testenv.FreeAddress(t), testenv.FreeAddress(t)
	for address, isSecure := range map[string]bool{secure: true, plain: false} {
		mgr, err := ctrl.NewManager(config, ctrl.Options{Scheme: ontimescheme.New(), Metrics: MetricsServer(address, isSecure), HealthProbeBindAddress: "0"})
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = mgr.Start(ctx) }()
	}

	cases := []struct {
		name, url, token string
		want             int
	}{
		{"no token", "https://" + secure + "/metrics", "", http.StatusUnauthorized},
		{"a token without get on /metrics", "https://" + secure + "/metrics", stranger, http.StatusForbidden},
		{"the scraper's token", "https://" + secure + "/metrics", scraper, http.StatusOK},
		{"plain HTTP, not secure", "http://" + plain + "/metrics", "", http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got int
			var body string
			testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%s answering", tc.url), func() bool {
				got, body, err = scrape(tc.url, tc.token)
				return err == nil
			})
			if got != tc.want {
				t.Fatalf("%s: %d, want %d: %.200s", tc.url, got, tc.want, body)
			}
		})
	}
}

// tokenOf creates a service account and returns a token of it; reader
// binds it to a ClusterRole granting get on /metrics.
func tokenOf(ctx context.Context, t *testing.T, clientset kubernetes.Interface, name string, reader bool) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	if _, err := clientset.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if reader {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
		if _, err := clientset.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-" + name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: "default"}}}
		if _, err := clientset.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	token, err := clientset.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return token.Status.Token
}

// scrape gets url with the bearer token, if any, trusting any
// certificate: the endpoint's is self-signed.
func scrape(url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the endpoint's certificate is self-signed
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
