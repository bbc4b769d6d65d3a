//go:build integration

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/clitest"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// TestUndecodableScheduledJobStopsNothing (issue #21): a ScheduledJob
// stored with a value the controller cannot decode — here through the CRD
// as it was before its int32 bounds, as after an upgrade or a write that
// bypassed validation — stops nothing. The controller runs as users run it
// (a process with --kubeconfig and leader election): it syncs with one
// stored before it starts, other ScheduledJobs run, one stored while it runs
// does not break its watch, each is reported (event Undecodable naming the
// field and value, an error in the log, the gauge), and a new leader starts
// and syncs with both present. Then the shipped CRD refuses such a value.
// Without ScheduledJob.UnmarshalJSON's tolerance the first controller
// never syncs, and no Job is created.
func TestUndecodableScheduledJobStopsNothing(t *testing.T) {
	// Its own API server and processes, no package state: beside the others.
	t.Parallel()
	c, kubeconfig := clitest.StartAPIServerKubeconfig(t, unboundedCRD(t))
	ctx := context.Background()
	storeUndecodable(t, c, "broken")

	first := startControllerProcess(t, kubeconfig)
	runsOnce(t, c, "once-a")
	first.waitForMetric(t, "ontime_undecodable_scheduledjobs 1")
	storeUndecodable(t, c, "broken-2")
	runsOnce(t, c, "once-b")
	first.waitForMetric(t, "ontime_undecodable_scheduledjobs 2")
	for _, name := range []string{"broken", "broken-2"} {
		checkUndecodableEvent(t, c, name)
	}
	if log := first.stop(t); !strings.Contains(log, `"cannot decode the stored ScheduledJob; leaving it and its Jobs alone until it is fixed or deleted"`) ||
		!strings.Contains(log, "spec.successfulJobsHistoryLimit") {
		t.Errorf("the controller's log has no error about the undecodable ScheduledJobs:\n%s", log)
	}

	next := startControllerProcess(t, kubeconfig)
	runsOnce(t, c, "once-c")
	next.waitForMetric(t, "ontime_undecodable_scheduledjobs 2")
	next.stop(t)

	// The shipped CRD, with its bounds, refuses the value outright.
	shipped, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "ontime.dev_scheduledjobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var bounded map[string]any
	if err := yaml.Unmarshal(shipped, &bounded); err != nil {
		t.Fatal(err)
	}
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := c.Get(ctx, client.ObjectKey{Name: "scheduledjobs.ontime.dev"}, stored); err != nil {
		t.Fatal(err)
	}
	stored.Object["spec"] = bounded["spec"]
	if err := c.Update(ctx, stored); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the shipped CRD to refuse a history limit of 2147483648", func() bool {
		err := c.Create(ctx, undecodable("refused"))
		return err != nil && strings.Contains(err.Error(), "spec.successfulJobsHistoryLimit") && strings.Contains(err.Error(), "2147483647")
	})
}

// unboundedCRD writes the ScheduledJob CRD as it was before make generate
// bounded its int32 fields, and returns its directory.
func unboundedCRD(t *testing.T) string {
	t.Helper()
	shipped, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "ontime.dev_scheduledjobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Without the bounds, and without the integers' format: Kubernetes
	// 1.37's API server refuses a value beyond a CRD's "format: int32"
	// too, where 1.34's stored it.
	unbounded := regexp.MustCompile(`(?m)^ *(maximum: 2147483647|minimum: -2147483648|format: int32)\n`).ReplaceAll(shipped, nil)
	if bytes.Equal(unbounded, shipped) {
		t.Fatal("the shipped CRD has no int32 bounds to remove")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scheduledjobs.yaml"), unbounded, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// undecodable is a ScheduledJob whose history limit is beyond int32.
func undecodable(name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "ScheduledJob",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"schedule": "* * * * *", "successfulJobsHistoryLimit": int64(2147483648),
			"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never", "containers": []any{map[string]any{"name": "main", "image": "busybox"}}}}}},
		},
	}}
	return obj
}

func storeUndecodable(t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Create(context.Background(), undecodable(name)); err != nil {
		t.Fatalf("storing %s: %v", name, err)
	}
}

// runsOnce creates a ScheduledJob that runs once, 2 s from now, and waits
// for its Job.
func runsOnce(t *testing.T, c client.Client, name string) {
	t.Helper()
	at := metav1.NewTime(time.Now().Add(2 * time.Second).Truncate(time.Second))
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1alpha1.ScheduledJobSpec{RunAt: &at, JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}}}}
	ctx := context.Background()
	if err := c.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	job := types.NamespacedName{Namespace: "default", Name: v1alpha1.RunJobName(name, at.Time)}
	testenv.Eventually(t, 45*time.Second, "the Job of "+name, func() bool {
		return c.Get(ctx, job, &batchv1.Job{}) == nil
	})
}

func checkUndecodableEvent(t *testing.T, c client.Client, name string) {
	t.Helper()
	testenv.Eventually(t, 15*time.Second, "the event Undecodable on "+name, func() bool {
		var events corev1.EventList
		if err := c.List(context.Background(), &events, client.InNamespace("default")); err != nil {
			return false
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name && e.Reason == v1alpha1.ReasonUndecodable && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Message, "spec.successfulJobsHistoryLimit") && strings.Contains(e.Message, "2147483648") {
				return true
			}
		}
		return false
	})
}

// controllerProcess is `ontime controller` run as a child process (this
// test binary again), with leader election and its metrics served.
type controllerProcess struct {
	cmd     *exec.Cmd
	metrics string
	// exited is closed when the process has exited, with waitErr.
	exited  chan struct{}
	waitErr error
	mu      sync.Mutex
	log     bytes.Buffer
}

func (p *controllerProcess) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Write(b)
}

// controllerChild, set in a test binary's environment, makes it run
// `ontime` with these arguments (JSON) instead of the tests (TestMain).
const controllerChild = "ONTIME_CONTROLLER_CHILD"

func TestMain(m *testing.M) {
	if child := os.Getenv(controllerChild); child != "" {
		var args []string
		_ = json.Unmarshal([]byte(child), &args)
		os.Exit(Run(args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// startControllerProcess runs `ontime controller` as users do, a process
// with --kubeconfig and leader election; extra flags come last and win.
func startControllerProcess(t *testing.T, kubeconfig string, extra ...string) *controllerProcess {
	t.Helper()
	metrics := testenv.FreeAddress(t)
	args, _ := json.Marshal(append([]string{"controller", "--kubeconfig", kubeconfig, "--leader-elect", "--leader-election-namespace", "default",
		"--metrics-bind-address", metrics, "--metrics-secure=false", "--health-probe-bind-address", "0", "--spread-namespace", "default", "--webhook=false"}, extra...))
	p := &controllerProcess{metrics: metrics, cmd: exec.Command(os.Args[0], "-test.run=^$")}
	p.cmd.Env = append(os.Environ(), controllerChild+"="+string(args))
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.exited = make(chan struct{})
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.exited })
	return p
}

// output is what the controller wrote so far.
func (p *controllerProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// stop ends the controller as a rolling update does (SIGTERM: it releases
// the Lease) and returns its log.
func (p *controllerProcess) stop(t *testing.T) string {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	if p.waitErr != nil {
		t.Errorf("the controller exited with %v", p.waitErr)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// waitForMetric waits until the controller's /metrics has line.
func (p *controllerProcess) waitForMetric(t *testing.T, line string) {
	t.Helper()
	var last string
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%q in /metrics", line), func() bool {
		resp, err := http.Get("http://" + p.metrics + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		last = string(body)
		return strings.Contains("\n"+last, "\n"+line+"\n")
	})
}
