//go:build bench

package controller

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

// The spreading benchmark (-spread): N ScheduledJobs every five minutes,
// unspread ("*/5 * * * *": all at once), hashed ("H/5 * * * *") and
// balanced (the same with spec.spread Balanced), each in a fresh cluster,
// and a floor: a bare client creating N Jobs at one instant, as fast as
// the API server takes them, the best any controller could do here.

// spreadVariant is one way of writing the N schedules.
type spreadVariant struct {
	name     string // for -variants
	label    string
	schedule string
	spread   *v1alpha1.Spread
}

var spreadVariants = []spreadVariant{
	{name: "unspread", label: "unspread `*/5 * * * *`", schedule: "*/5 * * * *"},
	{name: "hash", label: "hash `H/5 * * * *`", schedule: "H/5 * * * *"},
	{name: "balanced", label: "balanced `H/5 * * * *`", schedule: "H/5 * * * *", spread: &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, Group: "bench"}},
}

const spreadPeriod = 5 * time.Minute

// benchSpread prints the spreading table for each N: the floor and the
// variants named in only (all when empty).
func benchSpread(t *testing.T, sizes []int, periods int, only []string) {
	selected := func(name string) bool { return len(only) == 0 || slices.Contains(only, name) }
	var rows []string
	for _, n := range sizes {
		if selected("floor") {
			t.Run(fmt.Sprintf("N=%d/floor", n), func(t *testing.T) { rows = append(rows, measureFloor(t, n)) })
		}
		for _, v := range spreadVariants {
			if selected(v.name) {
				t.Run(fmt.Sprintf("N=%d/%s", n, v.name), func(t *testing.T) { rows = append(rows, measureSpread(t, n, v, periods)) })
			}
		}
	}
	fmt.Println("| N | schedules | runs created / scheduled | peak Job creations per minute | creation skew p50 | p99 | max | API requests per run |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|")
	fmt.Println(strings.Join(rows, "\n"))
}

// freshCluster starts a new bench cluster with a node per 50 ScheduledJobs
// and the controller benchmark's audit policy; the test's end deletes it.
func freshCluster(t *testing.T, n int) *framework.Cluster {
	return framework.FreshBenchCluster(t, cluster, max(3, n/50), "test/bench/controller/audit-policy.yaml")
}

// clusterWithOntime starts a fresh cluster with ontime's controller, and
// returns a client; the test's end stops both.
func clusterWithOntime(t *testing.T, n int) client.Client {
	cl := freshCluster(t, n)
	framework.StartBenchController(t, cl, framework.BuildOntime(t, cl.Work))
	return framework.NewClient(t, cl.Kubeconfig)
}

// measureSpread runs one variant and returns its table row.
func measureSpread(t *testing.T, n int, v spreadVariant, periods int) string {
	framework.Progress("N=%d %s: starting a fresh cluster", n, v.label)
	c := clusterWithOntime(t, n)
	framework.Progress("N=%d %s: creating %d ScheduledJobs", n, v.label, n)
	createScheduledJobs(t, c, n, v)
	placed := time.Now()
	waitEffective(t, c, n)
	framework.Progress("N=%d %s: every ScheduledJob has its effective schedule after %s", n, v.label, time.Since(placed).Round(time.Second))
	// Whole periods, from the first boundary at least a minute after every
	// ScheduledJob has its schedule.
	from := time.Now().Add(time.Minute).Truncate(spreadPeriod).Add(spreadPeriod)
	to := from.Add(time.Duration(periods) * spreadPeriod)
	until := to.Add(75 * time.Second)
	framework.Progress("N=%d %s: measuring runs from %s to %s; results at %s", n, v.label, from.Format(time.TimeOnly), to.Format(time.TimeOnly), until.Format(time.TimeOnly))
	time.Sleep(time.Until(until))
	s := &controllerStats{label: v.label, namespace: "bench-sj", byKind: map[string]int{},
		agent: func(ua string) bool { return strings.HasPrefix(ua, "ontime/") }}
	perMinute := map[time.Time]int{}
	framework.ReadAudit(t, framework.AuditLogPath(cluster), func(e framework.AuditEvent) {
		s.count(e, from, to)
		if e.CreatedJobIn(s.namespace) {
			if scheduled, ok := framework.JobScheduledTime(e.ObjectRef.Name); ok && !scheduled.Before(from) && scheduled.Before(to) {
				perMinute[scheduled]++
			}
		}
	})
	peak := 0
	for _, count := range perMinute {
		peak = max(peak, count)
	}
	row := s.row(n, n*periods)
	// Insert the peak after the runs column.
	cells := strings.Split(row, " | ")
	cells = slices.Insert(cells, 3, strconv.Itoa(peak))
	return strings.Join(cells, " | ")
}

// createScheduledJobs creates N ScheduledJobs of the variant, 20 at a time.
func createScheduledJobs(t *testing.T, c client.Client, n int, v spreadVariant) {
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench-sj"}}); err != nil {
		t.Fatal(err)
	}
	framework.Parallel(n, func(i int) {
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "bench-sj", Name: fmt.Sprintf("job-%04d", i)},
			Spec: v1alpha1.ScheduledJobSpec{Schedule: v.schedule, Spread: v.spread, JobTemplate: framework.JobTemplate()}}
		if err := c.Create(ctx, sj); err != nil {
			t.Errorf("creating %s: %v", sj.Name, err)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
}

// waitEffective waits until every ScheduledJob shows an effective
// schedule: the balanced ones are placed.
func waitEffective(t *testing.T, c client.Client, n int) {
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		var list v1alpha1.ScheduledJobList
		if err := c.List(context.Background(), &list, client.InNamespace("bench-sj")); err != nil {
			continue
		}
		done := 0
		for _, sj := range list.Items {
			if sj.Status.EffectiveSchedule != "" {
				done++
			}
		}
		if done == n {
			return
		}
	}
	t.Fatal("not every ScheduledJob got an effective schedule within 10 minutes")
}

// measureFloor creates N Jobs at one instant with an unlimited client and
// returns the floor row: time from the instant to each create's
// completion, as the API server logs it.
func measureFloor(t *testing.T, n int) string {
	framework.Progress("N=%d floor: starting a fresh cluster", n)
	cl := freshCluster(t, n)
	c := framework.NewClient(t, cl.Kubeconfig)
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench-floor"}}); err != nil {
		t.Fatal(err)
	}
	// The instant is the next whole minute, as for a scheduled run.
	instant := time.Now().Truncate(time.Minute).Add(time.Minute)
	framework.CreateJobsAtOnce(t, cl.Kubeconfig, "bench-floor", n, instant)
	time.Sleep(5 * time.Second) // the audit log is written asynchronously
	var skews []time.Duration
	framework.ReadAudit(t, framework.AuditLogPath(cluster), func(e framework.AuditEvent) {
		if e.CreatedJobIn("bench-floor") {
			skews = append(skews, e.StageTimestamp.Sub(instant))
		}
	})
	slices.Sort(skews)
	return fmt.Sprintf("| %d | floor: a bare client, %d Jobs at one instant | %d / %d | %d | %s | %s | %s | 1.0 |", n, n, len(skews), n, len(skews),
		framework.Percentile(skews, 50), framework.Percentile(skews, 99), framework.Percentile(skews, 100))
}
