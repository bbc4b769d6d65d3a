//go:build integration

package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/ontime-dev/ontime/cmd/ontime/app/clitest"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// TestControllerWaitsForTheAPIServer (issue #21): a controller started
// while the API server does not answer waits for it, alive, answering
// /healthz (its liveness probe) and refusing /readyz, instead of exiting,
// which a kubelet answers with a growing CrashLoopBackOff; once the API
// server answers, it runs ScheduledJobs. Before, it exited at once
// ("creating the manager: failed to get server groups").
func TestControllerWaitsForTheAPIServer(t *testing.T) {
	// Its own API server and processes, no package state: beside the others.
	t.Parallel()
	c, config := clitest.StartAPIServerConfig(t, "config/crd/bases")
	// The controller reaches the API server through a proxy that does not
	// listen yet: connection refused, as while kube-apiserver is down.
	proxy := testenv.FreeAddress(t)
	proxied := rest.CopyConfig(config)
	proxied.Host = "https://" + proxy
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.WriteKubeconfig(proxied, kubeconfig); err != nil {
		t.Fatal(err)
	}
	probes := testenv.FreeAddress(t)
	p := startControllerProcess(t, kubeconfig, "--health-probe-bind-address", probes)
	testenv.Eventually(t, 30*time.Second, "/healthz to answer while the API server does not", func() bool {
		select {
		case <-p.exited:
			t.Fatalf("the controller exited while the API server did not answer (%v):\n%s", p.waitErr, p.output())
		default:
		}
		return statusOf("http://"+probes+"/healthz") == http.StatusOK
	})
	if code := statusOf("http://" + probes + "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz answered %d while waiting for the API server, want 503", code)
	}

	api, err := url.Parse(config.Host)
	if err != nil {
		t.Fatal(err)
	}
	forward(t, proxy, api.Host)
	runsOnce(t, c, "after-the-outage")
}

// statusOf is the status code of a GET of u (0 if it did not answer).
func statusOf(u string) int {
	resp, err := http.Get(u)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// forward accepts connections on from and relays them to to until the test
// ends.
func forward(t *testing.T, from, to string) {
	t.Helper()
	l, err := net.Listen("tcp", from)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(context.Background(), "tcp", to)
			if err != nil {
				_ = in.Close()
				continue
			}
			go relay(in, out)
		}
	}()
}

// relay copies between two connections until either closes.
func relay(a, b net.Conn) {
	done := make(chan struct{}, 2)
	copyOne := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go copyOne(a, b)
	go copyOne(b, a)
	<-done
	_ = a.Close()
	_ = b.Close()
}
