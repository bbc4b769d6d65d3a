package scheduledjob

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/planner"
)

// overlayObject is a ScheduledJob as a cache would hold it, at a
// resourceVersion, with lastScheduleTime at the given minute.
func overlayObject(uid types.UID, resourceVersion string, lastMinute int) *v1alpha1.ScheduledJob {
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report", UID: uid, ResourceVersion: resourceVersion}}
	sj.Status.LastScheduleTime = &metav1.Time{Time: time.Unix(int64(lastMinute)*60, 0)}
	return sj
}

func lastMinute(sj *v1alpha1.ScheduledJob) int { return int(sj.Status.LastScheduleTime.Unix() / 60) }

// TestStatusOverlay: what the controller plans from, given what it wrote
// or deferred and what its cache shows.
func TestStatusOverlay(t *testing.T) {
	written := overlayObject("uid", "10", 5).Status // written over "9", producing "10"
	deferred := overlayObject("uid", "", 6).Status
	tests := map[string]struct {
		wrote, deferred bool
		cached          *v1alpha1.ScheduledJob
		// want: resourceVersion and lastScheduleTime's minute of stored and
		// current; whether the write is still remembered afterwards.
		storedVersion              string
		storedMinute, currentMin   int
		writeRemembered, deferred2 bool
	}{
		"nothing remembered": {cached: overlayObject("uid", "9", 4), storedVersion: "9", storedMinute: 4, currentMin: 4},
		"the cache is behind the write": {wrote: true, cached: overlayObject("uid", "9", 4),
			storedVersion: "10", storedMinute: 5, currentMin: 5, writeRemembered: true},
		"the cache has the write": {wrote: true, cached: overlayObject("uid", "10", 5), storedVersion: "10", storedMinute: 5, currentMin: 5},
		// A change after the write (a spec edit): the write is in it.
		"the cache moved past the write": {wrote: true, cached: overlayObject("uid", "11", 5),
			storedVersion: "11", storedMinute: 5, currentMin: 5, writeRemembered: true},
		"re-created under the same name": {wrote: true, cached: overlayObject("other", "9", 1), storedVersion: "9", storedMinute: 1, currentMin: 1},
		"a deferred status": {deferred: true, cached: overlayObject("uid", "9", 4),
			storedVersion: "9", storedMinute: 4, currentMin: 6, deferred2: true},
		"a deferred status over the write": {wrote: true, deferred: true, cached: overlayObject("uid", "9", 4),
			storedVersion: "10", storedMinute: 5, currentMin: 6, writeRemembered: true, deferred2: true},
		"a deferred status of a re-created object": {deferred: true, cached: overlayObject("other", "9", 1),
			storedVersion: "9", storedMinute: 1, currentMin: 1, deferred2: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var o statusOverlay
			if tc.wrote {
				o.wrote(overlayObject("uid", "9", 4), "10", written)
			}
			if tc.deferred {
				o.deferStatus(overlayObject("uid", "9", 4), deferred)
			}
			stored, current := o.view(tc.cached)
			got := []any{stored.ResourceVersion, lastMinute(stored), lastMinute(current)}
			if diff := cmp.Diff([]any{tc.storedVersion, tc.storedMinute, tc.currentMin}, got); diff != "" {
				t.Errorf("stored version, stored and current lastScheduleTime (-want +got):\n%s", diff)
			}
			key := client.ObjectKeyFromObject(tc.cached)
			if _, ok := o.written.Load(key); ok != tc.writeRemembered {
				t.Errorf("write remembered: %v, want %v", ok, tc.writeRemembered)
			}
			if _, ok := o.deferred.Load(key); ok != tc.deferred2 {
				t.Errorf("deferred status remembered: %v, want %v", ok, tc.deferred2)
			}
			if tc.cached == stored && stored.Status.LastScheduleTime != tc.cached.Status.LastScheduleTime {
				t.Error("the cached object was changed")
			}
		})
	}
}

// TestStatusOverlayForgets: the informer's update that shows the write,
// a status write after a deferral, and the deletion each drop what is no
// longer needed, so that nothing is kept per ScheduledJob between runs.
func TestStatusOverlayForgets(t *testing.T) {
	var o statusOverlay
	base := overlayObject("uid", "9", 4)
	key := client.ObjectKeyFromObject(base)
	o.wrote(base, "10", overlayObject("uid", "10", 5).Status)
	o.observed(overlayObject("uid", "9", 4)) // an older update: kept
	if _, ok := o.written.Load(key); !ok {
		t.Fatal("an update older than the write dropped it")
	}
	o.observed(overlayObject("uid", "10", 5))
	if _, ok := o.written.Load(key); ok {
		t.Error("the update that shows the write kept it")
	}
	o.deferStatus(base, base.Status)
	o.undefer(key)
	if _, ok := o.deferred.Load(key); ok {
		t.Error("a written status kept the deferred one")
	}
	o.wrote(base, "10", base.Status)
	o.deferStatus(base, base.Status)
	o.forget(key)
	_, wroteKept := o.written.Load(key)
	_, deferredKept := o.deferred.Load(key)
	if wroteKept || deferredKept {
		t.Errorf("after the deletion: write kept %v, deferral kept %v", wroteKept, deferredKept)
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
