//go:build integration

package scheduledjob

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/spreadledger"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// TestBurstCreatesJobsBeforeStatus runs the controller as in production,
// with its work queue, watches and two workers, on twenty ScheduledJobs due
// at the same instant: the runs' Jobs are created before their status
// writes, so that a run does not wait for the status writes of the runs
// queued ahead of it. Reconciling each in turn, create then status, would
// write the first status after one or two creations; here it must come
// after at least a quarter of them; the wake-ups of the due runs are in
// the queue, at the events' priority (requeue.Priority), before the new
// Jobs' events, and on an idle machine every Job comes before any status
// write. (Not all: the queue adds due items on
// timers, and under load the first Jobs' watch events can overtake the
// last items; in CI, with the other packages' tests running beside it, a
// status came after 9 of 20.) The controller's clock is the real one
// shifted, so that a run time comes five seconds after the start, and the
// queue's real-time delays line up with it as in production.
//
// It measures an order of events that the machine's load can change, so
// it runs alone, in make test's timing step, not in make unit (-short),
// where every package's tests share two cores; TestJobsBeforeStatuses
// covers the same logic deterministically there.
func TestBurstCreatesJobsBeforeStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("a timing test: make test runs it alone, after make unit; TestJobsBeforeStatuses covers its logic")
	}
	const n = 20
	ns := newNamespace(t)
	var sjs []*v1alpha1.ScheduledJob
	for i := range n {
		sj := newScheduledJob(ns, fmt.Sprintf("burst-%02d", i), "* * * * *")
		// The run before the instant is long past its deadline when the
		// controller starts: it is missed, not created.
		sj.Spec.StartingDeadlineSeconds = ptr.To[int64](5)
		create(t, sj)
		sjs = append(sjs, sj)
	}
	instant := time.Now().Truncate(time.Minute).Add(2 * time.Minute)
	clk := shiftedClock{shift: instant.Sub(time.Now().Add(5 * time.Second))}

	recorder := &requestLog{}
	ctx, stop := context.WithCancel(env.Ctx)
	defer stop()
	mgr := newBurstManager(t, ns)
	c := NewController(&recordingClient{Client: mgr.GetClient(), log: recorder}, mgr.GetAPIReader(), clk, env.Recorder, testOptions)
	if err := c.Register(ctx, mgr, 2); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("requests: %v", recorder)
		}
	})
	testenv.Eventually(t, 30*time.Second, "the runs at "+instant.String()+" to be created and recorded in status",
		func() bool { return allRunsRecorded(t, sjs, instant) })
	checkCreatesFirst(t, recorder.entries(), n)

	// The runs finish, after the requeues that back up the deferred status
	// writes (a second after the instant) have passed; the controller
	// writes their statuses and, once the cache has the writes, keeps no
	// copy of them: no reconcile would drop them before the next run.
	time.Sleep(2*time.Second - clk.Since(instant))
	for _, job := range jobs(t, ns) {
		finish(t, &job, true, instant.Add(time.Second))
	}
	testenv.Eventually(t, 30*time.Second, "the finished runs to be recorded in status", func() bool { return allRunsFinished(t, sjs) })
	testenv.Eventually(t, 10*time.Second, "the status writes to be forgotten once made", func() bool { return rememberedWrites(c) == 0 })
}

// TestJobsBeforeStatuses: the logic TestBurstCreatesJobsBeforeStatus
// measures, without timing. Reconciled one after another at the instant
// their runs are due, ScheduledJobs get their Jobs with no status write in
// between: each reconcile that started a run leaves its status to the
// next. Then each one's next reconcile writes its status.
func TestJobsBeforeStatuses(t *testing.T) {
	const n = 5
	ns := newNamespace(t)
	var sjs []*v1alpha1.ScheduledJob
	for i := range n {
		sj := newScheduledJob(ns, fmt.Sprintf("instant-%d", i), "* * * * *")
		create(t, sj)
		sjs = append(sjs, get(t, sj))
	}
	run := firstRun(sjs[n-1])
	recorder := &requestLog{}
	c := newSuiteController(&recordingClient{Client: env.Cached, log: recorder})
	env.Clock.SetTime(run.Add(time.Millisecond))
	for _, sj := range sjs {
		waitForCache(t, sj)
		if _, err := c.Reconcile(env.Ctx, requestFor(sj)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"create", "create", "create", "create", "create"}
	if diff := cmp.Diff(want, recorder.entries()); diff != "" {
		t.Fatalf("requests of the first reconciles (-want +got):\n%s", diff)
	}
	for _, sj := range sjs {
		waitForCache(t, sj)
		if _, err := c.Reconcile(env.Ctx, requestFor(sj)); err != nil {
			t.Fatal(err)
		}
		if statusDeferred(c, sj) {
			t.Errorf("%s: status still deferred after its second reconcile", sj.Name)
		}
	}
	want = append(want, "status", "status", "status", "status", "status")
	if diff := cmp.Diff(want, recorder.entries()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if !allRunsRecorded(t, sjs, run) {
		t.Error("not every run is recorded in status")
	}
}

// checkCreatesFirst: in the requests after the first Job creation, at
// least a quarter of the n creations come before the first status write.
func checkCreatesFirst(t *testing.T, entries []string, n int) {
	t.Helper()
	firstCreate, creates := -1, 0
	for i, e := range entries {
		switch {
		case e == "create":
			creates++
			if firstCreate < 0 {
				firstCreate = i
			}
		case e == "status" && firstCreate >= 0 && creates < n/4:
			t.Fatalf("a status write came after %d of the %d Jobs were created, want at least %d: %v", creates, n, n/4, entries[firstCreate:])
		}
	}
	if creates != n {
		t.Errorf("%d Jobs created, want %d: %v", creates, n, entries)
	}
}

// allRunsFinished reports whether every ScheduledJob's status records a
// successful run and none active.
func allRunsFinished(t *testing.T, sjs []*v1alpha1.ScheduledJob) bool {
	for _, sj := range sjs {
		if status := get(t, sj).Status; status.LastSuccessfulTime == nil || len(status.Active) > 0 {
			return false
		}
	}
	return true
}

func rememberedWrites(c *Controller) int {
	c.known.mu.Lock()
	defer c.known.mu.Unlock()
	n := 0
	for _, e := range c.known.byKey {
		if e.newest != nil {
			n++
		}
	}
	return n
}

// newBurstManager returns a manager, not yet started, whose cache holds
// the namespace's objects and the suite's warm-up pods and ledgers.
func newBurstManager(t *testing.T, ns string) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  ontimescheme.New(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:       {Label: warmup.PodSelector()},
			&corev1.ConfigMap{}: spreadledger.Cache(testSpreadNamespace),
		}},
		// The suite may run this test more than once (-count).
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// allRunsRecorded reports whether every ScheduledJob's status records its
// run at instant.
func allRunsRecorded(t *testing.T, sjs []*v1alpha1.ScheduledJob, instant time.Time) bool {
	for _, sj := range sjs {
		last := get(t, sj).Status.LastScheduleTime
		if last == nil || !last.Time.Equal(instant) {
			return false
		}
	}
	return true
}

// shiftedClock is the real clock, shifted.
type shiftedClock struct{ shift time.Duration }

func (c shiftedClock) Now() time.Time                  { return time.Now().Add(c.shift) }
func (c shiftedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// requestLog is the order of the Job creations and status writes a
// controller made.
type requestLog struct {
	mu  sync.Mutex
	log []string
}

func (l *requestLog) add(entry string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, entry)
}

func (l *requestLog) String() string { return fmt.Sprint(l.entries()) }

func (l *requestLog) entries() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.log...)
}

// recordingClient logs Job creations and status writes to its log.
type recordingClient struct {
	client.Client
	log *requestLog
}

func (c *recordingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	err := c.Client.Create(ctx, obj, opts...)
	if _, isJob := obj.(*batchv1.Job); isJob && err == nil {
		c.log.add("create")
	}
	return err
}

func (c *recordingClient) Status() client.SubResourceWriter {
	return recordingStatus{SubResourceWriter: c.Client.Status(), log: c.log}
}

type recordingStatus struct {
	client.SubResourceWriter
	log *requestLog
}

func (s recordingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	err := s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	if err == nil {
		s.log.add("status")
	}
	return err
}
