// Package benchutil is what the benchmark programs under hack/ share:
// running the repository's scripts, starting the ontime controller against
// a local cluster, a client, progress lines, percentiles.
package benchutil

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ontime-dev/ontime/internal/scheme"
)

// Fail prints an error prefixed with the program's name and exits 1.
func Fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, filepath.Base(os.Args[0])+": "+format+"\n", args...)
	os.Exit(1)
}

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		Fail("run from the repository: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// Run runs a command in root with extra environment and returns its output;
// a failure ends the program.
func Run(root string, env []string, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		Fail("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Progress prints a timestamped line on stderr.
func Progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format(time.TimeOnly)}, args...)...)
}

// StartOntime runs `ontime controller` from binary with its shipped
// defaults, plus what the dev webhook configuration needs and
// ONTIME_BENCH_FLAGS, logging to work/ontime.log, and returns how to stop
// it. probePort is its health port.
func StartOntime(binary, kubeconfig, work string, probePort int) func() {
	cmd := StartOntimeProcess(binary, kubeconfig, work, probePort)
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
}

// StartOntimeProcess is StartOntime with extra flags (which come last and
// so win), returning the process once it is ready.
func StartOntimeProcess(binary, kubeconfig, work string, probePort int, extra ...string) *exec.Cmd {
	log, _ := os.OpenFile(filepath.Join(work, "ontime.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	probe := "127.0.0.1:" + strconv.Itoa(probePort)
	cmd := exec.Command(binary, "controller", "--kubeconfig", kubeconfig,
		"--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", probe,
		"--webhook-dns-name", "localhost", "--webhook-namespace", "ontime-system",
		"--webhook-write-cert-files", "--webhook-cert-dir", filepath.Join(work, "certs"))
	cmd.Args = append(cmd.Args, strings.Fields(os.Getenv("ONTIME_BENCH_FLAGS"))...)
	cmd.Args = append(cmd.Args, extra...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		Fail("starting ontime: %v", err)
	}
	for i := 0; ; i++ {
		if resp, err := http.Get("http://" + probe + "/readyz"); err == nil && resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			break
		}
		if i > 1200 {
			Fail("ontime did not become ready; see %s", log.Name())
		}
		time.Sleep(250 * time.Millisecond)
	}
	return cmd
}

// FreshCluster starts a new kwok cluster called name, with nodes fake nodes,
// pods that complete at once, the API server's audit log written by
// auditPolicy and ontime's dev manifests (CRD and webhook configuration),
// and returns its kubeconfig, a work directory and a function that tears
// both down.
func FreshCluster(root, name string, nodes int, auditPolicy string) (kubeconfig, work string, down func()) {
	work, _ = os.MkdirTemp("", name)
	kubeconfig = filepath.Join(work, "kubeconfig")
	Run(root, nil, "hack/cluster.sh", "down", name)
	Run(root, []string{"ONTIME_KWOK_STAGES=fast", "ONTIME_KWOKCTL_FLAGS=--kube-audit-policy " + auditPolicy},
		"hack/cluster.sh", "up", name, kubeconfig, strconv.Itoa(nodes))
	Run(root, nil, KubeBin(root, "kubectl"), "--kubeconfig", kubeconfig, "apply", "--server-side", "-k", "config/dev")
	return kubeconfig, work, func() {
		Run(root, nil, "hack/cluster.sh", "down", name)
		os.RemoveAll(work)
	}
}

// KubeBin is the path of a control-plane binary (kubectl, …) built by
// hack/kube-binaries.sh.
func KubeBin(root, name string) string {
	return filepath.Join(strings.TrimSpace(Run(root, nil, "hack/kube-binaries.sh", "--print")), name)
}

// ClusterDir is where kwokctl keeps a cluster's pids, logs and
// certificates.
func ClusterDir(name string) string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".kwok", "clusters", name)
}

// AuditLogPath is a kwokctl cluster's API server audit log.
func AuditLogPath(name string) string { return filepath.Join(ClusterDir(name), "logs", "audit.log") }

// NewClient is a client for kubeconfig's cluster with generous rate limits.
// Admission warnings (such as the crowded-minute warning a benchmark's
// thousand identical schedules draw) are dropped, not logged.
func NewClient(kubeconfig string) client.Client {
	ctrllog.SetLogger(logr.Discard())
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		Fail("%v", err)
	}
	config.QPS, config.Burst = 500, 1000
	c, err := client.New(config, client.Options{Scheme: scheme.New()})
	if err != nil {
		Fail("%v", err)
	}
	return c
}

// Percentile of sorted durations, rounded to 10 ms, or "–" for none.
func Percentile(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "–"
	}
	i := min(len(sorted)-1, (len(sorted)*p+99)/100-1)
	return sorted[max(0, i)].Round(10 * time.Millisecond).String()
}

// ReadAuditLog calls f with each line (one JSON audit event) of an API
// server's audit log.
func ReadAuditLog(path string, f func(line []byte)) {
	file, err := os.Open(path)
	if err != nil {
		Fail("%v", err)
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		f(scanner.Bytes())
	}
	if err := scanner.Err(); err != nil {
		Fail("reading %s: %v", path, err)
	}
}

// AuditEvent is the part of an audit.k8s.io/v1 Event the benchmarks read.
type AuditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp  time.Time `json:"stageTimestamp"`
}

// ReadAudit calls f with each event of an API server's audit log.
func ReadAudit(path string, f func(AuditEvent)) {
	ReadAuditLog(path, func(line []byte) {
		var e AuditEvent
		if json.Unmarshal(line, &e) == nil {
			f(e)
		}
	})
}

// CreatedJobIn reports whether e is a successful creation of a Job in
// namespace.
func (e AuditEvent) CreatedJobIn(namespace string) bool {
	return e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Resource == "jobs" && e.ObjectRef.Namespace == namespace &&
		e.ResponseStatus != nil && e.ResponseStatus.Code == http.StatusCreated
}

// JobScheduledTime reads the scheduled minute from the suffix of a run's
// Job name (ScheduledJobs and CronJobs name them alike).
func JobScheduledTime(name string) (time.Time, bool) {
	minutes, err := strconv.ParseInt(name[strings.LastIndex(name, "-")+1:], 10, 64)
	return time.Unix(minutes*60, 0), err == nil
}

// Parallel calls f for 0..n-1 from workers goroutines (default 20).
func Parallel(n int, f func(int), workers ...int) {
	w := 20
	if len(workers) > 0 {
		w = workers[0]
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for i := range work {
				f(i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// ParseSizes parses a comma-separated list of positive numbers (a -n flag);
// a bad one ends the program.
func ParseSizes(list string) []int {
	var sizes []int
	for _, field := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			Fail("bad size %q", field)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// JobTemplate is the benchmarks' run: one busybox container, which kwok
// completes at once.
func JobTemplate() batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
	}}}}
}
