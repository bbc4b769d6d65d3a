//go:build integration

package scheduledjob

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/planner"
)

// knownObject is a ScheduledJob as a cache or the API server holds it, at
// a resourceVersion, with lastScheduleTime at the given minute.
func knownObject(uid types.UID, resourceVersion string, lastMinute int) *v1alpha1.ScheduledJob {
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report", UID: uid, ResourceVersion: resourceVersion}}
	sj.Status.LastScheduleTime = &metav1.Time{Time: time.Unix(int64(lastMinute)*60, 0)}
	return sj
}

func lastMinute(sj *v1alpha1.ScheduledJob) int { return int(sj.Status.LastScheduleTime.Unix() / 60) }

// TestKnownObjects: what the controller plans from, given what it wrote,
// read live or deferred, and what its cache shows. The cache two writes
// behind is the case that made a history cleanup report its own deletion
// as MissingJob: the store then remembered only the last write, and took
// any version of the cache other than that write's base for a newer one.
func TestKnownObjects(t *testing.T) {
	tests := map[string]struct {
		// saw are the copies the controller got from the API server.
		saw      []*v1alpha1.ScheduledJob
		deferred bool
		cached   *v1alpha1.ScheduledJob
		// want: resourceVersion and lastScheduleTime's minute of stored,
		// and of current; whether a copy is still remembered afterwards.
		storedVersion            string
		storedMinute, currentMin int
		remembered               bool
	}{
		"nothing known": {cached: knownObject("uid", "9", 4), storedVersion: "9", storedMinute: 4, currentMin: 4},
		"the cache is behind a write": {saw: []*v1alpha1.ScheduledJob{knownObject("uid", "10", 5)}, cached: knownObject("uid", "9", 4),
			storedVersion: "10", storedMinute: 5, currentMin: 5, remembered: true},
		"the cache is two writes behind": {saw: []*v1alpha1.ScheduledJob{knownObject("uid", "10", 5), knownObject("uid", "12", 6)},
			cached: knownObject("uid", "9", 4), storedVersion: "12", storedMinute: 6, currentMin: 6, remembered: true},
		"the cache has one write of two": {saw: []*v1alpha1.ScheduledJob{knownObject("uid", "10", 5), knownObject("uid", "12", 6)},
			cached: knownObject("uid", "10", 5), storedVersion: "12", storedMinute: 6, currentMin: 6, remembered: true},
		"the cache has the write": {saw: []*v1alpha1.ScheduledJob{knownObject("uid", "10", 5)}, cached: knownObject("uid", "10", 5),
			storedVersion: "10", storedMinute: 5, currentMin: 5},
		// A change after the write (a spec edit): the write is in it.
		"the cache moved past the write": {saw: []*v1alpha1.ScheduledJob{knownObject("uid", "10", 5)}, cached: knownObject("uid", "11", 5),
			storedVersion: "11", storedMinute: 5, currentMin: 5},
		"an older copy seen after a newer one": {saw: []*v1alpha1.ScheduledJob{knownObject("uid", "12", 6), knownObject("uid", "10", 5)},
			cached: knownObject("uid", "9", 4), storedVersion: "12", storedMinute: 6, currentMin: 6, remembered: true},
		"re-created under the same name": {saw: []*v1alpha1.ScheduledJob{knownObject("uid", "10", 5)}, cached: knownObject("other", "9", 1),
			storedVersion: "9", storedMinute: 1, currentMin: 1},
		"a deferred status": {deferred: true, cached: knownObject("uid", "9", 4), storedVersion: "9", storedMinute: 4, currentMin: 7},
		"a deferred status over a write": {saw: []*v1alpha1.ScheduledJob{knownObject("uid", "10", 5)}, deferred: true, cached: knownObject("uid", "9", 4),
			storedVersion: "10", storedMinute: 5, currentMin: 7, remembered: true},
		"a deferred status of a re-created object": {deferred: true, cached: knownObject("other", "9", 1),
			storedVersion: "9", storedMinute: 1, currentMin: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var k knownObjects
			for _, obj := range tc.saw {
				k.saw(obj)
			}
			if tc.deferred {
				k.deferStatus(knownObject("uid", "9", 4), knownObject("uid", "", 7).Status)
			}
			stored, current, err := k.view(client.ObjectKeyFromObject(tc.cached), func(obj *v1alpha1.ScheduledJob) error {
				tc.cached.DeepCopyInto(obj)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got := []any{stored.ResourceVersion, lastMinute(stored), lastMinute(current)}
			if diff := cmp.Diff([]any{tc.storedVersion, tc.storedMinute, tc.currentMin}, got); diff != "" {
				t.Errorf("stored version, stored and current lastScheduleTime (-want +got):\n%s", diff)
			}
			if ok := k.remembers(client.ObjectKeyFromObject(tc.cached)).newest != nil; ok != tc.remembered {
				t.Errorf("copy remembered: %v, want %v", ok, tc.remembered)
			}
		})
	}
}

// TestKnownObjectsConfirmation: a ScheduledJob is confirmed by a copy from
// the API server and loses it when a write is refused; the deletion
// forgets everything.
func TestKnownObjectsConfirmation(t *testing.T) {
	var k knownObjects
	sj := knownObject("uid", "10", 5)
	key := client.ObjectKeyFromObject(sj)
	if k.isConfirmed(key) {
		t.Fatal("confirmed before any read or write")
	}
	k.saw(sj)
	if !k.isConfirmed(key) {
		t.Fatal("not confirmed after a copy from the API server")
	}
	k.refused(key)
	if k.isConfirmed(key) {
		t.Error("still confirmed after a refused write")
	}
	k.saw(sj)
	k.deferStatus(sj, sj.Status)
	k.forget(key)
	known := k.remembers(key)
	newest, deferred := known.newest != nil, known.deferred != nil
	if newest || deferred || k.isConfirmed(key) {
		t.Errorf("after the deletion: copy kept %v, deferral kept %v, confirmed %v", newest, deferred, k.isConfirmed(key))
	}
}

// TestKnownObjectsForgetDeletedJobs: a Job the controller deleted is left
// out of what the cache lists, and reported deleted, until the cache has
// shown it gone and status no longer lists it.
func TestKnownObjectsForgetDeletedJobs(t *testing.T) {
	var k knownObjects
	sj := knownObject("uid", "10", 5)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "report-1", UID: "job"}}
	now := time.Unix(600, 0)
	k.deleted(sj, job, now)
	steps := []struct {
		name     string
		listed   []*batchv1.Job
		inStatus bool
		// want: Jobs kept, and whether the Job is reported deleted.
		kept    int
		deleted bool
	}{
		{name: "the cache behind the Job's creation", listed: nil, kept: 0, deleted: true},
		{name: "the cache lists it", listed: []*batchv1.Job{job}, kept: 0, deleted: true},
		{name: "status still lists it", listed: nil, inStatus: true, kept: 0, deleted: true},
		{name: "gone from both", listed: nil, kept: 0, deleted: false},
	}
	for _, step := range steps {
		view := sj.DeepCopy()
		if step.inStatus {
			view.Status.Active = []corev1.ObjectReference{{Name: job.Name, UID: job.UID}}
		}
		kept, deleted := k.withoutDeleted(view, step.listed, now)
		if len(kept) != step.kept || deleted[job.UID] != step.deleted {
			t.Errorf("%s: %d Jobs kept, reported deleted %v; want %d, %v", step.name, len(kept), deleted[job.UID], step.kept, step.deleted)
		}
	}
	k.deleted(sj, job, now)
	if _, deleted := k.withoutDeleted(sj, nil, now.Add(forgetDeletedAfter+time.Second)); deleted[job.UID] {
		t.Error("a deletion the cache never showed is remembered past forgetDeletedAfter")
	}
}

// TestMissedRunsCountedOnceAcrossAFailedWrite: a reconcile that finds a run
// missed but cannot write status counts nothing; its retry counts the run
// once, and a later reconcile does not count it again.
func TestMissedRunsCountedOnceAcrossAFailedWrite(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "missed-once", "* * * * *")
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	missed := missedRuns.WithLabelValues(string(planner.MissDeadline))
	before := testutil.ToFloat64(missed)

	failing := newSuiteController(&refusingStatusWrites{Client: env.Cached})
	env.Clock.SetTime(run.Add(30 * time.Second))
	waitForCache(t, sj)
	if _, err := failing.Reconcile(env.Ctx, requestFor(sj)); err == nil {
		t.Fatal("the reconcile whose status write failed returned no error")
	}
	if got := testutil.ToFloat64(missed) - before; got != 0 {
		t.Errorf("ontime_missed_runs_total{reason=deadline} rose by %v with the status write refused, want 0", got)
	}
	reconcileAt(t, sj, run.Add(31*time.Second))
	reconcileAt(t, get(t, sj), run.Add(32*time.Second))
	if got := testutil.ToFloat64(missed) - before; got != 1 {
		t.Errorf("ontime_missed_runs_total{reason=deadline} rose by %v after the retry and one more reconcile, want 1", got)
	}
	if last := get(t, sj).Status.LastMissedTime; last == nil || !last.Time.Equal(run) {
		t.Errorf("lastMissedTime %v, want %s", last, run)
	}
}

// refusingStatusWrites refuses every status write with a conflict, as the
// API server does when another writer came first.
type refusingStatusWrites struct{ client.Client }

func (c *refusingStatusWrites) Status() client.SubResourceWriter {
	return refusedWriter{c.Client.Status()}
}

type refusedWriter struct{ client.SubResourceWriter }

func (refusedWriter) Patch(_ context.Context, obj client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
	return apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "scheduledjobs"}, obj.GetName(), errors.New("the object has been modified"))
}

// remembers is a copy of what k knows of key, read under its lock.
func (k *knownObjects) remembers(key types.NamespacedName) knownScheduledJob {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := k.byKey[key]; e != nil {
		return *e
	}
	return knownScheduledJob{}
}
