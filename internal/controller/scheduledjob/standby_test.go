package scheduledjob

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestStandbyWithAStaleCacheKeepsForbid: after an API outage, a standby's
// watches come back only when client-go's reflector next lists (30 to 60 s
// later), so its cache can miss the run the leader started since. Acting on
// that cache, it would start a Forbid ScheduledJob's next run beside the
// active one; it reads the ScheduledJob from the API server before acting,
// and the leader's status names the active run.
func TestStandbyWithAStaleCacheKeepsForbid(t *testing.T) {
	ns := newNamespace(t)
	beforeTheRun, run := everyMinute(t, ns, "forbid", v1alpha1.ForbidConcurrent)
	sj := beforeTheRun.DeepCopy()
	reconcileAt(t, sj, run.Add(100*time.Millisecond))
	if active := get(t, sj).Status.Active; len(active) != 1 {
		t.Fatalf("the leader's run at %s: status.active = %v, want its Job", run.Format(time.TimeOnly), active)
	}

	// The standby's cache still has the ScheduledJob as it was before the
	// run, and none of its Jobs; the run's Job has not finished.
	standby := NewStandby(newSuiteController(staleClient{Client: env.Cached, sj: beforeTheRun}), nil, StandbyGrace)
	env.Clock.SetTime(run.Add(time.Minute + 2*StandbyGrace))
	reconcileStandby(t, standby, sj)
	if got := jobs(t, ns); len(got) != 1 {
		names := []string{}
		for _, job := range got {
			names = append(names, job.Name)
		}
		t.Errorf("Jobs %v: the standby started the next run beside the active one (Forbid)", names)
	}
}

// staleClient is a cache that missed everything since sj: it serves sj as
// it was and lists no Jobs.
type staleClient struct {
	client.Client
	sj *v1alpha1.ScheduledJob
}

func (c staleClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if stored, ok := obj.(*v1alpha1.ScheduledJob); ok && key == client.ObjectKeyFromObject(c.sj) {
		c.sj.DeepCopyInto(stored)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c staleClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*batchv1.JobList); ok {
		return nil
	}
	return c.Client.List(ctx, list, opts...)
}

// countingLister answers ScheduledJob metadata lists of one namespace with
// versions, or err, and counts them.
type countingLister struct {
	client.Reader
	versions map[string]string
	err      error
	lists    int
}

func (l *countingLister) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	l.lists++
	if l.err != nil {
		return l.err
	}
	items := list.(*metav1.PartialObjectMetadataList)
	for name, version := range l.versions {
		items.Items = append(items.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: version}})
	}
	return nil
}

// TestLiveVersionsListsOncePerSecond: the standby's check of its cache
// costs one list per namespace and second however many runs it starts,
// and a failed list answers the reconciles waiting behind it for 100 ms.
func TestLiveVersionsListsOncePerSecond(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	lister := &countingLister{versions: map[string]string{"a": "7", "b": "9"}}
	var live liveVersions
	check := func(name, wantVersion string, wantListed bool, wantLists int) {
		t.Helper()
		version, listed, err := live.version(context.Background(), lister, clk, client.ObjectKey{Namespace: "team", Name: name})
		if err != nil || version != wantVersion || listed != wantListed || lister.lists != wantLists {
			t.Errorf("%s at %s: %q, listed %v, %v after %d lists; want %q, %v after %d", name, clk.Now().Format("15:04:05.000"),
				version, listed, err, lister.lists, wantVersion, wantListed, wantLists)
		}
	}
	check("a", "7", true, 1)
	check("b", "9", true, 1)
	check("new", "", false, 1) // not listed: the caller reads it
	clk.SetTime(clk.Now().Add(liveVersionsFor + time.Millisecond))
	lister.versions["a"] = "8"
	check("a", "8", true, 2)

	lister.err = errors.New("the server has received too many requests")
	clk.SetTime(clk.Now().Add(liveVersionsFor + time.Millisecond))
	for range 3 {
		if _, _, err := live.version(context.Background(), lister, clk, client.ObjectKey{Namespace: "team", Name: "a"}); err == nil {
			t.Fatal("no error while the API server refuses lists")
		}
	}
	if lister.lists != 3 {
		t.Errorf("%d lists, want 3: the failed one answers for %s", lister.lists, failedListingFor)
	}
	lister.err = nil
	clk.SetTime(clk.Now().Add(failedListingFor + time.Millisecond))
	check("a", "8", true, 4)
}

// TestStandbyActsAtOnceWhileTheLeaseIsReleased: a leader stopped gracefully
// releases its Lease, and no replica leads until a standby next tries to
// take it (up to 2 s). Meanwhile the standby starts runs at their time
// instead of its grace later; while a leader holds the Lease it waits.
func TestStandbyActsAtOnceWhileTheLeaseIsReleased(t *testing.T) {
	ns := newNamespace(t)
	sj, run := everyMinute(t, ns, "handover", v1alpha1.AllowConcurrent)
	standby := NewStandby(newSuiteController(env.Cached), nil, StandbyGrace)
	lease := func(holder string) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)}}
	}
	env.Clock.SetTime(run.Add(100 * time.Millisecond))

	if queued := standby.leaseChanged(env.Ctx, lease("replica-a")); len(queued) != 0 {
		t.Errorf("a leader took the Lease: %d ScheduledJobs queued, want none", len(queued))
	}
	// Its next look is at the run's time and grace (planned to the ms).
	wantAfter := StandbyGrace - 100*time.Millisecond
	if after := reconcileStandby(t, standby, sj).RequeueAfter; len(jobs(t, ns)) != 0 || after < wantAfter-5*time.Millisecond || after > wantAfter+5*time.Millisecond {
		t.Fatalf("100 ms after the run with a leader: %d Jobs, next look in %s; want none, in %s", len(jobs(t, ns)), after, wantAfter)
	}

	queued := standby.leaseChanged(env.Ctx, lease(""))
	if !slices.Contains(queued, requestFor(sj)) {
		t.Fatalf("the Lease was released: queued %v, want %s among them", queued, sj.Name)
	}
	reconcileStandby(t, standby, sj)
	if got := jobs(t, ns); len(got) != 1 {
		t.Fatalf("100 ms after the run, Lease released: %d Jobs, want the run's", len(got))
	}
	if again := standby.leaseChanged(env.Ctx, &coordinationv1.Lease{}); len(again) != 0 {
		t.Errorf("the released Lease changed again: %d ScheduledJobs queued again", len(again))
	}

	standby.leaseChanged(env.Ctx, lease("replica-b"))
	env.Clock.SetTime(run.Add(time.Minute + 100*time.Millisecond))
	waitForCache(t, sj)
	if reconcileStandby(t, standby, sj); len(jobs(t, ns)) != 1 {
		t.Errorf("a new leader took the Lease: the standby started the next run within its grace")
	}
}

// TestStandbyGoesOnBrieflyOnceItsReplicaLeads: the leader's controller
// starts with every ScheduledJob queued, so for handoverOverlap after its
// replica took the Lease the standby still starts the runs due; after
// that, only the leader acts.
func TestStandbyGoesOnBrieflyOnceItsReplicaLeads(t *testing.T) {
	ns := newNamespace(t)
	sj, run := everyMinute(t, ns, "overlap", v1alpha1.AllowConcurrent)
	leads := make(chan struct{})
	close(leads)
	standby := NewStandby(newSuiteController(env.Cached), leads, StandbyGrace)

	env.Clock.SetTime(run.Add(StandbyGrace + 200*time.Millisecond))
	reconcileStandby(t, standby, sj)
	if got := jobs(t, ns); len(got) != 1 {
		t.Fatalf("just after its replica took the Lease: %d Jobs, want the run's (the standby goes on)", len(got))
	}
	env.Clock.SetTime(run.Add(time.Minute + StandbyGrace + 200*time.Millisecond))
	waitForCache(t, sj)
	reconcileStandby(t, standby, sj)
	if got := jobs(t, ns); len(got) != 1 {
		t.Errorf("a minute after its replica took the Lease: %d Jobs, want only the first run's (the leader acts)", len(got))
	}
}

// TestStandbyKeepsForbidWhenTheLeaderDiedBeforeItsStatus: the leader
// created a Forbid run's Job and died before writing the status that names
// it (it defers that write, to start a burst of runs first), and the
// standby's cache has missed the Job (its watch broken). Neither its cache
// nor the ScheduledJob shows the run; the standby lists the Jobs from the
// API server before it starts a Forbid run.
func TestStandbyKeepsForbidWhenTheLeaderDiedBeforeItsStatus(t *testing.T) {
	ns := newNamespace(t)
	beforeTheRun, run := everyMinute(t, ns, "forbid-unwritten", v1alpha1.ForbidConcurrent)
	sj := beforeTheRun.DeepCopy()
	leader := newSuiteController(env.Cached)
	env.Clock.SetTime(run.Add(100 * time.Millisecond))
	if _, err := leader.Reconcile(env.Ctx, requestFor(sj)); err != nil {
		t.Fatalf("leader Reconcile: %v", err)
	}
	if len(jobs(t, ns)) != 1 || len(get(t, sj).Status.Active) != 0 {
		t.Fatalf("the leader's reconcile: %d Jobs, status.active %v; want the run's Job, status not yet written", len(jobs(t, ns)), get(t, sj).Status.Active)
	}

	standby := NewStandby(newSuiteController(staleClient{Client: env.Cached, sj: beforeTheRun}), nil, StandbyGrace)
	env.Clock.SetTime(run.Add(time.Minute + 2*StandbyGrace))
	reconcileStandby(t, standby, sj)
	if got := jobs(t, ns); len(got) != 1 {
		t.Errorf("%d Jobs: the standby started the next run beside the active one it could not see (Forbid)", len(got))
	}
}

// everyMinute creates a ScheduledJob on "* * * * *" with policy and
// returns it as stored, once cached, with the time of its first run.
func everyMinute(t *testing.T, namespace, name string, policy v1alpha1.ConcurrencyPolicy) (*v1alpha1.ScheduledJob, time.Time) {
	t.Helper()
	sj := newScheduledJob(namespace, name, "* * * * *")
	sj.Spec.ConcurrencyPolicy = policy
	create(t, sj)
	waitForCache(t, sj)
	return get(t, sj), sj.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
}

// reconcileStandby reconciles sj with standby.
func reconcileStandby(t *testing.T, standby *Standby, sj *v1alpha1.ScheduledJob) reconcile.Result {
	t.Helper()
	result, err := standby.Reconcile(env.Ctx, requestFor(sj))
	if err != nil {
		t.Fatalf("standby Reconcile: %v", err)
	}
	return result
}
