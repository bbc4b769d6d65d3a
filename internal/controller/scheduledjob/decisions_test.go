package scheduledjob

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/planner"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// TestOneReconcileDecidesAtMostTwice counts the planner's decisions in one
// reconcile, on a fake API server and a cache that may differ from it:
// the first from the cache view, with what gather reads from the API
// server where the cache would mislead it; a second only to confirm a
// status before a run starts or a Job is reported missing, or to read
// live the Jobs holding a run back while the cache may be behind. The
// reconcile before this structure made up to five (its count in each
// case's comment).
func TestOneReconcileDecidesAtMostTwice(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 30, 0, time.UTC)
	minute := func(m int) metav1.Time { return metav1.NewTime(time.Date(2026, 11, 26, 9, 50+m, 0, 0, time.UTC)) }
	sjUID := types.UID("sj-uid")
	running := func(name string, scheduled metav1.Time, uid types.UID, version string) *batchv1.Job {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: uid, ResourceVersion: version,
			Annotations:     map[string]string{v1alpha1.ScheduledTimestampAnnotation: scheduled.UTC().Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ScheduledJob", Name: "report", UID: sjUID, Controller: ptr.To(true)}}}}
		job.Status.Active = 1
		return job
	}
	tests := map[string]struct {
		// change makes the ScheduledJob of the case from one that ran at
		// 10:00 and has nothing active.
		change func(*v1alpha1.ScheduledJob)
		// cached and live are the Jobs the cache and the API server have.
		cached, live []*batchv1.Job
		behind       bool
		decisions    int
		// event is a reason the reconcile must report.
		event string
		// created says the 10:00 run's Job must be created.
		created bool
	}{
		"nothing due": {decisions: 1},
		// Before: 2, the same.
		"a new leader's first run": {change: func(sj *v1alpha1.ScheduledJob) { sj.Status.LastScheduleTime = ptr.To(minute(9)) }, decisions: 2, created: true},
		// Before: 3 (the cache's plan, the confirmed one, one more from a
		// live list once it reported the Job missing).
		"a Job status.active names is gone": {change: func(sj *v1alpha1.ScheduledJob) {
			sj.Status.Active = []corev1.ObjectReference{{Namespace: "team", Name: "report-gone", UID: "gone-uid"}}
		}, decisions: 2, event: v1alpha1.ReasonMissingJob},
		// Before: 3 (the cache's plan, one from live reads of the Job
		// holding the run, one from a live list once those reads were
		// ahead of the cache with failures to count).
		"held while the cache may be behind, failures to count": {change: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
			sj.Spec.SuspendAfterFailures = ptr.To[int32](3)
			sj.Status.LastScheduleTime = ptr.To(minute(9))
			sj.Status.Active = []corev1.ObjectReference{{Namespace: "team", Name: "report-29928119", UID: "held-uid"}}
		}, cached: []*batchv1.Job{running("report-29928119", minute(9), "held-uid", "10")},
			live:   []*batchv1.Job{running("report-29928119", minute(9), "held-uid", "11")},
			behind: true, decisions: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sj := newScheduledJob("team", "report", "* * * * *")
			sj.UID, sj.ResourceVersion, sj.CreationTimestamp = sjUID, "5", minute(0)
			sj.Status.LastScheduleTime = ptr.To(metav1.NewTime(now.Truncate(time.Minute)))
			if tc.change != nil {
				tc.change(sj)
			}
			live := fakeAPI(t, sj, tc.live)
			cached := testenv.Lagging{Client: live, Snapshot: func() client.Reader { return fakeAPI(t, sj, tc.cached) }}
			clk := clocktesting.NewFakePassiveClock(now)
			unanswered := recovery.NewUnanswered(clk)
			if tc.behind {
				failOnce(t, unanswered)
			}
			recorder := record.NewFakeRecorder(100)
			c := NewController(cached, live, clk, recorder, Options{SpreadNamespace: "ontime-system", Unanswered: unanswered})

			decisions := 0
			plannerDecide = func(in planner.Input) planner.Plan { decisions++; return planner.Decide(in) }
			t.Cleanup(func() { plannerDecide = planner.Decide })
			if _, err := c.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(sj)}); err != nil {
				t.Fatal(err)
			}
			if decisions != tc.decisions || decisions > 2 {
				t.Errorf("%d decisions, want %d (at most 2)", decisions, tc.decisions)
			}
			events := drain(recorder)
			if tc.event != "" && !containsReason(events, tc.event) {
				t.Errorf("events %q, want one %s", events, tc.event)
			}
			var jobs batchv1.JobList
			if err := live.List(context.Background(), &jobs); err != nil {
				t.Fatal(err)
			}
			created := false
			for _, job := range jobs.Items {
				if at, ok := v1alpha1.ScheduledTime(&job); ok && at.Equal(now.Truncate(time.Minute)) {
					created = true
				}
			}
			if created != tc.created {
				t.Errorf("the 10:00 run's Job created: %v, want %v (events %q)", created, tc.created, events)
			}
		})
	}
}

// fakeAPI is an API server holding sj and jobs, with the controller's
// indexes.
func fakeAPI(t *testing.T, sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job) client.WithWatch {
	t.Helper()
	objects := []client.Object{sj.DeepCopy()}
	for _, job := range jobs {
		objects = append(objects, job.DeepCopy())
	}
	return testenv.FakeAPI(ontimescheme.New()).WithObjects(objects...).WithStatusSubresource(&v1alpha1.ScheduledJob{}).
		WithIndex(&batchv1.Job{}, jobcontrol.ScheduledJobOwnerKey, jobcontrol.ControllerUID(v1alpha1.GroupVersion.String(), "ScheduledJob")).
		WithIndex(&v1alpha1.ScheduledJob{}, jobcontrol.ScheduledJobGroupKey, jobcontrol.IndexScheduledJobGroup).
		WithIndex(&v1alpha1.ScheduledJob{}, leadPoolKey, indexLeadPool).Build()
}

// failOnce makes unanswered record a request the API server did not
// answer, now.
func failOnce(t *testing.T, unanswered *recovery.Unanswered) {
	t.Helper()
	refused := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") })
	if _, err := unanswered.Wrap(refused).RoundTrip(httptest.NewRequest(http.MethodGet, "https://api/", nil)); err == nil {
		t.Fatal("the refusing transport answered")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// drain returns the events recorded so far.
func drain(recorder *record.FakeRecorder) []string {
	var events []string
	for {
		select {
		case e := <-recorder.Events:
			events = append(events, e)
		default:
			return events
		}
	}
}

// containsReason says whether one of the events has reason.
func containsReason(events []string, reason string) bool {
	for _, e := range events {
		if strings.Contains(e, " "+reason+" ") {
			return true
		}
	}
	return false
}
