package recovery

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// CacheCatchUp is how long after the API server last failed to answer
// this process a cache of it may still be behind: a watch that broke
// is started again by client-go's reflector after a backoff that grows to
// 30 s, and up to twice that with its jitter, then it lists.
const CacheCatchUp = 90 * time.Second

// Unanswered remembers when the API server last failed to answer one of
// the process's requests: its transport (Wrap) sees every request, the
// caches' lists and watches, leader election's and the controllers'. A
// controller asks it whether its cache may still be catching up after an
// outage (Within), where a stale view would cost a run. The zero value is
// not usable; a nil *Unanswered says the API server always answered.
type Unanswered struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	last  time.Time
}

// NewUnanswered returns an Unanswered timed by clk.
func NewUnanswered(clk clock.PassiveClock) *Unanswered {
	return &Unanswered{clock: clk}
}

// Wrap is a rest.Config's WrapTransport: it records, at its clock's time,
// every request the API server did not answer (no connection, a reset,
// a timeout) or answered that it cannot serve (502, 503, 504).
func (u *Unanswered) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{next: rt, unanswered: u}
}

type roundTripper struct {
	next       http.RoundTripper
	unanswered *Unanswered
}

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		t.unanswered.record()
	case resp != nil && (resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout):
		t.unanswered.record()
	}
	return resp, err
}

func (u *Unanswered) record() {
	now := u.clock.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	if now.After(u.last) {
		u.last = now
	}
}

// Within reports whether the API server failed to answer a request less
// than d before now.
func (u *Unanswered) Within(now time.Time, d time.Duration) bool {
	if u == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return !u.last.IsZero() && now.Sub(u.last) < d
}

// Failed records a request the API server did not answer, for callers
// that see it other than through the transport (tests).
func (u *Unanswered) Failed() { u.record() }
