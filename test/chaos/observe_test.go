//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ontime-dev/ontime/test/framework"
)

// pollEvery is how often the observer samples who leads and whether the
// API server is ready.
const pollEvery = 200 * time.Millisecond

// sample is one observation: which replica leads ("" for none) and
// whether the API server answered /readyz.
type sample struct {
	at     time.Time
	leader string
	apiUp  bool
}

// observer records, over time, who leads and whether the API server is up.
type observer struct {
	replicas []*framework.Controller
	api      *http.Client
	readyz   string

	mu      sync.Mutex
	samples []sample
}

func newObserver(t *testing.T, replicas []*framework.Controller, kubeconfig string) *observer {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	api, err := rest.HTTPClientFor(config)
	if err != nil {
		t.Fatal(err)
	}
	api.Timeout = time.Second
	return &observer{replicas: replicas, api: api, readyz: strings.TrimSuffix(config.Host, "/") + "/readyz"}
}

func (o *observer) poll(ctx context.Context) {
	ticker := time.NewTicker(pollEvery)
	defer ticker.Stop()
	for ctx.Err() == nil {
		s := sample{at: time.Now()}
		for _, r := range o.replicas {
			if r.IsLeader() {
				s.leader = r.Name
			}
		}
		if resp, err := o.api.Get(o.readyz); err == nil {
			s.apiUp = resp.StatusCode == http.StatusOK
			resp.Body.Close()
		}
		o.mu.Lock()
		o.samples = append(o.samples, s)
		o.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-ticker.C:
		}
	}
}

// leader is the replica that led at the last sample, if any.
func (o *observer) leader() *framework.Controller {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.samples) == 0 {
		return nil
	}
	name := o.samples[len(o.samples)-1].leader
	for _, r := range o.replicas {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// workingFor reports whether, between from and to, a leader held the
// lease with the API server up for at least grace without a break.
func (o *observer) workingFor(from, to time.Time, grace time.Duration) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	var since time.Time
	for _, s := range o.samples {
		if s.at.Before(from) || !s.at.Before(to) {
			continue
		}
		if s.leader == "" || !s.apiUp {
			since = time.Time{}
			continue
		}
		if since.IsZero() {
			since = s.at
		}
		if s.at.Sub(since) >= grace {
			return true
		}
	}
	return false
}

// takeovers is, for each kill of a leader, the time until a leader was
// seen again.
// apiDownDuring reports whether the API server failed to answer at any
// sample from from to to.
func (o *observer) apiDownDuring(from, to time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.samples {
		if !s.at.Before(from) && s.at.Before(to) && !s.apiUp {
			return true
		}
	}
	return false
}

// firstUpAfter is the first sample after at that saw the API server answer.
func (o *observer) firstUpAfter(at time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.samples {
		if s.at.After(at) && s.apiUp {
			return s.at
		}
	}
	return time.Time{}
}

// leadingFrom is at, if a replica held the lease with the API server up
// then, or else the first sample after at that saw one (zero: none).
func (o *observer) leadingFrom(at time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	last := -1
	for i, s := range o.samples {
		if s.at.After(at) {
			break
		}
		last = i
	}
	if last >= 0 && o.samples[last].leader != "" && o.samples[last].apiUp {
		return at
	}
	for _, s := range o.samples[last+1:] {
		if s.leader != "" && s.apiUp {
			return s.at
		}
	}
	return time.Time{}
}

func (o *observer) takeovers(kills []time.Time) []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []time.Duration
	for _, kill := range kills {
		for _, s := range o.samples {
			if s.at.After(kill) && s.leader != "" {
				out = append(out, s.at.Sub(kill))
				break
			}
		}
	}
	return out
}

// dump writes the changes of leader and API state, for reading a failure.
func (o *observer) dump(path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var b strings.Builder
	var last sample
	for i, s := range o.samples {
		if i == 0 || s.leader != last.leader || s.apiUp != last.apiUp {
			fmt.Fprintf(&b, "%s leader=%q apiUp=%t\n", s.at.Format("15:04:05.000"), s.leader, s.apiUp)
		}
		last = s
	}
	_ = os.WriteFile(path, []byte(b.String()), 0o644)
}
