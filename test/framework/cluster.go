package framework

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// ClusterDir is where kwokctl keeps a cluster's pids, logs and
// certificates.
func ClusterDir(name string) string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".kwok", "clusters", name)
}

// AuditLogPath is a kwokctl cluster's API server audit log.
func AuditLogPath(name string) string { return filepath.Join(ClusterDir(name), "logs", "audit.log") }

// Cluster is a local kwok cluster started by hack/cluster.sh.
type Cluster struct {
	Name       string
	Kubeconfig string
	// Work is a directory for the test's files (logs, binaries), kept
	// after the test for a look at what happened.
	Work string
}

// ClusterOptions say how to start a cluster.
type ClusterOptions struct {
	// Nodes is how many fake nodes kwok runs.
	Nodes int
	// Env is extra environment of hack/cluster.sh (ONTIME_KWOK_STAGES, …).
	Env []string
	// AuditPolicy, when set, is the API server's audit policy file,
	// relative to the repository's top directory.
	AuditPolicy string
}

// StartCluster starts a fresh kwok cluster called name (deleting one left
// by an earlier run) and deletes it when the test ends.
func StartCluster(tb testing.TB, name string, opts ClusterOptions) *Cluster {
	tb.Helper()
	work, err := os.MkdirTemp("", name)
	if err != nil {
		tb.Fatal(err)
	}
	c := &Cluster{Name: name, Kubeconfig: filepath.Join(work, "kubeconfig"), Work: work}
	Command(tb, nil, "hack/cluster.sh", "down", name)
	tb.Cleanup(func() {
		if _, err := CommandErr(nil, "hack/cluster.sh", "down", name); err != nil {
			tb.Error(err)
		}
	})
	env := opts.Env
	if opts.AuditPolicy != "" {
		env = append(env, "ONTIME_KWOKCTL_FLAGS=--kube-audit-policy "+filepath.Join(RepoRoot(), opts.AuditPolicy))
	}
	Command(tb, env, "hack/cluster.sh", "up", name, c.Kubeconfig, strconv.Itoa(opts.Nodes))
	return c
}

// Kubectl runs kubectl against the cluster.
func (c *Cluster) Kubectl(tb testing.TB, args ...string) string {
	tb.Helper()
	return Command(tb, nil, KubeBin(tb, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
}

// FreshBenchCluster is the benchmarks' cluster: pods that complete at once,
// the audit log written by auditPolicy, and ontime's dev manifests (CRD and
// the webhook configuration pointing at localhost).
func FreshBenchCluster(tb testing.TB, name string, nodes int, auditPolicy string) *Cluster {
	tb.Helper()
	c := StartCluster(tb, name, ClusterOptions{Nodes: nodes, Env: []string{"ONTIME_KWOK_STAGES=fast"}, AuditPolicy: auditPolicy})
	c.Kubectl(tb, "apply", "--server-side", "-k", "config/dev")
	return c
}

// AuditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type AuditEvent struct {
	Verb       string `json:"verb"`
	UserAgent  string `json:"userAgent"`
	RequestURI string `json:"requestURI"`
	ObjectRef  *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp  time.Time `json:"stageTimestamp"`
}

// CreatedJobIn reports whether e is a successful creation of a Job in
// namespace. A dry run, such as ontime's webhook makes of a ScheduledJob's
// Job template when it is created, creates nothing.
func (e AuditEvent) CreatedJobIn(namespace string) bool {
	return e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Resource == "jobs" && e.ObjectRef.Namespace == namespace &&
		e.ResponseStatus != nil && e.ResponseStatus.Code == http.StatusCreated && !e.DryRun()
}

// DryRun reports whether the request was a dry run (?dryRun=All).
func (e AuditEvent) DryRun() bool {
	u, err := url.ParseRequestURI(e.RequestURI)
	return err == nil && u.Query().Get("dryRun") != ""
}

// ReadAuditLog calls f with each line (one JSON audit event) of an API
// server's audit log.
func ReadAuditLog(tb testing.TB, path string, f func(line []byte)) {
	tb.Helper()
	file, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		f(scanner.Bytes())
	}
	if err := scanner.Err(); err != nil {
		tb.Fatal(fmt.Errorf("reading %s: %w", path, err))
	}
}

// ReadAudit calls f with each event of an API server's audit log.
func ReadAudit(tb testing.TB, path string, f func(AuditEvent)) {
	tb.Helper()
	ReadAuditLog(tb, path, func(line []byte) {
		var e AuditEvent
		if json.Unmarshal(line, &e) == nil {
			f(e)
		}
	})
}

// StartKarpenter runs Karpenter's kwok provider against the cluster, its
// nodes registering delay after launch (hack/karpenter.sh), and stops it
// when the test ends.
func (c *Cluster) StartKarpenter(tb testing.TB, delay time.Duration) {
	tb.Helper()
	state := filepath.Join(c.Work, "karpenter")
	if err := os.MkdirAll(state, 0o755); err != nil {
		tb.Fatal(err)
	}
	// Free ports for its metrics and probes: clusters side by side each
	// run a Karpenter of their own.
	ports := []string{fmt.Sprintf("KARPENTER_METRICS_PORT=%d", FreePort(tb)), fmt.Sprintf("KARPENTER_PROBE_PORT=%d", FreePort(tb))}
	Command(tb, ports, "hack/karpenter.sh", "up", c.Kubeconfig, state, delay.String())
	tb.Cleanup(func() {
		if _, err := CommandErr(nil, "hack/karpenter.sh", "down", state); err != nil {
			tb.Error(err)
		}
	})
}
