//go:build bench

package burst

import (
	"context"
	"crypto/tls"
	"net/http"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/test/framework"
)

// insecureClient reads the controllers' /metrics and /healthz on
// loopback: kube-controller-manager serves them over TLS with its own
// self-signed certificate.
var insecureClient = &http.Client{Timeout: 5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback, self-signed

// settle is how long after the last pod started the burst is taken to go
// on: the controllers see their Jobs complete and write that down.
const settle = 10 * time.Second

// measure runs one row at one N.
func measure(t *testing.T, n int, kind rowKind) *result {
	framework.Progress("N=%d %s: starting a fresh cluster", n, kind.name)
	cl := freshCluster(t, n)
	c := framework.NewClient(t, cl.Kubeconfig)
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	r := &result{n: n, kind: kind}
	var ctl *controllerProcess
	if kind.start != nil {
		ctl = kind.start(t, cl)
		r.idle, _ = framework.ReadProcessUsage(ctl.pid())
	}
	watch := watchRuns(t, cl.Kubeconfig)
	instant := plannedInstant(n)
	if kind.newObject != nil {
		createObjects(t, c, n, kind, instant)
		waitQuiet(t, ctl, instant)
	}
	if time.Until(instant) < 10*time.Second {
		t.Fatalf("N=%d %s: the objects were ready only %s before their instant %s; the burst would not start from rest", n, kind.name, time.Until(instant).Round(time.Second), instant.Format(time.TimeOnly))
	}

	time.Sleep(time.Until(instant.Add(-time.Second)))
	before := usage(t, ctl)
	profiled := startProfile(cl, ctl)
	if kind.newObject == nil {
		framework.CreateJobsAtOnce(t, cl.Kubeconfig, namespace, n, instant)
	}
	framework.Progress("N=%d %s: the runs are due at %s; waiting up to %s for their pods", n, kind.name, instant.Format(time.TimeOnly), *window)
	end := watch.waitRunning(n, instant.Add(*window))
	time.Sleep(time.Until(end))
	after := usage(t, ctl)
	<-profiled
	time.Sleep(3 * time.Second) // the audit log is written asynchronously
	r.collect(t, instant, end, watch, before, after)
	return r
}

// plannedInstant is when the runs are due: a whole minute far enough ahead
// for the objects to be created and their controller to have done with
// them (measured here: ScheduledJobs through ontime's webhook at about 150
// a second, with ontime writing each one's status).
func plannedInstant(n int) time.Time {
	ahead := 60*time.Second + time.Duration(n)*20*time.Millisecond
	return time.Now().Add(ahead).Truncate(time.Minute).Add(time.Minute)
}

// createObjects creates the row's n objects, 20 requests at a time.
func createObjects(t *testing.T, c client.Client, n int, kind rowKind, instant time.Time) {
	framework.Progress("N=%d %s: creating %d objects due at %s", n, kind.name, n, instant.Format(time.TimeOnly))
	started := time.Now()
	framework.Parallel(n, func(i int) {
		if err := c.Create(context.Background(), kind.newObject(i, instant)); err != nil {
			t.Errorf("creating object %d: %v", i, err)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	framework.Progress("N=%d %s: created in %s", n, kind.name, time.Since(started).Round(time.Second))
}

// waitQuiet waits until the controller's work queues have stayed empty for
// three readings a second apart: it has taken in the new objects and
// waits for their time.
func waitQuiet(t *testing.T, ctl *controllerProcess, instant time.Time) {
	empty := 0
	for empty < 3 {
		if time.Until(instant) < 10*time.Second {
			t.Fatalf("the controller was still busy with the new objects 10 s before their instant %s", instant.Format(time.TimeOnly))
		}
		if depth, err := ctl.queueDepth(); err == nil && depth == 0 {
			empty++
		} else {
			empty = 0
		}
		time.Sleep(time.Second) // polling the controller's metrics
	}
}

// usage is the controller process's usage now, and each control-plane
// process's.
func usage(t *testing.T, ctl *controllerProcess) map[string]framework.ProcessUsage {
	pids, err := framework.ClusterPids(cluster)
	if err != nil {
		t.Fatal(err)
	}
	if ctl != nil {
		pids[controllerUnderTest] = ctl.pid()
	}
	out := map[string]framework.ProcessUsage{}
	for name, pid := range pids {
		if u, err := framework.ReadProcessUsage(pid); err == nil {
			out[name] = u
		}
	}
	return out
}

// controllerUnderTest names the row's controller among the cluster's
// processes.
const controllerUnderTest = "controller"

// startProfile takes ontime's CPU profile over the burst when -profile
// asks, and prints its top functions; the channel is closed when done.
func startProfile(cl *framework.Cluster, ctl *controllerProcess) <-chan struct{} {
	done := make(chan struct{})
	if ctl == nil || ctl.pprofURL == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		path, err := ctl.writeProfile(cl.Work, 30)
		if err != nil {
			framework.Progress("profile: %v", err)
			return
		}
		top, err := framework.CommandErr(nil, "go", "tool", "pprof", "-top", "-nodecount=40", ctl.binary, path)
		framework.Progress("profile %s (err %v):\n%s", path, err, top)
	}()
	return done
}

// runWatch sees the namespace's pods start, as a client would: a pod
// counts as running from the first time it is seen Running (or already
// Succeeded: kwok completes pods at once).
type runWatch struct {
	mu sync.Mutex
	// running is when each Job's first pod was seen running.
	running map[string]time.Time
}

func watchRuns(t *testing.T, kubeconfig string) *runWatch {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	w := &runWatch{running: map[string]time.Time{}}
	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithNamespace(namespace))
	seen := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok && (pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodSucceeded) {
			w.sawRunning(pod.Labels[batchv1.JobNameLabel], time.Now())
		}
	}
	if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) },
	}); err != nil {
		t.Fatal(err)
	}
	stopCh := make(chan struct{})
	t.Cleanup(func() { close(stopCh) })
	factory.Start(stopCh)
	factory.WaitForCacheSync(stopCh)
	return w
}

func (w *runWatch) sawRunning(job string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.running[job]; !ok && job != "" {
		w.running[job] = at
	}
}

func (w *runWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.running)
}

// waitRunning waits until n runs have a running pod, or until deadline,
// and returns when the burst ends: settle after the last, or the deadline.
func (w *runWatch) waitRunning(n int, deadline time.Time) time.Time {
	last := -1
	for time.Now().Before(deadline) {
		if count := w.count(); count >= n {
			return time.Now().Add(settle)
		} else if count/max(1, n/10) != last/max(1, n/10) {
			framework.Progress("%d of %d runs have a running pod", count, n)
			last = count
		}
		time.Sleep(200 * time.Millisecond) // polling the watch's count
	}
	return deadline
}

// runningSince is when each run's pod was first seen running, after
// instant.
func (w *runWatch) runningSince(instant time.Time) []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []time.Duration
	for _, at := range w.running {
		out = append(out, at.Sub(instant))
	}
	return out
}
