//go:build bench

// Package controller measures ontime's ScheduledJob controller and
// kube-controller-manager's CronJob controller side by side, in one kwok
// cluster: N ScheduledJobs and N CronJobs on "* * * * *", both controllers at
// their shipped defaults. From the API server's audit log it reports, per
// controller, how many scheduled runs were created, how late (scheduled time
// to the create request's completion), and how many API requests each run
// cost.
//
// It is a Go test behind the build tag bench, on the shared test framework
// (test/framework): each size runs in a subtest whose cleanups stop its
// controller and delete its cluster, also when it fails.
//
//	make bench-controller                      # N = 100 and 1000, then spreading at N = 1000
//	go test -tags bench -timeout 0 -v ./test/bench/controller -args -n 100 -minutes 2
//	go test -tags bench -timeout 0 -v ./test/bench/controller -args -spread 1000 -periods 1   # spreading only (spread_test.go)
package controller

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

const cluster = "ontime-bench"

var (
	sizes       = flag.String("n", "100,1000", "comma-separated numbers of ScheduledJobs (and as many CronJobs)")
	minutes     = flag.Int("minutes", 3, "scheduled minutes to measure, after one minute of warm-up")
	spreadSizes = flag.String("spread", "", "comma-separated N for the spreading benchmark (*/5, H/5 hashed and balanced, and the floor) instead of the side-by-side one")
	periods     = flag.Int("periods", 1, "with -spread: five-minute periods to measure")
	variants    = flag.String("variants", "", "with -spread: comma-separated subset of floor,unspread,hash,balanced (default all)")
)

func TestBenchController(t *testing.T) {
	if *spreadSizes != "" {
		var only []string
		if *variants != "" {
			only = strings.Split(*variants, ",")
		}
		benchSpread(t, framework.ParseSizes(t, *spreadSizes), *periods, only)
		return
	}
	var rows []string
	for _, n := range framework.ParseSizes(t, *sizes) {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) { rows = append(rows, measure(t, n, *minutes)...) })
	}
	fmt.Println("| N | controller | runs created / scheduled | creation skew p50 | p99 | max | API requests per run |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|")
	fmt.Println(strings.Join(rows, "\n"))
}

// measure runs one size and returns the table rows.
func measure(t *testing.T, n, minutes int) []string {
	framework.Progress("N=%d: starting a fresh cluster", n)
	c := clusterWithOntime(t, n)
	framework.Progress("N=%d: creating %d ScheduledJobs and %d CronJobs", n, n, n)
	createObjects(t, c, n)
	// Measure whole minutes, after one minute of warm-up.
	from := time.Now().Truncate(time.Minute).Add(2 * time.Minute)
	to := from.Add(time.Duration(minutes) * time.Minute)
	// A run may still be created after its minute; wait for stragglers.
	until := to.Add(75 * time.Second)
	framework.Progress("N=%d: measuring runs from %s to %s; results at %s", n, from.Format(time.TimeOnly), to.Format(time.TimeOnly), until.Format(time.TimeOnly))
	time.Sleep(time.Until(until))
	return summarize(t, n, minutes, from, to)
}

// createObjects creates N of each kind, 20 at a time.
func createObjects(t *testing.T, c client.Client, n int) {
	ctx := context.Background()
	for _, ns := range []string{"bench-sj", "bench-cj"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	framework.Parallel(n, func(i int) {
		name := fmt.Sprintf("job-%04d", i)
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "bench-sj", Name: name},
			Spec: v1alpha1.ScheduledJobSpec{Schedule: "* * * * *", JobTemplate: framework.JobTemplate()}}
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "bench-cj", Name: name},
			Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: framework.JobTemplate()}}
		for _, obj := range []client.Object{sj, cj} {
			if err := c.Create(ctx, obj); err != nil {
				t.Errorf("creating %s: %v", name, err)
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}
}

type controllerStats struct {
	label     string
	namespace string
	// agent tells this controller's requests apart by user agent.
	agent func(string) bool
	skews []time.Duration
	// arrivals (request received − scheduled) and latencies (server time)
	// of the creates, to tell a client that sends late from a busy server.
	arrivals, latencies []time.Duration
	requests            int
	// byKind counts requests by verb and resource, for the breakdown on
	// stderr.
	byKind map[string]int
}

func summarize(t *testing.T, n, minutes int, from, to time.Time) []string {
	stats := []*controllerStats{
		{label: "ontime ScheduledJob", namespace: "bench-sj", byKind: map[string]int{},
			agent: func(ua string) bool { return strings.HasPrefix(ua, "ontime/") }},
		{label: "kube-controller-manager CronJob", namespace: "bench-cj", byKind: map[string]int{},
			agent: func(ua string) bool { return strings.HasSuffix(ua, "/cronjob-controller") }},
	}
	framework.ReadAudit(t, framework.AuditLogPath(cluster), func(e framework.AuditEvent) {
		for _, s := range stats {
			s.count(e, from, to)
		}
	})
	var rows []string
	for _, s := range stats {
		rows = append(rows, s.row(n, n*minutes))
	}
	return rows
}

// count adds one audit event: a request of this controller's within the
// measured window, or the creation of a run's Job in its namespace.
func (s *controllerStats) count(e framework.AuditEvent, from, to time.Time) {
	if s.agent(e.UserAgent) && !e.RequestReceived.Before(from) && e.RequestReceived.Before(to) {
		kind := e.Verb
		if e.ObjectRef != nil {
			kind += " " + e.ObjectRef.Resource
		}
		s.byKind[kind]++
		// The local setup copies the webhook certificate from its Secret
		// (--webhook-write-cert-files), which a controller in a cluster
		// does not do; it is listed, not counted.
		if e.ObjectRef == nil || e.ObjectRef.Resource != "secrets" {
			s.requests++
		}
	}
	if !e.CreatedJobIn(s.namespace) {
		return
	}
	if scheduled, ok := framework.JobScheduledTime(e.ObjectRef.Name); ok && !scheduled.Before(from) && scheduled.Before(to) {
		s.skews = append(s.skews, e.StageTimestamp.Sub(scheduled))
		s.arrivals = append(s.arrivals, e.RequestReceived.Sub(scheduled))
		s.latencies = append(s.latencies, e.StageTimestamp.Sub(e.RequestReceived))
	}
}

// row is the controller's line of the results table; the breakdowns go to
// stderr.
func (s *controllerStats) row(n, expected int) string {
	var kinds []string
	for kind, count := range s.byKind {
		kinds = append(kinds, fmt.Sprintf("%s=%d", kind, count))
	}
	slices.Sort(kinds)
	framework.Progress("N=%d %s requests: %s", n, s.label, strings.Join(kinds, ", "))
	slices.Sort(s.arrivals)
	slices.Sort(s.latencies)
	framework.Progress("N=%d %s creates: request arrives p50 %s p99 %s after the run time; the server takes p50 %s p99 %s", n, s.label,
		framework.Percentile(s.arrivals, 50), framework.Percentile(s.arrivals, 99), framework.Percentile(s.latencies, 50), framework.Percentile(s.latencies, 99))
	slices.Sort(s.skews)
	created := len(s.skews)
	perRun := "–"
	if created > 0 {
		perRun = fmt.Sprintf("%.1f", float64(s.requests)/float64(created))
	}
	return fmt.Sprintf("| %d | %s | %d / %d (%.0f%%) | %s | %s | %s | %s |", n, s.label, created, expected,
		100*float64(created)/float64(expected), framework.Percentile(s.skews, 50), framework.Percentile(s.skews, 99), framework.Percentile(s.skews, 100), perRun)
}
