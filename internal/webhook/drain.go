package webhook

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// DefaultDrain is how long a stopping replica drains the webhook's
// connections by default (--webhook-drain).
const DefaultDrain = 3 * time.Second

// DrainingServer is the admission webhook's server, stopped so that no
// admission request is cut off.
//
// The API server calls a webhook over HTTP/1.1 keep-alive connections and
// does not retry a POST that fails on a reused one. http.Server.Shutdown
// closes idle connections at once; one the API server is writing a request
// on at that moment fails the admission ("write: broken pipe"), and the
// user's write with it. So a stopping server drains first: for Drain it
// keeps serving and answers every request with "Connection: close", which
// makes the API server itself close each connection it uses; then it shuts
// down, when the connections left are ones the API server has not used for
// Drain. (HTTP/1.1 has no way to close an idle connection that cannot race
// a request; the drain makes the race one with a connection left unused.)
//
// The drain does not hold up the manager's stop, and so neither the
// release of the leader's Lease, which the manager does last: Start returns
// when its context ends, and Wait, before the process exits, waits for it.
type DrainingServer struct {
	webhook.Server
	drain    time.Duration
	clock    clock.Clock
	draining atomic.Bool
	started  atomic.Bool
	stopped  chan struct{}
}

// NewDrainingServer wraps server, which it starts and stops.
func NewDrainingServer(server webhook.Server, drain time.Duration, clk clock.Clock) *DrainingServer {
	return &DrainingServer{Server: server, drain: drain, clock: clk, stopped: make(chan struct{})}
}

// Register serves handler at path, closing the connection after each
// request once the server drains.
func (s *DrainingServer) Register(path string, handler http.Handler) {
	s.Server.Register(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		handler.ServeHTTP(w, r)
	}))
}

// Start serves until ctx ends, then drains in the background (see Wait).
func (s *DrainingServer) Start(ctx context.Context) error {
	s.started.Store(true)
	serving, stop := context.WithCancel(context.WithoutCancel(ctx))
	result := make(chan error, 1)
	go func() { result <- s.Server.Start(serving) }()
	select {
	case err := <-result: // it could not serve (a port in use, no certificate)
		stop()
		close(s.stopped)
		return err
	case <-ctx.Done():
	}
	s.draining.Store(true)
	go func() {
		<-s.clock.After(s.drain)
		stop()
		if err := <-result; err != nil {
			ctrl.Log.WithName("webhook").Error(err, "serving the webhook while it drained")
		}
		close(s.stopped)
	}()
	return nil
}

// Wait returns once a started server has drained and shut down.
func (s *DrainingServer) Wait() {
	if s.started.Load() {
		<-s.stopped
	}
}
