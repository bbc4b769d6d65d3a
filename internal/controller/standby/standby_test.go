package standby

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/scheme"
)

// created is the ScheduledJobs' creation time; their first run is at run.
var (
	created = time.Date(2026, 11, 26, 10, 0, 15, 0, time.UTC)
	run     = time.Date(2026, 11, 26, 10, 1, 0, 0, time.UTC)
)

func scheduledJob(policy v1alpha1.ConcurrencyPolicy) *v1alpha1.ScheduledJob {
	return &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report", UID: "sj-uid", CreationTimestamp: metav1.NewTime(created)},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "* * * * *", ConcurrencyPolicy: policy,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
			}}}}},
	}
}

// world is a standby on a fake API server.
type world struct {
	client   client.Client
	clock    *clocktesting.FakePassiveClock
	recorder *record.FakeRecorder
	leading  chan struct{}
	leader   *fakeLeader
	standby  *Standby
}

type fakeLeader struct{ reconciled bool }

func (l *fakeLeader) Reconciled(types.NamespacedName) bool { return l.reconciled }

func newWorld(t *testing.T, objects ...client.Object) *world {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objects...).
		WithStatusSubresource(&v1alpha1.ScheduledJob{}).
		WithIndex(&batchv1.Job{}, jobcontrol.ScheduledJobOwnerKey, jobcontrol.ControllerUID(v1alpha1.GroupVersion.String(), "ScheduledJob")).
		Build()
	w := &world{client: c, clock: clocktesting.NewFakePassiveClock(run), recorder: record.NewFakeRecorder(10),
		leading: make(chan struct{}), leader: &fakeLeader{}}
	w.standby = New(NewCluster(c, c), w.clock, w.recorder, DefaultGrace, w.leading, w.leader)
	return w
}

func (w *world) reconcileAt(t *testing.T, at time.Time) reconcile.Result {
	t.Helper()
	w.clock.SetTime(at)
	result, err := w.standby.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "report"}})
	if err != nil {
		t.Fatalf("reconcile at %s: %v", at.Format(time.TimeOnly), err)
	}
	return result
}

func (w *world) jobs(t *testing.T) []batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := w.client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func (w *world) scheduledJob(t *testing.T) *v1alpha1.ScheduledJob {
	t.Helper()
	sj := &v1alpha1.ScheduledJob{}
	if err := w.client.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "report"}, sj); err != nil {
		t.Fatal(err)
	}
	return sj
}

// TestStandbyStartsRunsWithinItsWindow: the standby starts a run its
// grace after the run's time, reports it as the leader would, and leaves
// it to the leader once planner.StandbyWindow has passed.
func TestStandbyStartsRunsWithinItsWindow(t *testing.T) {
	tests := map[string]struct {
		at        time.Time
		started   bool
		requeueIn time.Duration
	}{
		"before its grace":        {at: run.Add(100 * time.Millisecond), requeueIn: DefaultGrace - 100*time.Millisecond},
		"its grace after":         {at: run.Add(DefaultGrace), started: true},
		"late, within its window": {at: run.Add(planner.StandbyWindow - time.Second), started: true},
		"after its window":        {at: run.Add(planner.StandbyWindow)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, scheduledJob(v1alpha1.AllowConcurrent))
			result := w.reconcileAt(t, tc.at)
			jobs := w.jobs(t)
			if started := len(jobs) == 1; started != tc.started {
				t.Fatalf("run started: %v, want %v", started, tc.started)
			}
			if tc.started {
				if jobs[0].Name != "report-29928121" || jobs[0].Annotations[v1alpha1.ScheduledTimestampAnnotation] != "2026-11-26T10:01:00Z" {
					t.Errorf("Job %s annotated %v, want the run at 10:01's", jobs[0].Name, jobs[0].Annotations)
				}
				if event := <-w.recorder.Events; !strings.Contains(event, v1alpha1.ReasonSuccessfulCreate) {
					t.Errorf("event %q, want SuccessfulCreate", event)
				}
			}
			if tc.requeueIn > 0 && result.RequeueAfter != tc.requeueIn {
				t.Errorf("requeued after %s, want %s", result.RequeueAfter, tc.requeueIn)
			}
		})
	}
}

// TestStandbyDoesNothingTheLeaderDid: a run whose Job exists is not
// created again, nor is anything else done: no status write, no deletion
// of a Replace run's predecessor, no history cleanup.
func TestStandbyDoesNothingTheLeaderDid(t *testing.T) {
	sj := scheduledJob(v1alpha1.ReplaceConcurrent)
	sj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	previous := runJob(sj, run.Add(-time.Minute))
	w := newWorld(t, sj, previous)
	w.reconcileAt(t, run.Add(time.Second))
	if jobs := w.jobs(t); len(jobs) != 2 {
		t.Fatalf("%d Jobs, want the previous run's and the new one's (the standby deletes nothing)", len(jobs))
	}
	before := w.scheduledJob(t).ResourceVersion
	w.reconcileAt(t, run.Add(2*time.Second))
	if len(w.jobs(t)) != 2 || w.scheduledJob(t).ResourceVersion != before {
		t.Error("a second reconcile changed something")
	}
}

func runJob(sj *v1alpha1.ScheduledJob, at time.Time) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: sj.Namespace, Name: sj.JobName(at),
		Annotations:     map[string]string{v1alpha1.ScheduledTimestampAnnotation: at.Format(time.RFC3339)},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sj, v1alpha1.GroupVersion.WithKind("ScheduledJob"))}}}
}

// TestStandbyClaimsForbidRuns: a Forbid run is listed in status.active,
// by name without a UID, before its Job is created; a run active keeps
// the next one from starting.
func TestStandbyClaimsForbidRuns(t *testing.T) {
	w := newWorld(t, scheduledJob(v1alpha1.ForbidConcurrent))
	w.reconcileAt(t, run.Add(time.Second))
	active := w.scheduledJob(t).Status.Active
	if len(active) != 1 || active[0].Name != "report-29928121" || active[0].UID != "" {
		t.Errorf("status.active %v, want the claim of report-29928121", active)
	}
	if len(w.jobs(t)) != 1 {
		t.Fatalf("%d Jobs, want the claimed run's", len(w.jobs(t)))
	}
	w.reconcileAt(t, run.Add(time.Minute+time.Second))
	if len(w.jobs(t)) != 1 {
		t.Errorf("%d Jobs: the next run started beside the active one", len(w.jobs(t)))
	}
}

// TestStandbyReadsLiveAfterARefusedClaim: a claim planned from a cache
// behind the API server is refused (another actor wrote meanwhile), and
// the next reconcile plans from the ScheduledJob read live.
func TestStandbyReadsLiveAfterARefusedClaim(t *testing.T) {
	w := newWorld(t, scheduledJob(v1alpha1.ForbidConcurrent))
	cluster := &refusingClaims{Cluster: NewCluster(w.client, w.client)}
	w.standby.cluster = cluster
	w.clock.SetTime(run.Add(time.Second))
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "report"}}
	if _, err := w.standby.Reconcile(context.Background(), key); !apierrors.IsConflict(err) {
		t.Fatalf("reconcile: %v, want the claim's conflict", err)
	}
	if len(w.jobs(t)) != 0 {
		t.Fatal("a Job was created after its claim was refused")
	}
	if _, err := w.standby.Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if cluster.liveReads != 1 || len(w.jobs(t)) != 1 {
		t.Errorf("%d live reads and %d Jobs after the retry, want 1 and 1", cluster.liveReads, len(w.jobs(t)))
	}
}

// refusingClaims refuses claims planned from the cache: it is behind.
type refusingClaims struct {
	Cluster
	liveReads int
}

func (c *refusingClaims) ScheduledJob(ctx context.Context, key types.NamespacedName, live bool) (*v1alpha1.ScheduledJob, error) {
	if live {
		c.liveReads++
	}
	return c.Cluster.ScheduledJob(ctx, key, live)
}

func (c *refusingClaims) Claim(ctx context.Context, sj, claimed *v1alpha1.ScheduledJob) error {
	if c.liveReads == 0 {
		return apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "scheduledjobs"}, sj.Name, errors.New("the object has been modified"))
	}
	return c.Cluster.Claim(ctx, sj, claimed)
}

// TestStandbyWithoutALeader: while the Lease names no holder (its leader
// stopped gracefully and released it), the standby starts runs at their
// time, without its grace.
func TestStandbyWithoutALeader(t *testing.T) {
	w := newWorld(t, scheduledJob(v1alpha1.AllowConcurrent))
	if !w.standby.LeaseChanged(nil) {
		t.Error("a released Lease did not ask for every ScheduledJob to be queued")
	}
	w.reconcileAt(t, run.Add(time.Millisecond))
	if len(w.jobs(t)) != 1 {
		t.Errorf("%d Jobs a millisecond after the run's time with no leader, want 1", len(w.jobs(t)))
	}
	if w.standby.LeaseChanged(ptr.To("replica-a")) {
		t.Error("a Lease taken asked for every ScheduledJob to be queued")
	}
}

// TestStandbyHandsOver: once its replica leads, the standby leaves each
// ScheduledJob to the leader from the leader's first reconcile of it.
func TestStandbyHandsOver(t *testing.T) {
	w := newWorld(t, scheduledJob(v1alpha1.AllowConcurrent))
	close(w.leading)
	w.leader.reconciled = true
	w.reconcileAt(t, run.Add(time.Second))
	if len(w.jobs(t)) != 0 {
		t.Fatal("the standby started a run its leading replica's controller had taken over")
	}
	w.leader.reconciled = false
	w.reconcileAt(t, run.Add(time.Second))
	if len(w.jobs(t)) != 1 {
		t.Error("the standby did not start a run of a ScheduledJob the new leader had not reconciled yet")
	}
}

// TestStandbyWaitsWhileTheLeaderCreatesJobs: a standby that has just seen
// a run's Job created leaves the due runs to the live leader for
// leaderBusyFor, then starts those still missing.
func TestStandbyWaitsWhileTheLeaderCreatesJobs(t *testing.T) {
	w := newWorld(t, scheduledJob(v1alpha1.AllowConcurrent))
	w.standby.LeaseChanged(ptr.To("replica-a"))
	w.clock.SetTime(run.Add(DefaultGrace - time.Second))
	w.standby.LeaseRenewed()
	w.clock.SetTime(run.Add(DefaultGrace))
	w.standby.JobCreated(types.NamespacedName{Namespace: "ns", Name: "report-29928120"})
	if result := w.reconcileAt(t, run.Add(DefaultGrace)); len(w.jobs(t)) != 0 || result.RequeueAfter != leaderBusyFor {
		t.Fatalf("%d Jobs, requeue after %s: want none while the leader creates Jobs, and a look %s later", len(w.jobs(t)), result.RequeueAfter, leaderBusyFor)
	}
	w.reconcileAt(t, run.Add(DefaultGrace+leaderBusyFor))
	if len(w.jobs(t)) != 1 {
		t.Errorf("%d Jobs once the leader stopped creating, want the run's", len(w.jobs(t)))
	}
}

// TestStandbyWithADeadLeaderIgnoresOtherStandbys: while the Lease's holder
// does not renew it (killed, its Lease not yet expired), the Jobs the
// standby sees created are the other replica's standby's: it goes on
// starting runs instead of pausing for them.
func TestStandbyWithADeadLeaderIgnoresOtherStandbys(t *testing.T) {
	w := newWorld(t, scheduledJob(v1alpha1.AllowConcurrent))
	w.standby.LeaseChanged(ptr.To("replica-a"))
	w.clock.SetTime(run.Add(-10 * time.Second))
	w.standby.LeaseRenewed() // its last renewal, 10 s before the run
	w.clock.SetTime(run.Add(DefaultGrace))
	w.standby.JobCreated(types.NamespacedName{Namespace: "ns", Name: "other-29928121"})
	if w.reconcileAt(t, run.Add(DefaultGrace)); len(w.jobs(t)) != 1 {
		t.Errorf("%d Jobs: the standby waited for a leader that stopped renewing its Lease", len(w.jobs(t)))
	}
}

// TestStandbyIgnoresItsOwnJobs: the Jobs the standby creates say nothing
// of a live leader: it goes on starting runs.
func TestStandbyIgnoresItsOwnJobs(t *testing.T) {
	w := standbyStartedTheRun(t)
	w.standby.JobCreated(types.NamespacedName{Namespace: "ns", Name: "report-29928121"})
	if w.standby.leaderBusy(run.Add(DefaultGrace)) {
		t.Error("the standby took its own Job for a live leader's")
	}
}

// TestStandbyReportsAFailedRunOnce: while the API server refuses creates,
// every backoff retry of the same run fails again; one FailedCreate says
// so. The next run's failure is reported again, and when it is created at
// last the standby reports it and the run it skipped.
func TestStandbyReportsAFailedRunOnce(t *testing.T) {
	w := newWorld(t, scheduledJob(v1alpha1.AllowConcurrent))
	cluster := &refusingCreates{Cluster: NewCluster(w.client, w.client), refuse: true}
	w.standby.cluster = cluster
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "report"}}
	reasons := func(at ...time.Time) []string {
		for _, now := range at {
			w.clock.SetTime(now)
			if _, err := w.standby.Reconcile(context.Background(), key); (err != nil) != cluster.refuse {
				t.Fatalf("reconcile at %s: %v", now.Format(time.TimeOnly), err)
			}
		}
		var got []string
		for len(w.recorder.Events) > 0 {
			got = append(got, strings.Fields(<-w.recorder.Events)[1])
		}
		return got
	}
	if got := reasons(run.Add(time.Second), run.Add(2*time.Second), run.Add(4*time.Second)); !slices.Equal(got, []string{v1alpha1.ReasonFailedCreate}) {
		t.Errorf("three failed tries of one run: events %v, want one FailedCreate", got)
	}
	next := run.Add(time.Minute)
	if got := reasons(next.Add(time.Second), next.Add(2*time.Second)); !slices.Equal(got, []string{v1alpha1.ReasonFailedCreate}) {
		t.Errorf("two failed tries of the next run: events %v, want one FailedCreate", got)
	}
	cluster.refuse = false
	if !w.standby.memory.hasReported(key.NamespacedName) {
		t.Error("the failed run's report is not remembered")
	}
	if got := reasons(next.Add(4 * time.Second)); !slices.Equal(got, []string{v1alpha1.ReasonMissSchedule, v1alpha1.ReasonSuccessfulCreate}) {
		t.Errorf("the run created at last: events %v, want MissSchedule (the run before it never started) and SuccessfulCreate", got)
	}

	// What it remembers of a ScheduledJob goes with the ScheduledJob.
	cluster.refuse = true
	reasons(next.Add(time.Minute + time.Second))
	if err := w.client.Delete(context.Background(), w.scheduledJob(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.standby.Reconcile(context.Background(), key); err != nil {
		t.Fatalf("reconcile of the deleted ScheduledJob: %v", err)
	}
	if w.standby.memory.hasReported(key.NamespacedName) {
		t.Error("a deleted ScheduledJob's failed run is still remembered")
	}
}

// refusingCreates refuses Job creates while refuse is set, as an API
// server does whose etcd is away.
type refusingCreates struct {
	Cluster
	refuse bool
}

func (c *refusingCreates) CreateJob(ctx context.Context, job *batchv1.Job) (jobcontrol.Creation, error) {
	if c.refuse {
		return jobcontrol.Refused, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
	}
	return c.Cluster.CreateJob(ctx, job)
}

// TestStandbyReadsAClaimedJobLive: a leader claimed a triggered Forbid
// run, created its Job, removed the trigger and died before recording the
// Job's UID. A standby whose cache does not show that Job yet must not
// take the claim, now without its request, for one replaced by hand: it
// reads the Job live, finds it running, and starts nothing beside it.
func TestStandbyReadsAClaimedJobLive(t *testing.T) {
	sj := scheduledJob(v1alpha1.ForbidConcurrent)
	triggered := sj.TriggeredJobName("request-1")
	sj.Status.Active = []corev1.ObjectReference{{Kind: "Job", Namespace: "ns", Name: triggered}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: triggered, UID: "job-uid",
		Labels:          map[string]string{v1alpha1.ScheduledJobLabel: sj.Name},
		Annotations:     map[string]string{v1alpha1.TriggerAnnotation: "request-1"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sj, v1alpha1.GroupVersion.WithKind("ScheduledJob"))}}}
	w := newWorld(t, sj, job)
	w.standby.cluster = NewCluster(jobsHidden{Client: w.client, name: triggered}, w.client)
	w.reconcileAt(t, run.Add(time.Second))
	if jobs := w.jobs(t); len(jobs) != 1 {
		t.Errorf("%d Jobs, want only the triggered run's: a Forbid run started beside it", len(jobs))
	}
}

// jobsHidden is a cache behind the API server: it lists the Jobs without
// the one named.
type jobsHidden struct {
	client.Client
	name string
}

func (c jobsHidden) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if jobs, ok := list.(*batchv1.JobList); ok {
		jobs.Items = slices.DeleteFunc(jobs.Items, func(job batchv1.Job) bool { return job.Name == c.name })
	}
	return nil
}

// TestStandbyStartsNoRunAStreakStopped: with suspendAfterFailures 2, the
// second failure in a row seen, and the leader's suspension not written
// yet (its spec write waits, say, for the webhook), the standby starts no
// run: it counts the failures, though it writes no count.
func TestStandbyStartsNoRunAStreakStopped(t *testing.T) {
	for name, tc := range map[string]struct {
		second  batchv1.JobConditionType
		started bool
	}{
		"two failures in a row: no run":      {second: batchv1.JobFailed},
		"a failure, then a success: it runs": {second: batchv1.JobComplete, started: true},
	} {
		t.Run(name, func(t *testing.T) {
			sj := scheduledJob(v1alpha1.AllowConcurrent)
			sj.Spec.SuspendAfterFailures = ptr.To[int32](2)
			sj.Status.LastScheduleTime = &metav1.Time{Time: run.Add(time.Minute)}
			sj.Status.Failures = &v1alpha1.FailureStreak{Count: 1, Jobs: []string{sj.JobName(run)}, CountedThrough: &metav1.Time{Time: run}}
			second := finishedJob(sj, run.Add(time.Minute), tc.second)
			w := newWorld(t, sj, second)
			w.reconcileAt(t, run.Add(2*time.Minute+DefaultGrace))
			if started := len(w.jobs(t)) == 2; started != tc.started {
				t.Errorf("the standby started the run: %v, want %v", started, tc.started)
			}
		})
	}
}

// finishedJob is the Job of sj's run at scheduled, finished as condition.
func finishedJob(sj *v1alpha1.ScheduledJob, scheduled time.Time, condition batchv1.JobConditionType) *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: sj.Namespace, Name: sj.JobName(scheduled), UID: types.UID("uid-" + sj.JobName(scheduled)),
		Labels:          map[string]string{v1alpha1.ScheduledJobLabel: sj.Name},
		Annotations:     map[string]string{v1alpha1.ScheduledTimestampAnnotation: scheduled.Format(time.RFC3339)},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sj, v1alpha1.GroupVersion.WithKind("ScheduledJob"))}}}
	job.Status.Conditions = []batchv1.JobCondition{{Type: condition, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(scheduled.Add(10 * time.Second))}}
	return job
}

// hasReported reports whether a failed create of key's run was reported.
func (m *memory) hasReported(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.failureReported[key]
	return ok
}

// TestStandbyTellsItsOwnJobsByNamespace: the standby's expectations of its
// own creates are keyed by namespace and name. A leader's Job of the same
// name in another namespace (a ScheduledJob called report there too) is
// the leader's sign of life, not the standby's own Job seen.
func TestStandbyTellsItsOwnJobsByNamespace(t *testing.T) {
	w := standbyStartedTheRun(t)
	if len(w.jobs(t)) != 1 {
		t.Fatalf("%d Jobs, want the run's, started by the standby", len(w.jobs(t)))
	}
	w.standby.JobCreated(types.NamespacedName{Namespace: "elsewhere", Name: "report-29928121"})
	if !w.standby.leaderBusy(run.Add(DefaultGrace)) {
		t.Error("a leader's Job in another namespace was taken for the standby's own, of the same name")
	}
}

// standbyStartedTheRun is a world whose leader renews its Lease and whose
// standby has started the run, its grace past: the standby expects its
// own Job, which its cache has not shown yet.
func standbyStartedTheRun(t *testing.T) *world {
	t.Helper()
	w := newWorld(t, scheduledJob(v1alpha1.AllowConcurrent))
	w.standby.LeaseChanged(ptr.To("replica-a"))
	w.clock.SetTime(run)
	w.standby.LeaseRenewed()
	w.reconcileAt(t, run.Add(DefaultGrace))
	return w
}
