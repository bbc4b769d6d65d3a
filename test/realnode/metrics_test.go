//go:build realnode

package realnode

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ontime-dev/ontime/test/framework"
)

// The ServiceAccount a Prometheus would scrape as: the chart's
// metrics.readers names it.
const (
	scraperName      = "prometheus"
	scraperNamespace = "monitoring"
)

// createScraper creates the scraper's namespace and ServiceAccount, as a
// monitoring stack installed before ontime would have.
func (e *env) createScraper(t *testing.T) {
	t.Helper()
	e.cluster.Kubectl(t, "create", "namespace", scraperNamespace)
	e.cluster.Kubectl(t, "create", "serviceaccount", scraperName, "-n", scraperNamespace)
}

// checkMetricsAccess scrapes a controller pod's /metrics from the host as
// Prometheus does (HTTPS, the port the chart sets): a request without a
// token is refused, one with a token of a ServiceAccount metrics.readers
// does not name is forbidden, and the scraper's token reads the metrics.
func (e *env) checkMetricsAccess(t *testing.T) {
	t.Helper()
	pod := e.controllerPods(t)[0]
	url := "https://" + net.JoinHostPort(pod.Status.PodIP, "8443") + "/metrics"
	scraper := strings.TrimSpace(e.cluster.Kubectl(t, "create", "token", scraperName, "-n", scraperNamespace))
	other := strings.TrimSpace(e.cluster.Kubectl(t, "create", "token", "default", "-n", scraperNamespace))
	for _, c := range []struct {
		who, token string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"monitoring/default, not a reader", other, http.StatusForbidden},
		{"monitoring/prometheus, a reader", scraper, http.StatusOK},
	} {
		var code int
		var body string
		var err error
		framework.Eventually(t, 30*time.Second, "the metrics endpoint to answer "+c.who, func() bool {
			code, body, err = scrape(url, c.token)
			return err == nil
		})
		if code != c.want || (code == http.StatusOK && !strings.Contains(body, "# HELP ")) {
			t.Errorf("GET %s as %s: %d, want %d: %.200s", url, c.who, code, c.want, body)
		}
	}
	framework.Progress("%s: refused without a token (401) and to a ServiceAccount not among metrics.readers (403); read by %s/%s", url, scraperNamespace, scraperName)
}

// scrape gets url with a bearer token, if any, trusting the endpoint's
// self-signed certificate as the chart's ServiceMonitor does.
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
		return 0, "", fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
