//go:build integration

package scheduledjob

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestSuspendAfterFailures: with suspendAfterFailures 2, the second run
// that fails in a row sets spec.suspend, with the Ready reason and an
// event naming both Jobs; no run starts while suspended; once resumed,
// runs start again and the count is 0.
func TestSuspendAfterFailures(t *testing.T) {
	ns, sj, run := createFlaky(t, 2)
	failRun := func(at time.Time) string {
		t.Helper()
		reconcileAt(t, get(t, sj), at.Add(100*time.Millisecond))
		job := jobNamed(t, ns, sj.JobName(at))
		finish(t, job, false, at.Add(10*time.Second))
		reconcileAt(t, get(t, sj), at.Add(20*time.Second))
		return job.Name
	}
	first := failRun(run)
	if after := get(t, sj); after.Status.Failures == nil || after.Status.Failures.Count != 1 || after.Spec.Suspend != nil && *after.Spec.Suspend {
		t.Fatalf("after one failure: status.failures %+v, suspend %v", after.Status.Failures, after.Spec.Suspend)
	}
	drainEvents()
	second := failRun(run.Add(time.Minute))
	stored := get(t, sj)
	checkSuspendedAfterFailures(t, stored, first, second)
	reconcileAt(t, stored, run.Add(2*time.Minute+100*time.Millisecond))
	if n := len(jobs(t, ns)); n != 2 {
		t.Fatalf("%d Jobs while suspended, want the 2 that failed", n)
	}

	resume := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":false}}`))
	if err := env.Live.Patch(env.Ctx, get(t, sj), resume); err != nil {
		t.Fatal(err)
	}
	reconcileAt(t, get(t, sj), run.Add(3*time.Minute+100*time.Millisecond))
	if n := len(jobs(t, ns)); n != 3 {
		t.Errorf("%d Jobs after the resume, want a new run", n)
	}
	checkResumed(t, get(t, sj))
}

// createFlaky creates a ScheduledJob every minute that suspends after
// limit failures in a row and keeps 5 failed Jobs; run is its first run.
func createFlaky(t *testing.T, limit int32) (namespace string, sj *v1alpha1.ScheduledJob, run time.Time) {
	t.Helper()
	namespace = newNamespace(t)
	sj = newScheduledJob(namespace, "flaky", "* * * * *")
	sj.Spec.SuspendAfterFailures, sj.Spec.FailedJobsHistoryLimit = ptr.To(limit), ptr.To[int32](5)
	create(t, sj)
	sj = get(t, sj)
	return namespace, sj, firstRun(sj)
}

// checkResumed: the count back to 0, runs scheduled.
func checkResumed(t *testing.T, resumed *v1alpha1.ScheduledJob) {
	t.Helper()
	if f := resumed.Status.Failures; f == nil || f.Count != 0 || f.Suspended {
		t.Errorf("status.failures after the resume %+v", f)
	}
	if c := readyOf(resumed); c == nil || c.Reason != v1alpha1.ReasonScheduled {
		t.Errorf("Ready after the resume %+v", c)
	}
}

// checkSuspendedAfterFailures: spec.suspend set, status.failures, Ready
// and the event naming the failed Jobs.
func checkSuspendedAfterFailures(t *testing.T, stored *v1alpha1.ScheduledJob, failed ...string) {
	t.Helper()
	if stored.Spec.Suspend == nil || !*stored.Spec.Suspend {
		t.Fatal("not suspended after two failures in a row")
	}
	if f := stored.Status.Failures; f == nil || f.Count != int32(len(failed)) || !f.Suspended {
		t.Errorf("status.failures %+v", f)
	}
	if c := readyOf(stored); c == nil || c.Reason != v1alpha1.ReasonSuspendedAfterFailures {
		t.Errorf("Ready %+v", c)
	}
	want := fmt.Sprintf("SuspendedAfterFailures %d runs failed in a row (last: %s)", len(failed), strings.Join(failed, ", "))
	if events := drainEvents(); !hasEvent(events, want) {
		t.Errorf("events %v, want %q", events, want)
	}
}

// jobNamed reads a Job from the API server.
func jobNamed(t *testing.T, namespace, name string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	if err := env.Live.Get(env.Ctx, client.ObjectKey{Namespace: namespace, Name: name}, job); err != nil {
		t.Fatalf("job %s: %v", name, err)
	}
	return job
}

// TestFailuresAreCountedFromOneRead: a cache behind lacks two failed runs'
// Jobs; status.active names only the later one (the earlier was created by
// a standby and never recorded). Read by name, the later Job alone would
// be counted and the earlier passed over for good; instead the plan, whose
// Jobs are not one read, counts nothing and is made again from one list of
// the API server's Jobs, which counts both, in order.
func TestFailuresAreCountedFromOneRead(t *testing.T) {
	ns, sj, run := createFlaky(t, 3)
	reconcileAt(t, get(t, sj), run.Add(100*time.Millisecond))
	reconcileAt(t, get(t, sj), run.Add(time.Minute+100*time.Millisecond))
	earlier, later := jobNamed(t, ns, sj.JobName(run)), jobNamed(t, ns, sj.JobName(run.Add(time.Minute)))
	finish(t, earlier, false, run.Add(time.Minute+10*time.Second))
	finish(t, later, false, run.Add(time.Minute+10*time.Second))
	recordOnly(t, get(t, sj), later)

	behind := NewController(withoutJobs{Client: env.Cached, uids: []types.UID{earlier.UID, later.UID}}, env.Reader, env.Clock, env.Recorder, testOptions)
	reconcileWith(t, behind, get(t, sj), run.Add(time.Minute+20*time.Second))
	if f := get(t, sj).Status.Failures; f == nil || f.Count != 2 {
		t.Errorf("status.failures %+v, want both failures counted", f)
	}
}

// recordOnly sets status.active to job alone, as a status written before
// the earlier run's Job was seen would.
func recordOnly(t *testing.T, sj *v1alpha1.ScheduledJob, job *batchv1.Job) {
	t.Helper()
	sj.Status.Active = []corev1.ObjectReference{{Kind: "Job", APIVersion: "batch/v1", Namespace: job.Namespace, Name: job.Name, UID: job.UID}}
	sj.Status.Failures = nil
	if err := env.Live.Status().Update(env.Ctx, sj); err != nil {
		t.Fatal(err)
	}
}

// withoutJobs is a cache behind the API server: it does not list some
// Jobs yet.
type withoutJobs struct {
	client.Client
	uids []types.UID
}

func (c withoutJobs) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if jobs, ok := list.(*batchv1.JobList); ok {
		jobs.Items = slices.DeleteFunc(jobs.Items, func(job batchv1.Job) bool { return slices.Contains(c.uids, job.UID) })
	}
	return nil
}
