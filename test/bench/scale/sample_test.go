//go:build bench

package scale

import (
	"bufio"
	"crypto/tls"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// sample is one reading of a controller process's Prometheus metrics.
type sample struct {
	at time.Time
	// rss and heap (Go heap in use) in bytes; cpu in seconds since the
	// process started.
	rss, heap, cpu float64
	// depth and adds of the controller's work queue.
	depth, adds float64
}

// sampler reads a controller's /metrics every period, as Prometheus
// would: both ontime and kube-controller-manager export the process and Go
// collectors and client-go's work-queue metrics.
type sampler struct {
	url   string
	queue string // the work queue's name label
	http  *http.Client

	mu      sync.Mutex
	samples []sample
	stop    chan struct{}
}

func newSampler(url, queue string) *sampler {
	// kube-controller-manager serves /metrics over TLS with its own
	// self-signed certificate, to anyone (kwokctl allows the path).
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	return &sampler{url: url, queue: queue, http: &http.Client{Transport: transport, Timeout: 5 * time.Second}, stop: make(chan struct{})}
}

// run samples until close.
func (s *sampler) run(period time.Duration) {
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		if m, ok := s.read(); ok {
			s.mu.Lock()
			s.samples = append(s.samples, m)
			s.mu.Unlock()
		}
		select {
		case <-s.stop:
			return
		case <-ticker.C:
		}
	}
}

func (s *sampler) close() { close(s.stop) }

// read takes one sample now.
func (s *sampler) read() (sample, bool) {
	resp, err := s.http.Get(s.url)
	if err != nil {
		return sample{}, false
	}
	defer resp.Body.Close()
	m := sample{at: time.Now()}
	queue := `name="` + s.queue + `"`
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<16), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		name, value, ok := parseLine(line)
		if !ok {
			continue
		}
		switch {
		case name == "process_resident_memory_bytes":
			m.rss = value
		case name == "go_memstats_heap_inuse_bytes":
			m.heap = value
		case name == "process_cpu_seconds_total":
			m.cpu = value
		case strings.HasPrefix(line, "workqueue_depth{") && strings.Contains(line, queue):
			m.depth = value
		case strings.HasPrefix(line, "workqueue_adds_total{") && strings.Contains(line, queue):
			m.adds = value
		}
	}
	return m, resp.StatusCode == http.StatusOK && m.rss > 0
}

// parseLine splits a text-format sample into its name and value.
func parseLine(line string) (string, float64, bool) {
	if line == "" || line[0] == '#' {
		return "", 0, false
	}
	space := strings.LastIndexByte(line, ' ')
	if space < 0 {
		return "", 0, false
	}
	value, err := strconv.ParseFloat(line[space+1:], 64)
	name := line[:space]
	if brace := strings.IndexByte(name, '{'); brace >= 0 {
		name = name[:brace]
	}
	return name, value, err == nil
}

// between returns the samples taken in [from, to).
func (s *sampler) between(from, to time.Time) []sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sample
	for _, m := range s.samples {
		if !m.at.Before(from) && m.at.Before(to) {
			out = append(out, m)
		}
	}
	return out
}

// median of one field over samples.
func median(samples []sample, field func(sample) float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	values := make([]float64, len(samples))
	for i, m := range samples {
		values[i] = field(m)
	}
	slices.Sort(values)
	return values[len(values)/2]
}

func rssOf(m sample) float64  { return m.rss }
func heapOf(m sample) float64 { return m.heap }

// waitSwept waits until the work queue has taken at least n items since
// base and is empty: every object has been reconciled once. It returns when
// that was first seen, or false at the deadline.
func (s *sampler) waitSwept(base float64, n int, deadline time.Time) (time.Time, bool) {
	for time.Now().Before(deadline) {
		if m, ok := s.read(); ok && m.adds-base >= float64(n) && m.depth == 0 {
			return m.at, true
		}
		time.Sleep(500 * time.Millisecond)
	}
	return time.Time{}, false
}
