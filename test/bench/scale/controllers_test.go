//go:build bench

package scale

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/test/framework"
)

// measureOntime runs ontime's controller alone with n ScheduledJobs.
func measureOntime(t *testing.T, n, minutes, others int, extra []string) *result {
	label := "ontime"
	if len(extra) > 0 {
		label += " " + strings.Join(extra, " ")
	}
	if others > 0 {
		label += fmt.Sprintf(", %d other CronJobs", others)
	}
	framework.Progress("N=%d %s: starting a fresh cluster", n, label)
	cl := freshCluster(t, n)
	binary := framework.BuildOntime(t, cl.Work)
	opts := framework.BenchControllerOptions(cl, binary, extra...)
	ctl := framework.StartController(t, opts)
	cached := "ScheduledJobs, Jobs, warm-up pods, spread ConfigMaps"
	if !slices.Contains(extra, "--cronjob-warmup=false") {
		cached += ", CronJobs"
	}
	cut := &controllerUnderTest{
		label:     label,
		sampler:   newSampler(fmt.Sprintf("http://127.0.0.1:%d/metrics", ctl.MetricsPort), "scheduledjob.run"),
		newObject: newScheduledJob,
		lease:     client.ObjectKey{Namespace: "ontime-system", Name: "ontime-controller.ontime.dev"},
		cached:    cached,
		others:    others,
		// The restarted controller elects itself leader, as every replica
		// of config/default does.
		restart: func() time.Time {
			ctl.Stop()
			started := time.Now()
			opts.LeaderElect, opts.MetricsPort, opts.ProbePort = true, ctl.MetricsPort, ctl.ProbePort
			opts.Name = "bench-restarted"
			framework.StartController(t, opts)
			return started
		},
	}
	return observe(t, framework.NewClient(t, cl.Kubeconfig), cut, n, minutes)
}

// measureUpstream runs kube-controller-manager, as kwokctl starts it, with
// n CronJobs.
func measureUpstream(t *testing.T, n, minutes int) *result {
	label := "kube-controller-manager"
	framework.Progress("N=%d %s: starting a fresh cluster", n, label)
	cl := freshCluster(t, n)
	kcm, err := framework.LoadComponent(framework.ClusterDir(cluster), "kube-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	port := kcm.Flag("secure-port")
	if port == "" {
		t.Fatalf("kube-controller-manager has no --secure-port: %v", kcm.Args)
	}
	cut := &controllerUnderTest{
		label:     label,
		sampler:   newSampler("https://127.0.0.1:"+port+"/metrics", "cronjob"),
		newObject: newCronJob,
		lease:     client.ObjectKey{Namespace: "kube-system", Name: "kube-controller-manager"},
		cached:    "every controller's: CronJobs, Jobs, pods, nodes, …",
		// SIGTERM, as a kubelet stops a static pod, then the same command.
		restart: func() time.Time {
			pid, err := kcm.Pid()
			if err != nil {
				t.Fatal(err)
			}
			_ = syscall.Kill(pid, syscall.SIGTERM)
			for syscall.Kill(pid, 0) == nil {
				time.Sleep(50 * time.Millisecond) // waiting for the process to exit
			}
			started := time.Now()
			if err := kcm.Start(); err != nil {
				t.Fatal(err)
			}
			return started
		},
	}
	return observe(t, framework.NewClient(t, cl.Kubeconfig), cut, n, minutes)
}

// restartResult is how long a restarted controller took to lead and then
// to reconcile every object once.
type restartResult struct {
	lead, sweep time.Duration
	ok          bool
}

// measureRestart restarts the controller and times it: from the new
// process's start until its Lease names a new holder, and until its work
// queue has taken every object and is empty.
func measureRestart(c client.Client, cut *controllerUnderTest, n int) restartResult {
	before, _ := leaseHolder(c, cut.lease)
	started := cut.restart()
	deadline := started.Add(10 * time.Minute)
	var r restartResult
	for time.Now().Before(deadline) {
		if holder, acquired := leaseHolder(c, cut.lease); holder != "" && holder != before {
			// The new leader writes when it acquired the Lease; the
			// benchmark's own polling adds nothing.
			r.lead = acquired.Sub(started)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The new process's counters start at zero.
	swept, ok := cut.sampler.waitSwept(0, n, deadline)
	r.sweep, r.ok = swept.Sub(started), ok && r.lead > 0
	return r
}

// leaseHolder is the Lease's holder and when it acquired the Lease.
func leaseHolder(c client.Client, key client.ObjectKey) (string, time.Time) {
	var lease coordinationv1.Lease
	if err := c.Get(context.Background(), key, &lease); err != nil || lease.Spec.HolderIdentity == nil {
		return "", time.Time{}
	}
	acquired := time.Now()
	if lease.Spec.AcquireTime != nil {
		acquired = lease.Spec.AcquireTime.Time
	}
	return *lease.Spec.HolderIdentity, acquired
}
