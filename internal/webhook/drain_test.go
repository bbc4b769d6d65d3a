package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// TestDrainingServerClosesConnectionsBeforeItStops: once stopped, the
// webhook answers every request with "Connection: close" for the drain,
// so that the API server, which calls it over HTTP/1.1 keep-alive and does
// not retry a POST, closes the connections itself; only after the drain
// does it stop listening. Stopping does not wait for the drain.
func TestDrainingServerClosesConnectionsBeforeItStops(t *testing.T) {
	const drain = 3 * time.Second
	cert, client := testCertificate(t)
	port := freePort(t)
	clk := clocktesting.NewFakeClock(time.Now())
	server := NewDrainingServer(webhook.NewServer(webhook.Options{
		Host: "127.0.0.1", Port: port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
		}},
	}), drain, clk)
	server.Register("/validate", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	started := make(chan error, 1)
	go func() { started <- server.Start(ctx) }()
	url := "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + "/validate"
	if err := waitForServer(net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err != nil {
		t.Fatal(err)
	}
	if closes := post(t, client, url); closes {
		t.Fatal("a serving webhook answered with Connection: close; want keep-alive")
	}

	stop()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return when its context ended: it holds up the manager's stop (and the Lease's release) for the drain")
	}
	// Draining: still served, on a reused connection and a new one, each
	// answer closing its connection.
	for range 2 {
		if closes := post(t, client, url); !closes {
			t.Fatal("a draining webhook answered without Connection: close; the API server would keep the connection for the shutdown to cut")
		}
	}

	waitForWaiter(t, clk)
	clk.Step(drain)
	server.Wait()
	if _, err := client.Post(url, "application/json", strings.NewReader("{}")); err == nil {
		t.Error("the webhook still answers after the drain; want it stopped")
	}
}

// post sends one admission-like POST and reports whether the answer closes
// the connection.
func post(t *testing.T, client *http.Client, url string) bool {
	t.Helper()
	response, err := client.Post(url, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = response.Body.Close() }()
	if body := readAll(response.Body); response.StatusCode != http.StatusOK || body != "ok" {
		t.Fatalf("answer %d %q", response.StatusCode, body)
	}
	return response.Close
}

// testCertificate is httptest's certificate for 127.0.0.1, and an HTTP/1.1
// client (as the API server calls webhooks) that trusts it.
func testCertificate(t *testing.T) (tls.Certificate, *http.Client) {
	t.Helper()
	issuer := httptest.NewTLSServer(http.NotFoundHandler())
	issuer.Close()
	client := issuer.Client()
	t.Cleanup(client.CloseIdleConnections)
	return issuer.TLS.Certificates[0], client
}

func freePort(t *testing.T) int {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = listener.Close() }()
	return listener.Addr().(*net.TCPAddr).Port
}

func waitForWaiter(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal(errors.New("the drain never waited on the clock"))
		}
		time.Sleep(time.Millisecond)
	}
}

// waitForServer waits until a TLS server listens at address.
func waitForServer(address string) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", address, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a readiness probe
		if err == nil {
			return conn.Close()
		}
		time.Sleep(50 * time.Millisecond) // waiting for the server to listen
	}
	return fmt.Errorf("webhook server at %s did not start", address)
}

// readAll is what r gives until its first error.
func readAll(r interface{ Read([]byte) (int, error) }) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}
