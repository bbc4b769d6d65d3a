package framework

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ControllerOptions say how to run one `ontime controller` process.
type ControllerOptions struct {
	// Name names the process in logs; its log is Work/ontime-Name.log.
	Name       string
	Binary     string
	Kubeconfig string
	Work       string
	// LeaderElect runs it with leader election in ontime-system.
	LeaderElect bool
	// Webhook serves the admission webhook at localhost on a free port
	// (WebhookPort), and points the cluster's webhook configuration (from
	// config/dev) at it: clusters side by side each reach their own
	// controller. Else it runs without one.
	Webhook     bool
	WebhookPort int
	// MetricsPort and ProbePort are the ports it serves on; 0 takes free
	// ones. A restarted process keeps its predecessor's.
	MetricsPort, ProbePort int
	// Extra flags come last, and so win.
	Extra []string
}

// Controller is one `ontime controller` process.
type Controller struct {
	Name        string
	Log         string
	MetricsPort int
	ProbePort   int
	args        []string

	mu  sync.Mutex
	cmd *exec.Cmd
	// exited is closed when the running process has exited; exitErr is
	// then what its Wait returned.
	exited  chan struct{}
	exitErr error
}

// NewController prepares a controller process without starting it.
func NewController(tb testing.TB, opts ControllerOptions) *Controller {
	tb.Helper()
	c := &Controller{Name: opts.Name, Log: filepath.Join(opts.Work, "ontime-"+opts.Name+".log"), MetricsPort: opts.MetricsPort, ProbePort: opts.ProbePort}
	if c.MetricsPort == 0 {
		c.MetricsPort = FreePort(tb)
	}
	if c.ProbePort == 0 {
		c.ProbePort = FreePort(tb)
	}
	c.args = []string{opts.Binary, "controller", "--kubeconfig", opts.Kubeconfig,
		// Plain HTTP on loopback: the tests read /metrics without a token
		// (the secure endpoint has its own test, internal/controller).
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", c.MetricsPort), "--metrics-secure=false",
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", c.ProbePort),
		"--webhook=" + strconv.FormatBool(opts.Webhook)}
	if opts.LeaderElect {
		c.args = append(c.args, "--leader-elect", "--leader-election-namespace", "ontime-system")
	}
	if opts.Webhook {
		port := opts.WebhookPort
		if port == 0 {
			port = FreePort(tb)
		}
		pointWebhookAt(tb, opts.Kubeconfig, port)
		c.args = append(c.args, "--webhook-port", strconv.Itoa(port), "--webhook-dns-name", "localhost", "--webhook-namespace", "ontime-system",
			"--webhook-write-cert-files", "--webhook-cert-dir", filepath.Join(opts.Work, "certs-"+opts.Name))
	}
	c.args = append(c.args, opts.Extra...)
	return c
}

// pointWebhookAt points the webhook configurations config/dev installed
// (https://localhost:9443/…) at port.
func pointWebhookAt(tb testing.TB, kubeconfig string, port int) {
	tb.Helper()
	c := NewClient(tb, kubeconfig)
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: "ontime-validating-webhook-configuration"}, validating); err != nil {
		tb.Fatalf("reading the webhook configuration of config/dev: %v", err)
	}
	for i := range validating.Webhooks {
		validating.Webhooks[i].ClientConfig.URL = atPort(tb, validating.Webhooks[i].ClientConfig.URL, port)
	}
	if err := c.Update(context.Background(), validating); err != nil {
		tb.Fatalf("pointing the webhook at port %d: %v", port, err)
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: "ontime-mutating-webhook-configuration"}, mutating); err != nil {
		tb.Fatalf("reading the Job webhook configuration of config/dev: %v", err)
	}
	for i := range mutating.Webhooks {
		mutating.Webhooks[i].ClientConfig.URL = atPort(tb, mutating.Webhooks[i].ClientConfig.URL, port)
	}
	if err := c.Update(context.Background(), mutating); err != nil {
		tb.Fatalf("pointing the Job webhook at port %d: %v", port, err)
	}
}

// atPort is a webhook's URL at localhost:port.
func atPort(tb testing.TB, u *string, port int) *string {
	if u == nil {
		return nil
	}
	parsed, err := url.Parse(*u)
	if err != nil {
		tb.Fatal(err)
	}
	parsed.Host = fmt.Sprintf("localhost:%d", port)
	return ptr.To(parsed.String())
}

// StartController starts a controller process, waits until it is ready
// and stops it when the test ends (showing the end of its log if the test
// failed).
func StartController(tb testing.TB, opts ControllerOptions) *Controller {
	tb.Helper()
	c := NewController(tb, opts)
	if err := c.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		c.Stop()
		if tb.Failed() {
			Tail(tb, c.Log)
		}
	})
	c.WaitReady(tb, 5*time.Minute)
	return c
}

// Start starts the process, appending to its log.
func (c *Controller) Start() error {
	log, err := os.OpenFile(c.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.args[0], c.args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting controller %s: %w", c.Name, err)
	}
	exited := make(chan struct{})
	c.mu.Lock()
	c.cmd, c.exited = cmd, exited
	c.mu.Unlock()
	go func() {
		err := cmd.Wait()
		log.Close()
		c.mu.Lock()
		c.exitErr = err
		c.mu.Unlock()
		close(exited)
	}()
	return nil
}

// running returns the channel closed when the current process exits.
func (c *Controller) running() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exited
}

// WaitReady waits until the process answers /readyz.
func (c *Controller) WaitReady(tb testing.TB, timeout time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", c.ProbePort)); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(250 * time.Millisecond) // polling a process's readiness endpoint
	}
	Tail(tb, c.Log)
	tb.Fatalf("controller %s did not become ready in %s", c.Name, timeout)
}

// Supervise keeps the process running, as a Deployment's kubelet would:
// whenever it exits it is started again after restartDelay, until ctx
// ends. report hears of each exit and of a start that failed.
func (c *Controller) Supervise(ctx context.Context, restartDelay time.Duration, report func(string, error)) {
	for ctx.Err() == nil {
		if err := c.Start(); err != nil {
			report("could not start", err)
			return
		}
		select {
		case <-c.running():
			if ctx.Err() == nil {
				c.mu.Lock()
				err := c.exitErr
				c.mu.Unlock()
				report("exited", err)
			}
		case <-ctx.Done():
			return
		}
		time.Sleep(restartDelay)
	}
}

// Kill sends SIGKILL to the running process.
func (c *Controller) Kill() { c.signal(syscall.SIGKILL) }

// Terminate sends SIGTERM to the running process, as a kubelet stopping its
// pod (a rolling update, a drain) does, and returns at once.
func (c *Controller) Terminate() { c.signal(syscall.SIGTERM) }

// Stop ends the process gracefully (SIGTERM) and waits up to 30 s for it.
func (c *Controller) Stop() {
	c.signal(syscall.SIGTERM)
	if exited := c.running(); exited != nil {
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			c.Kill()
		}
	}
}

func (c *Controller) signal(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(sig)
	}
}

// Metric reads an unlabeled metric from the process's /metrics: the value
// of the line "name value", 0 when there is none.
func (c *Controller) Metric(name string) (float64, error) {
	lines, err := c.metricLines()
	if err != nil {
		return 0, err
	}
	for _, line := range lines {
		if fields := strings.Fields(line); len(fields) == 2 && fields[0] == name {
			return strconv.ParseFloat(fields[1], 64)
		}
	}
	return 0, nil
}

// MetricSum reads a metric from the process's /metrics: the sum of its
// lines, whatever their labels (0 when there are none).
func (c *Controller) MetricSum(name string) (float64, error) {
	lines, err := c.metricLines()
	if err != nil {
		return 0, err
	}
	return SumMetric(strings.NewReader(strings.Join(lines, "\n")), name)
}

// SumMetric reads Prometheus' text format and returns the sum of the
// samples of metric name, whatever their labels (0 when there are none).
func SumMetric(text io.Reader, name string) (float64, error) {
	sum := 0.0
	scanner := bufio.NewScanner(text)
	scanner.Buffer(make([]byte, 1<<16), 1<<22)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) != 2 || (fields[0] != name && !strings.HasPrefix(fields[0], name+"{")) {
			continue
		}
		v, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, scanner.Err()
}

// IsLeader reports whether the process says, on its metrics endpoint, that
// it holds the lease.
func (c *Controller) IsLeader() bool {
	lines, err := c.metricLines()
	if err != nil {
		return false
	}
	for _, line := range lines {
		if strings.HasPrefix(line, "leader_election_master_status{") {
			return strings.HasSuffix(strings.TrimSpace(line), " 1")
		}
	}
	return false
}

var metricsClient = &http.Client{Timeout: 2 * time.Second}

func (c *Controller) metricLines() ([]string, error) {
	resp, err := metricsClient.Get(c.MetricsURL())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var lines []string
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<16), 1<<22)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
	}
	return lines, scanner.Err()
}

// StartBenchController runs the benchmarks' controller on cl: its shipped
// defaults, the webhook at localhost (config/dev), and the flags in
// ONTIME_BENCH_FLAGS, which come last.
func StartBenchController(tb testing.TB, cl *Cluster, binary string, extra ...string) *Controller {
	tb.Helper()
	return StartController(tb, BenchControllerOptions(cl, binary, extra...))
}

// BenchControllerOptions are StartBenchController's options, for a
// benchmark that changes them.
func BenchControllerOptions(cl *Cluster, binary string, extra ...string) ControllerOptions {
	extra = append(strings.Fields(os.Getenv("ONTIME_BENCH_FLAGS")), extra...)
	return ControllerOptions{Name: "bench", Binary: binary, Kubeconfig: cl.Kubeconfig, Work: cl.Work, Webhook: true, Extra: extra}
}

// Running reports whether the process started last has not exited.
func (c *Controller) Running() bool {
	exited := c.running()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

// Pid is the running process's id, 0 when none runs.
func (c *Controller) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// MetricsURL is the process's /metrics.
func (c *Controller) MetricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", c.MetricsPort)
}
