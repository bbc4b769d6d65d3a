// Command reconcile runs one ScheduledJob's run through the ScheduledJob
// controller on a fake API and a fake clock, and writes the coverage of
// one reconcile only: that of a run due now, in a controller that has
// started runs before. test/runpath builds it with -cover and reads what
// it wrote.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/coverage"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/scheduledjob"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
)

func main() {
	dir := flag.String("coverdir", "", "the directory the measured reconcile's coverage is written to")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run starts the first run (the process confirms its status once), records
// it, as its Job's event would ask, then measures the reconcile that
// starts the second: an Allow ScheduledJob every minute, so the first
// run's Job is still active and nothing holds the second back.
func run(dir string) error {
	if dir == "" {
		return fmt.Errorf("-coverdir is required")
	}
	world, err := newWorld()
	if err != nil {
		return err
	}
	for _, step := range []func() error{
		func() error { return world.reconcileAt(world.first) },
		func() error { return world.reconcileAt(world.first) },
		func() error { return world.wantJobs(1) },
		coverage.ClearCounters,
		func() error { return world.reconcileAt(world.first.Add(time.Minute)) },
		func() error { return coverage.WriteMetaDir(dir) },
		func() error { return coverage.WriteCountersDir(dir) },
		func() error { return world.wantJobs(2) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// world is one ScheduledJob and its controller on a fake API.
type world struct {
	client client.Client
	clock  *clocktesting.FakePassiveClock
	ctrl   *scheduledjob.Controller
	key    client.ObjectKey
	first  time.Time
}

func newWorld() (*world, error) {
	created := time.Date(2026, 12, 7, 1, 59, 30, 0, time.UTC)
	sj := &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "nightly", UID: "nightly-uid", CreationTimestamp: metav1.NewTime(created)},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "* * * * *", ConcurrencyPolicy: v1alpha1.AllowConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}}},
	}
	indexes := &fakeIndexes{builder: fake.NewClientBuilder().WithScheme(ontimescheme.New()).WithObjects(sj).
		WithStatusSubresource(&v1alpha1.ScheduledJob{})}
	if err := scheduledjob.Index(context.Background(), indexes); err != nil {
		return nil, err
	}
	c := indexes.builder.Build()
	clock := clocktesting.NewFakePassiveClock(created)
	ctrl := scheduledjob.NewController(c, c, clock, record.NewFakeRecorder(100), scheduledjob.Options{SpreadNamespace: "ontime-system"})
	return &world{client: c, clock: clock, ctrl: ctrl, key: client.ObjectKeyFromObject(sj), first: created.Truncate(time.Minute).Add(time.Minute)}, nil
}

func (w *world) reconcileAt(at time.Time) error {
	w.clock.SetTime(at)
	if _, err := w.ctrl.Reconcile(context.Background(), reconcile.Request{NamespacedName: w.key}); err != nil {
		return fmt.Errorf("reconcile at %s: %w", at.Format(time.TimeOnly), err)
	}
	return nil
}

// wantJobs fails unless the ScheduledJob has made n Jobs: a reconcile that
// did not start its run measured the wrong path.
func (w *world) wantJobs(n int) error {
	var jobs batchv1.JobList
	if err := w.client.List(context.Background(), &jobs, client.InNamespace(w.key.Namespace)); err != nil {
		return err
	}
	if len(jobs.Items) != n {
		return fmt.Errorf("%d Jobs at %s, want %d", len(jobs.Items), w.clock.Now().Format(time.TimeOnly), n)
	}
	return nil
}

// fakeIndexes adds the controller's indexes to a fake client's builder.
type fakeIndexes struct{ builder *fake.ClientBuilder }

func (f *fakeIndexes) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	f.builder = f.builder.WithIndex(obj, field, extract)
	return nil
}
