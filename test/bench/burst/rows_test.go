//go:build bench

package burst

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

// rowKind is one way of making the burst's runs.
type rowKind struct {
	name, label string
	// start brings the row's controller up on the cluster; nil for the
	// floor, which has none.
	start func(t *testing.T, cl *framework.Cluster) *controllerProcess
	// newObject is the i-th object whose one run is due at instant; nil
	// for the floor.
	newObject func(i int, instant time.Time) client.Object
	// agent tells the row's requests apart in the audit log.
	agent func(userAgent string) bool
}

var rowKinds = map[string]rowKind{
	"floor": {name: "floor", label: "floor: a bare client creating the Jobs",
		// The test binary's client (controller-runtime's default user
		// agent is the binary's name).
		agent: func(ua string) bool { return strings.HasPrefix(ua, "burst.test/") }},
	"ontime": {name: "ontime", label: "ontime ScheduledJob, shipped defaults (300 QPS, burst 600, 20 workers)",
		start: ontimeController(), newObject: newScheduledJob, agent: isOntime},
	// The lever the first runs showed: the creates of an instant in
	// flight at once.
	"ontime-100": {name: "ontime-100", label: "ontime ScheduledJob, 100 workers",
		start: ontimeController("--workers=100"), newObject: newScheduledJob, agent: isOntime},
	"kcm": {name: "kcm", label: "kube-controller-manager CronJob, defaults (20 QPS, burst 30, 5 workers)",
		start: cronJobController(nil), newObject: newCronJob, agent: isCronJobController},
	"kcm-raised": {name: "kcm-raised", label: "kube-controller-manager CronJob, ontime's limits (300 QPS, burst 600, 20 workers)",
		start:     cronJobController([]string{"--kube-api-qps=300", "--kube-api-burst=600", "--concurrent-cron-job-syncs=20"}),
		newObject: newCronJob, agent: isCronJobController},
}

func isOntime(ua string) bool { return strings.HasPrefix(ua, "ontime/") }

// isCronJobController: kube-controller-manager's controllers each append
// their name to its user agent.
func isCronJobController(ua string) bool { return strings.HasSuffix(ua, "/cronjob-controller") }

// controllerProcess is the row's controller: its process, for CPU and
// memory, and its /metrics, to tell when its work queues are empty.
type controllerProcess struct {
	pid        func() int
	metricsURL string
	// pprofURL, when set, serves Go's /debug/pprof.
	pprofURL string
	// binary is the ontime binary, for pprof's symbols.
	binary string
}

// clusterSettings are every row's: the cluster's kube-controller-manager
// (its Job controller makes every row's pods) without its CronJob
// controller, which a row runs in a process of its own, and with its
// client limits raised (1000 QPS, burst 2000) so that pods are made as
// fast for every row and the Job controller is not what a row measures.
var clusterSettings = []string{"--controllers=*,-cronjob-controller", "--kube-api-qps=1000", "--kube-api-burst=2000"}

// freshCluster starts a cluster with a fake node per 50 runs (pods complete
// at once) and the settings every row shares.
func freshCluster(t *testing.T, n int) *framework.Cluster {
	cl := framework.StartCluster(t, cluster, framework.ClusterOptions{Nodes: max(3, n/50), Env: []string{"ONTIME_KWOK_STAGES=fast"}, AuditPolicy: auditPolicy})
	restartControllerManager(t, cl)
	return cl
}

// restartControllerManager stops the cluster's kube-controller-manager and
// starts it again with clusterSettings, waiting until the new process
// holds its Lease.
func restartControllerManager(t *testing.T, cl *framework.Cluster) {
	kcm, err := framework.LoadComponent(framework.ClusterDir(cluster), "kube-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	c := framework.NewClient(t, cl.Kubeconfig)
	before := leaseHolder(c)
	stop(t, kcm)
	kcm.Args = append(kcm.Args, clusterSettings...)
	if err := kcm.Start(); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "the restarted kube-controller-manager holds its Lease", func() bool {
		holder := leaseHolder(c)
		return holder != "" && holder != before
	})
}

func leaseHolder(c client.Client) string {
	var lease coordinationv1.Lease
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "kube-system", Name: "kube-controller-manager"}, &lease); err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// stop sends SIGTERM, as a kubelet stops a static pod, and waits for the
// process to exit.
func stop(t *testing.T, c *framework.Component) {
	pid, err := c.Pid()
	if err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(50 * time.Millisecond) // waiting for the process to exit
	}
}

// ontimeController runs `ontime controller` as the other benchmarks do
// (shipped defaults, the webhook at localhost from config/dev) with extra
// flags, and Go's pprof endpoints when -profile asks.
func ontimeController(extra ...string) func(t *testing.T, cl *framework.Cluster) *controllerProcess {
	return func(t *testing.T, cl *framework.Cluster) *controllerProcess {
		cl.Kubectl(t, "apply", "--server-side", "-k", "config/dev")
		binary := framework.BuildOntime(t, cl.Work)
		p := &controllerProcess{binary: binary}
		flags := slices.Clone(extra)
		if *profile {
			address := fmt.Sprintf("127.0.0.1:%d", framework.FreePort(t))
			flags = append(flags, "--pprof-bind-address="+address)
			p.pprofURL = "http://" + address + "/debug/pprof"
		}
		ctl := framework.StartBenchController(t, cl, binary, flags...)
		p.pid, p.metricsURL = ctl.Pid, ctl.MetricsURL()
		return p
	}
}

// cronJobController runs kube-controller-manager's CronJob controller alone,
// in a process of its own started as kwokctl starts the cluster's (same
// binary, kubeconfig and certificates), without leader election and on a
// port of its own, with extra flags.
func cronJobController(extra []string) func(t *testing.T, cl *framework.Cluster) *controllerProcess {
	return func(t *testing.T, cl *framework.Cluster) *controllerProcess {
		base, err := framework.LoadComponent(framework.ClusterDir(cluster), "kube-controller-manager")
		if err != nil {
			t.Fatal(err)
		}
		port := framework.FreePort(t)
		c := &framework.Component{Name: "cronjob-controller", Dir: base.Dir, Env: base.Env,
			PidFile: filepath.Join(cl.Work, "cronjob-controller.pid"), LogFile: filepath.Join(cl.Work, "cronjob-controller.log")}
		for _, arg := range base.Args {
			if name, _, _ := strings.Cut(arg, "="); !isClusterSetting(name) && name != "--secure-port" {
				c.Args = append(c.Args, arg)
			}
		}
		c.Args = append(c.Args, "--controllers=cronjob-controller", "--leader-elect=false", "--secure-port="+strconv.Itoa(port))
		c.Args = append(c.Args, extra...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stop(t, c)
			if t.Failed() {
				framework.Tail(t, c.LogFile)
			}
		})
		p := &controllerProcess{metricsURL: fmt.Sprintf("https://127.0.0.1:%d/metrics", port),
			pid: func() int { pid, _ := c.Pid(); return pid }}
		framework.Eventually(t, time.Minute, "the CronJob controller serves /healthz", func() bool {
			resp, err := insecureClient.Get(fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		return p
	}
}

// isClusterSetting: the flags clusterSettings sets, which the CronJob
// controller's own process does not inherit.
func isClusterSetting(name string) bool {
	for _, setting := range clusterSettings {
		if strings.HasPrefix(setting, name+"=") {
			return true
		}
	}
	return false
}

// onceAt is a schedule whose only run (in the year) is instant, in UTC.
func onceAt(instant time.Time) string {
	instant = instant.UTC()
	return fmt.Sprintf("%d %d %d %d *", instant.Minute(), instant.Hour(), instant.Day(), int(instant.Month()))
}

func objectName(i int) string { return fmt.Sprintf("job-%05d", i) }

func newScheduledJob(i int, instant time.Time) client.Object {
	return &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: objectName(i)},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: onceAt(instant), TimeZone: ptr.To("Etc/UTC"), JobTemplate: framework.JobTemplate()}}
}

func newCronJob(i int, instant time.Time) client.Object {
	return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: objectName(i)},
		Spec: batchv1.CronJobSpec{Schedule: onceAt(instant), TimeZone: ptr.To("Etc/UTC"), JobTemplate: framework.JobTemplate()}}
}

// queueDepth is the sum of the controller's work queues' depths, from its
// /metrics: 0 once it has nothing left to do now (a run requeued for later
// waits outside the depth).
func (p *controllerProcess) queueDepth() (float64, error) {
	resp, err := insecureClient.Get(p.metricsURL)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", p.metricsURL, resp.Status)
	}
	return framework.SumMetric(resp.Body, "workqueue_depth")
}

// writeProfile takes a CPU profile over seconds into the cluster's work
// directory and returns its path.
func (p *controllerProcess) writeProfile(dir string, seconds int) (string, error) {
	resp, err := http.Get(fmt.Sprintf("%s/profile?seconds=%d", p.pprofURL, seconds))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	path := filepath.Join(dir, "ontime-cpu.pprof")
	file, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer file.Close()
	_, err = file.ReadFrom(resp.Body)
	return path, err
}
