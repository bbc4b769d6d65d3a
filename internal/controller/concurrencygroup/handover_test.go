//go:build integration

package concurrencygroup

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
)

// BenchmarkFreedSlotHandOver measures how soon a freed slot goes to the
// next waiting run (issue #34): a ConcurrencyGroup of 10 with 100 member
// runs waiting, its controller in a manager of its own (watches, cache,
// the shipped Reconcile) against a real API server. One running Job at a
// time is marked Complete; the sample is from just before that status
// write to when a watch of the namespace's Jobs sees the next run
// released. The floor, measured in the same run against the same API
// server: from just before a status write of a Job to when the same watch
// sees a Job that a reactor created on seeing that write — a Job's
// creation after a watch event, the least any controller's hand-over
// takes. Reports p50 and p99 of both, in milliseconds:
//
//	KUBEBUILDER_ASSETS="$(hack/kube-binaries.sh --print)" go test -tags integration -run '^$' -bench FreedSlotHandOver -benchtime 1x ./internal/controller/concurrencygroup/
func BenchmarkFreedSlotHandOver(b *testing.B) {
	h := harness(b)
	for range b.N {
		handOver, floor := measureHandOver(b, h, 100, 10)
		b.ReportMetric(percentile(handOver, 50), "handover-p50-ms")
		b.ReportMetric(percentile(handOver, 99), "handover-p99-ms")
		b.ReportMetric(percentile(floor, 50), "floor-p50-ms")
		b.ReportMetric(percentile(floor, 99), "floor-p99-ms")
		b.Logf("%d hand-overs: p50 %.1f ms, p99 %.1f ms, max %.1f ms; floor (a Job created on a watch event), %d samples: p50 %.1f ms, p99 %.1f ms",
			len(handOver), percentile(handOver, 50), percentile(handOver, 99), percentile(handOver, 100), len(floor), percentile(floor, 50), percentile(floor, 99))
	}
}

func measureHandOver(b *testing.B, h *harnessT, members, limit int) (handOver, floor []time.Duration) {
	ns := h.NewNamespace(b)
	ctx, stop := context.WithCancel(h.Ctx)
	defer stop()
	startGroupManager(ctx, b, h)
	h.Create(b, &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: int32(limit)}})
	watcher, err := client.NewWithWatch(h.Config, client.Options{Scheme: ontimescheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	events, err := watcher.Watch(ctx, &batchv1.JobList{}, client.InNamespace(ns))
	if err != nil {
		b.Fatal(err)
	}
	defer events.Stop()
	base := time.Now().Truncate(time.Minute)
	for i := range members {
		h.Create(b, benchRun(ns, fmt.Sprintf("run-%03d", i), base.Add(time.Duration(i)*time.Second)))
	}
	running := map[string]bool{}
	released := func(deadline time.Duration) (string, time.Time) {
		for {
			select {
			case e := <-events.ResultChan():
				job, ok := e.Object.(*batchv1.Job)
				if ok && e.Type == watch.Modified && job.Spec.Suspend != nil && !*job.Spec.Suspend && !running[job.Name] && !finished(job) {
					running[job.Name] = true
					return job.Name, time.Now()
				}
			case <-time.After(deadline):
				b.Fatalf("no run released within %s; running %v", deadline, running)
			}
		}
	}
	for range limit {
		released(30 * time.Second)
	}
	for range members - limit {
		name := firstOf(running)
		delete(running, name)
		start := time.Now()
		h.Complete(b, ns, name, time.Now())
		_, at := released(10 * time.Second)
		handOver = append(handOver, at.Sub(start))
	}
	return handOver, measureFloor(ctx, b, h, ns, events, members-limit)
}

// measureFloor: a reactor watches the namespace's Jobs and, for each
// status write marking a Job "poked", creates a Job; the sample is from
// just before the write to when the shared watch sees the created Job.
func measureFloor(ctx context.Context, b *testing.B, h *harnessT, ns string, events watch.Interface, samples int) []time.Duration {
	reactorClient, err := client.NewWithWatch(h.Config, client.Options{Scheme: ontimescheme.New()})
	if err != nil {
		b.Fatal(err)
	}
	pokes, err := reactorClient.Watch(ctx, &batchv1.JobList{}, client.InNamespace(ns), client.MatchingLabels{"floor": "poked"})
	if err != nil {
		b.Fatal(err)
	}
	defer pokes.Stop()
	go func() {
		for e := range pokes.ResultChan() {
			if job, ok := e.Object.(*batchv1.Job); ok && e.Type == watch.Modified && job.Annotations["poke"] != "" {
				_ = reactorClient.Create(ctx, benchRun(ns, fmt.Sprint("reaction-", job.Annotations["poke"]), time.Now()))
			}
		}
	}()
	target := benchRun(ns, "poked", time.Now())
	target.Labels["floor"] = "poked"
	h.Create(b, target)
	var floor []time.Duration
	for i := range samples {
		start := time.Now()
		target.Annotations["poke"] = fmt.Sprint(i)
		if err := h.Live.Update(h.Ctx, target); err != nil {
			b.Fatal(err)
		}
		want := fmt.Sprint("reaction-", i)
		for seen := false; !seen; {
			select {
			case e := <-events.ResultChan():
				if job, ok := e.Object.(*batchv1.Job); ok && e.Type == watch.Added && job.Name == want {
					floor = append(floor, time.Since(start))
					seen = true
				}
			case <-time.After(10 * time.Second):
				b.Fatalf("the reactor's Job %s not seen", want)
			}
		}
	}
	return floor
}

// startGroupManager runs the group controller in a manager of its own.
func startGroupManager(ctx context.Context, b *testing.B, h *harnessT) {
	mgr, err := ctrl.NewManager(h.Config, ctrl.Options{Scheme: ontimescheme.New(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		b.Fatal(err)
	}
	c := New(v1alpha1.KindConcurrencyGroup, mgr.GetClient(), mgr.GetAPIReader(), clock.RealClock{}, record.NewFakeRecorder(10000), nil)
	if err := c.Register(mgr, 2); err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("the manager's cache did not sync")
	}
}

// benchRun is a member's waiting run: suspended, in group db.
func benchRun(ns, name string, scheduled time.Time) *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{},
		Annotations: map[string]string{v1alpha1.ScheduledTimestampAnnotation: scheduled.UTC().Format(time.RFC3339)}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	v1alpha1.JoinGroup(job, v1alpha1.ConcurrencyGroupRef{Name: "db"}, nil)
	return job
}

func firstOf(set map[string]bool) string {
	var names []string
	for name := range set {
		names = append(names, name)
	}
	slices.Sort(names)
	return names[0]
}

// percentile of samples, in milliseconds (nearest rank).
func percentile(samples []time.Duration, p int) float64 {
	if len(samples) == 0 {
		return 0
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	i := max((len(sorted)*p+99)/100-1, 0)
	return float64(sorted[min(i, len(sorted)-1)].Microseconds()) / 1000
}
