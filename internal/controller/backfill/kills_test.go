//go:build integration

package backfill

import (
	"context"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

func TestMain(m *testing.M) {
	log.SetLogger(logr.Discard()) // the killed leaders' managers log canceled requests
	code := m.Run()
	if harnessOnce.h != nil {
		harnessOnce.h.Stop()
	}
	os.Exit(code)
}

// TestThousandTimesUnderLeaderKills backfills 1,000 times of a minutely
// ScheduledJob that keeps no history (successfulJobsHistoryLimit 0: each
// Job is deleted once counted), at most 10 at once, on a real API server,
// while the leader is killed every 0.2 to 1.5 s: its manager stopped
// mid-reconcile (requests in flight canceled) and the next leader's
// started, with a cache of its own. The test plays the Job controller:
// each run finishes a moment after it is created, one in ten failed. A
// watch sees every Job created: each time's Job is created once, never
// more than 10 at once are active, and the status counts 1,000 started.
func TestThousandTimesUnderLeaderKills(t *testing.T) {
	const times = 1000 // in make unit too: about 45 s, beside the race-detected packages
	h := harness(t)
	ns := h.NewNamespace(t)
	from := time.Now().Add(-72 * time.Hour).Truncate(time.Minute)
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: ns},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "* * * * *", SuccessfulJobsHistoryLimit: ptr.To[int32](0), FailedJobsHistoryLimit: ptr.To[int32](0),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
	h.Create(t, sj)
	bf := &v1alpha1.Backfill{ObjectMeta: metav1.ObjectMeta{Name: "three-days-ago", Namespace: ns},
		Spec: v1alpha1.BackfillSpec{ScheduledJobName: "report", From: metav1.Time{Time: from}, To: metav1.Time{Time: from.Add(time.Duration(times-1) * time.Minute)}, MaxActive: 10}}
	h.Create(t, bf)

	// A liveness bound, not a speed goal: 45 s alone, 4 minutes was not
	// enough at make test's lowest CPU priority beside three clusters.
	ctx, stop := context.WithTimeout(h.Ctx, 10*time.Minute)
	defer stop()
	jobs := watchJobs(ctx, t, h, ns)
	kills := 0
	for !backfillComplete(ctx, h, bf) && ctx.Err() == nil {
		runLeader(ctx, t, h, time.Duration(200+rand.IntN(1300))*time.Millisecond)
		kills++
	}
	stop()
	jobs.wait()
	if ctx.Err() != nil && !backfillComplete(h.Ctx, h, bf) {
		t.Fatalf("not complete after %d leaders: %s", kills, backfillStatus(h, bf))
	}
	t.Logf("%d leaders, %d times: %s", kills, times, backfillStatus(h, bf))
	for i := range times {
		name := sj.JobName(from.Add(time.Duration(i) * time.Minute))
		if n := len(jobs.uids[name]); n != 1 {
			t.Errorf("%s created %d times", name, n)
		}
	}
	if jobs.maxActive > 10 {
		t.Errorf("%d runs active at once, maxActive 10", jobs.maxActive)
	}
	s := backfillOf(h, bf).Status
	if s.Started != int32(times) || s.Succeeded+s.Failed != int32(times) || s.Skipped != 0 || s.Total != int32(times) {
		t.Errorf("status %+v", s)
	}
}

// runLeader runs a leader's controller, on a manager of its own, for
// lifetime, then kills it.
func runLeader(ctx context.Context, t *testing.T, h *testenv.Harness, lifetime time.Duration) {
	// Each leader registers the controller again in this process.
	mgr, err := ctrl.NewManager(h.Config, ctrl.Options{Scheme: ontimescheme.New(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	c := NewController(mgr.GetClient(), mgr.GetAPIReader(), clock.RealClock{}, record.NewFakeRecorder(10000))
	if err := c.Register(mgr, 4); err != nil {
		t.Fatal(err)
	}
	leader, kill := context.WithTimeout(ctx, lifetime)
	defer kill()
	// A leader killed before its caches synced (on a loaded machine that
	// can take longer than the shortest lifetime) returns the kill as an
	// error: only an error while the leader was alive fails the test.
	if err := mgr.Start(leader); err != nil && leader.Err() == nil {
		t.Fatal(err)
	}
}

// jobWatch follows every Job of a namespace: the UIDs created under each
// name, and the most active at once. It plays the Job controller too:
// every Job finishes a moment after it appears, one in ten failed.
type jobWatch struct {
	uids      map[string]map[types.UID]bool
	maxActive int
	done      sync.WaitGroup
}

func watchJobs(ctx context.Context, t *testing.T, h *testenv.Harness, ns string) *jobWatch {
	c, err := client.NewWithWatch(h.Config, client.Options{Scheme: ontimescheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, &batchv1.JobList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	jobs := &jobWatch{uids: map[string]map[types.UID]bool{}}
	active := map[types.UID]bool{}
	jobs.done.Add(1)
	go func() {
		defer jobs.done.Done()
		defer w.Stop()
		for event := range w.ResultChan() {
			job, ok := event.Object.(*batchv1.Job)
			if !ok {
				continue
			}
			if jobs.uids[job.Name] == nil {
				jobs.uids[job.Name] = map[types.UID]bool{}
			}
			jobs.uids[job.Name][job.UID] = true
			_, finished := v1alpha1.JobFinished(job)
			switch {
			case event.Type == watch.Deleted || finished:
				delete(active, job.UID)
			case event.Type == watch.Added:
				active[job.UID] = true
				jobs.maxActive = max(jobs.maxActive, len(active))
				go finishSoon(ctx, c, job.DeepCopy())
			}
		}
	}()
	return jobs
}

func (j *jobWatch) wait() { j.done.Wait() }

// finishSoon finishes a Job 10 to 100 ms from now, as the Job controller
// would once its pod ran.
func finishSoon(ctx context.Context, c client.Client, job *batchv1.Job) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Duration(10+rand.IntN(90)) * time.Millisecond):
	}
	condition := batchv1.JobComplete
	if rand.IntN(10) == 0 {
		condition = batchv1.JobFailed
	}
	now := metav1.Now()
	job.Status.StartTime = &now
	job.Status.Conditions = []batchv1.JobCondition{{Type: condition, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	if condition == batchv1.JobComplete {
		job.Status.CompletionTime = &now
		job.Status.Conditions = append([]batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now}}, job.Status.Conditions...)
	} else {
		job.Status.Conditions = append([]batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: now}}, job.Status.Conditions...)
	}
	_ = c.Status().Update(ctx, job)
}

func backfillOf(h *testenv.Harness, bf *v1alpha1.Backfill) *v1alpha1.Backfill {
	current := &v1alpha1.Backfill{}
	_ = h.Live.Get(h.Ctx, client.ObjectKeyFromObject(bf), current)
	return current
}

func backfillComplete(ctx context.Context, h *testenv.Harness, bf *v1alpha1.Backfill) bool {
	current := &v1alpha1.Backfill{}
	return h.Live.Get(ctx, client.ObjectKeyFromObject(bf), current) == nil && meta.IsStatusConditionTrue(current.Status.Conditions, v1alpha1.BackfillComplete)
}

func backfillStatus(h *testenv.Harness, bf *v1alpha1.Backfill) string {
	s := backfillOf(h, bf).Status
	if c := meta.FindStatusCondition(s.Conditions, v1alpha1.BackfillComplete); c != nil {
		return s.Done + " done, " + c.Reason + ": " + c.Message
	}
	return s.Done + " done"
}
