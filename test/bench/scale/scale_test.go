//go:build bench

// Package scale measures ontime's controller with N ScheduledJobs, and
// kube-controller-manager with N CronJobs, each alone in a fresh kwok
// cluster. The schedules are spread over the hour ("M * * * *" with M = i mod
// 60, as a fleet that already avoids minute 0 would have them). It reports
// the controller process's memory (RSS and Go heap, from its /metrics) idle,
// with the N objects and at the end, CPU per minute, the objects its
// informers cache, how late runs are created (from the audit log), and how
// long a restarted controller takes to lead and to reconcile every object
// once.
//
// It is a Go test behind the build tag bench, on the shared test framework
// (test/framework): each row runs in a subtest whose cleanups stop the
// controller and delete the cluster, also when it fails.
//
//	make bench-scale                                   # N = 100 and 10000, both controllers
//	go test -tags bench -timeout 0 -v ./test/bench/scale -args -n 10000 -controllers ontime -ontime-flags '--job-cache=owned --cronjob-warmup=false'
package scale

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

const (
	cluster   = "ontime-scale"
	namespace = "scale"
	// samplePeriod is how often the controller's metrics are read.
	samplePeriod = 5 * time.Second
)

var (
	sizes       = flag.String("n", "100,10000", "comma-separated numbers of ScheduledJobs (or CronJobs)")
	controllers = flag.String("controllers", "ontime,kube-controller-manager", "comma-separated controllers to measure")
	minutes     = flag.Int("minutes", 6, "scheduled minutes to measure runs, CPU and memory over")
	ontimeFlags = flag.String("ontime-flags", "", "extra flags for `ontime controller`, such as --job-cache=owned --cronjob-warmup=false")
	samplesDir  = flag.String("samples", "", "directory to save each row's metrics samples in (tab-separated)")
	others      = flag.Int("others", 0, "with ontime: also this many CronJobs in another namespace, whose Jobs are not ontime's")
)

func TestBenchScale(t *testing.T) {
	var rows []*result
	for _, n := range framework.ParseSizes(t, *sizes) {
		for _, name := range strings.Split(*controllers, ",") {
			t.Run(fmt.Sprintf("N=%d/%s", n, name), func(t *testing.T) {
				var r *result
				switch name {
				case "ontime":
					r = measureOntime(t, n, *minutes, *others, strings.Fields(*ontimeFlags))
				case "kube-controller-manager":
					r = measureUpstream(t, n, *minutes)
				default:
					t.Fatalf("unknown controller %q: want ontime or kube-controller-manager", name)
				}
				rows = append(rows, r)
				r.writeSamples(*samplesDir)
				// Each row as it completes, in case a later one fails.
				framework.Progress("result: %s", r.resourceRow())
				framework.Progress("result: %s", r.runsRow())
			})
		}
	}
	printTables(rows)
}

// controllerUnderTest is how a measurement reaches one controller.
type controllerUnderTest struct {
	label string
	// sampler reads its metrics; queue is its work queue's name.
	sampler *sampler
	// newObject is the i-th ScheduledJob or CronJob.
	newObject func(i int) client.Object
	// restart stops the controller and starts it again, returning when
	// the new process started.
	restart func() time.Time
	// lease is the controller's leader-election Lease.
	lease client.ObjectKey
	// cached lists the kinds the controller's informers hold, for the
	// report.
	cached string
	// others is how many CronJobs of someone else's to create alongside.
	others int
}

// schedule of the i-th object: one minute of the hour each, evenly.
func schedule(i int) string { return fmt.Sprintf("%d * * * *", i%60) }

func newScheduledJob(i int) client.Object {
	return &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("job-%05d", i)},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: schedule(i), JobTemplate: framework.JobTemplate()}}
}

func newCronJob(i int) client.Object {
	return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("job-%05d", i)},
		Spec: batchv1.CronJobSpec{Schedule: schedule(i), JobTemplate: framework.JobTemplate()}}
}

// freshCluster starts the cluster: a fake node per 500 objects (runs
// complete at once, so only a minute's runs hold pods).
func freshCluster(t *testing.T, n int) *framework.Cluster {
	return framework.FreshBenchCluster(t, cluster, max(3, n/500), "test/bench/scale/audit-policy.yaml")
}

// observe measures one controller with n objects.
func observe(t *testing.T, c client.Client, cut *controllerUnderTest, n, minutes int) *result {
	r := &result{n: n, label: cut.label, cached: cut.cached}
	go cut.sampler.run(samplePeriod)
	defer cut.sampler.close()
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.Sleep(30 * time.Second)
	r.idle = cut.sampler.between(start, time.Now())
	base, _ := cut.sampler.read()

	framework.Progress("N=%d %s: creating %d objects", n, cut.label, n)
	created := time.Now()
	framework.Parallel(n, func(i int) {
		if err := c.Create(ctx, cut.newObject(i)); err != nil {
			t.Errorf("creating object %d: %v", i, err)
		}
		if (i+1)%(max(1, n/10)) == 0 {
			framework.Progress("N=%d %s: created about %d", n, cut.label, i+1)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	r.createRate = float64(n) / time.Since(created).Seconds()
	createOthers(t, c, cut.others)
	swept, ok := cut.sampler.waitSwept(base.adds, n, time.Now().Add(20*time.Minute))
	if !ok {
		t.Fatalf("N=%d %s: the controller did not reconcile every object within 20 minutes", n, cut.label)
	}
	r.sweep = swept.Sub(created)
	framework.Progress("N=%d %s: every object reconciled %s after the first was created", n, cut.label, r.sweep.Round(time.Second))
	loadedFrom := time.Now()
	time.Sleep(30 * time.Second)
	r.loaded = cut.sampler.between(loadedFrom, time.Now())

	from := time.Now().Truncate(time.Minute).Add(2 * time.Minute)
	to := from.Add(time.Duration(minutes) * time.Minute)
	until := to.Add(75 * time.Second)
	framework.Progress("N=%d %s: measuring from %s to %s; results at %s", n, cut.label, from.Format(time.TimeOnly), to.Format(time.TimeOnly), until.Format(time.TimeOnly))
	time.Sleep(time.Until(until))
	r.window = cut.sampler.between(from, to)
	r.skews, r.due = skews(t, n, from, to)
	r.jobs = countJobs(t, c)

	framework.Progress("N=%d %s: restarting the controller", n, cut.label)
	r.restart = measureRestart(c, cut, n)
	return r
}

// createOthers creates CronJobs in the namespace "others": Jobs in the
// cluster that are not ontime's, which --job-cache=owned leaves out.
func createOthers(t *testing.T, c client.Client, others int) {
	if others == 0 {
		return
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "others"}}); err != nil {
		t.Fatal(err)
	}
	framework.Progress("creating %d CronJobs in namespace others", others)
	framework.Parallel(others, func(i int) {
		cj := newCronJob(i)
		cj.SetNamespace("others")
		if err := c.Create(ctx, cj); err != nil {
			t.Errorf("creating CronJob %d: %v", i, err)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
}

// skews are the creation delays of the runs scheduled in [from, to), from
// the audit log, and how many runs were due.
func skews(t *testing.T, n int, from, to time.Time) ([]time.Duration, int) {
	due := 0
	for minute := from; minute.Before(to); minute = minute.Add(time.Minute) {
		// The objects i with i mod 60 = this minute of the hour.
		due += n / 60
		if minute.Minute() < n%60 {
			due++
		}
	}
	var out []time.Duration
	framework.ReadAudit(t, framework.AuditLogPath(cluster), func(e framework.AuditEvent) {
		if !e.CreatedJobIn(namespace) {
			return
		}
		if scheduled, ok := framework.JobScheduledTime(e.ObjectRef.Name); ok && !scheduled.Before(from) && scheduled.Before(to) {
			out = append(out, e.StageTimestamp.Sub(scheduled))
		}
	})
	slices.Sort(out)
	return out, due
}

func countJobs(t *testing.T, c client.Client) int {
	var jobs metav1.PartialObjectMetadataList
	jobs.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("JobList"))
	if err := c.List(context.Background(), &jobs, client.InNamespace(namespace)); err != nil {
		t.Fatalf("listing Jobs: %v", err)
	}
	return len(jobs.Items)
}
