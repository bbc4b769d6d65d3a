// Package framework is what ontime's tests on a real local cluster share,
// like Karpenter's test/pkg/environment: the end-to-end tests
// (test/e2e), the chaos run (test/chaos) and the benchmarks (test/bench).
// It starts kwok clusters and `ontime controller` processes, runs the
// repository's scripts, reads the API server's audit log and prints
// progress. Whatever it starts is stopped by the test's Cleanup, also when
// the test fails; a failure is the test's (tb.Fatalf), never an exit of
// the process that would skip the cleanups.
package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Command runs a command in the repository's top directory with extra
// environment and returns its output; an error fails the test.
func Command(tb testing.TB, env []string, name string, args ...string) string {
	tb.Helper()
	out, err := CommandErr(env, name, args...)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// CommandErr is Command for a goroutine, which may not fail the test
// itself: it returns the error, with the command's output.
func CommandErr(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Progress prints a timestamped line on stderr: long runs show where they
// are.
func Progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format(time.TimeOnly)}, args...)...)
}

// KubeBin is the path of a control-plane binary (kubectl, …) built by
// hack/kube-binaries.sh.
func KubeBin(tb testing.TB, name string) string {
	tb.Helper()
	return filepath.Join(strings.TrimSpace(Command(tb, nil, "hack/kube-binaries.sh", "--print")), name)
}

// BuildOntime builds the ontime binary into dir and returns its path.
func BuildOntime(tb testing.TB, dir string) string {
	tb.Helper()
	binary := filepath.Join(dir, "ontime")
	Command(tb, nil, "go", "build", "-o", binary, "./cmd/ontime")
	return binary
}

// sharedOntimeDir holds the binary SharedOntime builds, once per process.
var sharedOntimeDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "ontime-binary") })

var sharedOntime = sync.OnceValues(func() (string, error) {
	dir, err := sharedOntimeDir()
	if err != nil {
		return "", err
	}
	binary := filepath.Join(dir, "ontime")
	_, err = CommandErr(nil, "go", "build", "-o", binary, "./cmd/ontime")
	return binary, err
})

// SharedOntime builds the ontime binary once for the tests of this process
// that run side by side, and returns its path. RemoveSharedOntime, called
// from TestMain once they have ended, deletes it.
func SharedOntime(tb testing.TB) string {
	tb.Helper()
	binary, err := sharedOntime()
	if err != nil {
		tb.Fatal(err)
	}
	return binary
}

// RemoveSharedOntime deletes the directory of SharedOntime's binary.
func RemoveSharedOntime() {
	if dir, err := sharedOntimeDir(); err == nil {
		_ = os.RemoveAll(dir)
	}
}

// FreePort is a TCP port on the loopback interface that nothing listens
// on, from 20000–29999: below the kernel's ephemeral range (32768 and up),
// where any outgoing connection may take a port while the process that
// listens on it is down — a controller the e2e stops for five minutes
// starts again on the same ports, and once found one taken
// (TestCatchUpAfterDowntime, 2026-11-28: "bind: address already in use");
// and clear of kwokctl, which takes its clusters' ports counting down from
// 32766.
func FreePort(tb testing.TB) int {
	tb.Helper()
	for range 1000 {
		port := 20000 + rand.IntN(10000)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			_ = l.Close()
			return port
		}
	}
	tb.Fatal("no free port on 127.0.0.1 from 20000 to 29999")
	return 0
}

// NewClient is a client for kubeconfig's cluster with generous rate limits.
// Admission warnings (such as the crowded-minute warning a benchmark's
// thousand identical schedules draw) are dropped, not logged.
func NewClient(tb testing.TB, kubeconfig string) client.Client {
	tb.Helper()
	ctrllog.SetLogger(logr.Discard())
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	config.QPS, config.Burst = 500, 1000
	c, err := client.New(config, client.Options{Scheme: scheme.New()})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// Percentile of sorted durations, rounded to 10 ms, or "–" for none.
func Percentile(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "–"
	}
	return PercentileValue(sorted, p).Round(10 * time.Millisecond).String()
}

// PercentileValue is Percentile's value itself, 0 for no samples: for
// bounds a test asserts.
func PercentileValue(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[max(0, min(len(sorted)-1, (len(sorted)*p+99)/100-1))]
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

// ParseSizes parses a comma-separated list of positive numbers (a -n flag).
func ParseSizes(tb testing.TB, list string) []int {
	tb.Helper()
	var sizes []int
	for _, field := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			tb.Fatalf("bad size %q in %q", field, list)
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

// Tail logs the last lines of a log file, for a test that failed.
func Tail(tb testing.TB, path string) {
	data, _ := os.ReadFile(path)
	lines := strings.Split(string(data), "\n")
	tb.Logf("last lines of %s:\n%s", path, strings.Join(lines[max(0, len(lines)-30):], "\n"))
}

// Eventually is internal/testenv's: one way to wait for another process.
var Eventually = testenv.Eventually

// NodePoolRun is a run whose pod needs a node of its own from the
// Karpenter NodePool "batch" (600m of a 1-CPU node) and starts as soon as
// it is placed (kwok's simulated kubelet delays set to 0), so that what is
// measured is placement: the autoscaler, the scheduler and the
// controllers. Its container runs for runFor.
func NodePoolRun(runFor time.Duration) batchv1.JobTemplateSpec {
	annotations := map[string]string{
		"pod-complete.stage.kwok.x-k8s.io/delay":        runFor.String(),
		"pod-complete.stage.kwok.x-k8s.io/jitter-delay": runFor.String(),
	}
	for _, stage := range []string{"pod-create", "pod-init-container-running", "pod-ready"} {
		annotations[stage+".stage.kwok.x-k8s.io/delay"] = "0s"
		annotations[stage+".stage.kwok.x-k8s.io/jitter-delay"] = "0s"
	}
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector:  map[string]string{"karpenter.sh/nodepool": "batch"},
			Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m")}}}},
		},
	}}}
}

// Helm is the pinned Helm 3 (hack/tools/helm), built into the cache by
// make helm if it is not there yet.
func Helm(tb testing.TB) string {
	tb.Helper()
	return madeTool(tb, "helm")
}

// Helm4 is the pinned Helm 4 (hack/tools/helm4), built into the cache by
// make helm4 if it is not there yet.
func Helm4(tb testing.TB) string {
	tb.Helper()
	return madeTool(tb, "helm4")
}

// madeTool runs make's target of a pinned tool and returns the path it
// prints last.
func madeTool(tb testing.TB, target string) string {
	tb.Helper()
	out := strings.TrimSpace(Command(tb, nil, "make", "--no-print-directory", "-s", target))
	return out[strings.LastIndex(out, "\n")+1:]
}

// ModuleDir downloads a module version through the Go module proxy and
// returns its directory: how tests reach other projects' CRDs.
func ModuleDir(tb testing.TB, moduleVersion string) string {
	tb.Helper()
	var module struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(Command(tb, nil, "go", "mod", "download", "-json", moduleVersion)), &module); err != nil || module.Dir == "" {
		tb.Fatalf("downloading %s: %v %s", moduleVersion, err, module.Error)
	}
	return module.Dir
}

// WriteTempFile writes content to a file named name in a directory of the
// test's own (removed after it) and returns its path.
func WriteTempFile(tb testing.TB, name, content string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// CreateJobsAtOnce is the benchmarks' floor: at instant, n Jobs created in
// namespace (which must exist) by a client without a rate limit, 200
// requests at a time, as fast as the API server takes them — the best any
// controller could do on the same cluster. The Jobs are named as a
// CronJob's run of that minute (JobScheduledTime reads it back).
func CreateJobsAtOnce(tb testing.TB, kubeconfig, namespace string, n int, instant time.Time) {
	tb.Helper()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	config.QPS, config.Burst = -1, 0 // no client-side rate limit
	c, err := client.New(config, client.Options{Scheme: scheme.New()})
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	Progress("floor: creating %d Jobs at %s", n, instant.Format(time.TimeOnly))
	time.Sleep(time.Until(instant))
	Parallel(n, func(i int) {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("job-%05d-%d", i, instant.Unix()/60)}, Spec: JobTemplate().Spec}
		if err := c.Create(ctx, job); err != nil {
			tb.Errorf("creating %s: %v", job.Name, err)
		}
	}, 200)
	if tb.Failed() {
		tb.FailNow()
	}
}
