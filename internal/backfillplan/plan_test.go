package backfillplan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

var (
	from = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	now  = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
)

func scheduledJob(mutate ...func(*v1alpha1.ScheduledJob)) *v1alpha1.ScheduledJob {
	sj := &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: "team", UID: "sj-uid"},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "*/10 * * * *", ConcurrencyPolicy: v1alpha1.AllowConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](3), FailedJobsHistoryLimit: ptr.To[int32](1)},
	}
	for _, m := range mutate {
		m(sj)
	}
	return sj
}

func backfillOf(to time.Time, maxActive int32, redo v1alpha1.BackfillRedo) *v1alpha1.Backfill {
	return &v1alpha1.Backfill{
		ObjectMeta: metav1.ObjectMeta{Name: "november", Namespace: "team", UID: "bf-uid"},
		Spec:       v1alpha1.BackfillSpec{ScheduledJobName: "report", From: metav1.Time{Time: from}, To: metav1.Time{Time: to}, MaxActive: maxActive, Redo: redo},
	}
}

// liveJob is a Job the live schedule ran for the time t.
func liveJob(sj *v1alpha1.ScheduledJob, t time.Time, condition batchv1.JobConditionType) *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: sj.JobName(t), Namespace: sj.Namespace, UID: types.UID("live-" + sj.JobName(t)),
		Labels:          map[string]string{v1alpha1.ScheduledJobLabel: sj.Name},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sj, v1alpha1.GroupVersion.WithKind("ScheduledJob"))}}}
	if condition != "" {
		job.Status.Conditions = []batchv1.JobCondition{{Type: condition, Status: corev1.ConditionTrue}}
	}
	return job
}

// world carries plans out on a map of Jobs, as the API server and the Job
// controller would: each step plans, writes, deletes and creates, then
// finishes every active Job of the backfill (failing those fails names).
type world struct {
	t       *testing.T
	bf      *v1alpha1.Backfill
	sj      *v1alpha1.ScheduledJob
	jobs    map[string]*batchv1.Job
	fails   map[string]bool
	uids    int
	created []string // every creation, in order
	events  []string
	maxSeen int
	deleted []string // the backfill's own Jobs, for history
	// deletedLive are the live schedule's Jobs deleted, for redo.
	deletedLive []string
	lastPlan    Step
}

func newWorld(t *testing.T, bf *v1alpha1.Backfill, sj *v1alpha1.ScheduledJob, jobs ...*batchv1.Job) *world {
	w := &world{t: t, bf: bf, sj: sj, jobs: map[string]*batchv1.Job{}, fails: map[string]bool{}}
	for _, job := range jobs {
		w.jobs[job.Name] = job
	}
	return w
}

func (w *world) step() Step {
	plan := Decide(Input{Backfill: w.bf.DeepCopy(), ScheduledJob: w.sj, Jobs: w.jobs, Now: now})
	w.lastPlan = plan
	w.bf.Status = plan.Status
	for _, e := range plan.Events {
		w.events = append(w.events, e.Reason+": "+e.Message)
	}
	for _, job := range plan.Deletes {
		delete(w.jobs, job.Name)
		if strings.HasPrefix(string(job.UID), "live-") {
			w.deletedLive = append(w.deletedLive, job.Name)
		} else {
			w.deleted = append(w.deleted, job.Name)
		}
	}
	for _, job := range plan.Creates {
		if _, ok := w.jobs[job.Name]; ok {
			continue // AlreadyExists
		}
		w.uids++
		job = job.DeepCopy()
		job.UID = types.UID(fmt.Sprint("uid-", w.uids))
		w.jobs[job.Name] = job
		w.created = append(w.created, job.Name)
	}
	running := 0
	for _, job := range w.jobs {
		if _, done := v1alpha1.JobFinished(job); !done && job.Labels[v1alpha1.BackfillLabel] != "" {
			running++
		}
	}
	w.maxSeen = max(w.maxSeen, running)
	return plan
}

// finishAll finishes every active Job of the backfill.
func (w *world) finishAll() {
	for _, job := range w.jobs {
		if _, done := v1alpha1.JobFinished(job); !done && job.Labels[v1alpha1.BackfillLabel] != "" {
			condition := batchv1.JobComplete
			if w.fails[job.Name] {
				condition = batchv1.JobFailed
			}
			job.Status.Conditions = []batchv1.JobCondition{{Type: condition, Status: corev1.ConditionTrue}}
		}
	}
}

// run steps until the backfill completes.
func (w *world) run() {
	for range 500 {
		w.step()
		if meta.IsStatusConditionTrue(w.bf.Status.Conditions, v1alpha1.BackfillComplete) {
			return
		}
		w.finishAll()
	}
	w.t.Fatalf("not complete after 500 steps: %+v", w.bf.Status)
}

func names(sj *v1alpha1.ScheduledJob, times ...time.Time) []string {
	out := make([]string, len(times))
	for i, t := range times {
		out[i] = sj.JobName(t)
	}
	return out
}

func every10(from time.Time, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = from.Add(time.Duration(i) * 10 * time.Minute)
	}
	return out
}

// TestBackfillRuns: every time from spec.from to spec.to, both included, is
// started once, oldest first, never more than maxActive at once; spec.redo
// decides which times that have a Job run again.
func TestBackfillRuns(t *testing.T) {
	sj := scheduledJob()
	times := every10(from, 13) // 00:00 to 02:00
	succeeded, failed, running := times[3], times[5], times[7]
	existing := func() []*batchv1.Job {
		return []*batchv1.Job{liveJob(sj, succeeded, batchv1.JobComplete), liveJob(sj, failed, batchv1.JobFailed), liveJob(sj, running, "")}
	}
	without := func(skip ...time.Time) []string {
		return names(sj, slices.DeleteFunc(slices.Clone(times), func(t time.Time) bool { return slices.Contains(skip, t) })...)
	}
	for _, tc := range []struct {
		name      string
		redo      v1alpha1.BackfillRedo
		maxActive int32
		started   []string
		skipped   int32
		deleted   []string
	}{
		{name: "Missing, one at a time", redo: v1alpha1.RedoMissing, maxActive: 1, started: without(succeeded, failed, running), skipped: 3},
		{name: "Missing, three at a time", redo: v1alpha1.RedoMissing, maxActive: 3, started: without(succeeded, failed, running), skipped: 3},
		{name: "Failed reruns the failed time", redo: v1alpha1.RedoFailed, maxActive: 1, started: without(succeeded, running), skipped: 2, deleted: names(sj, failed)},
		{name: "All reruns every time, after the active one finished", redo: v1alpha1.RedoAll, maxActive: 4, started: names(sj, times...), deleted: names(sj, succeeded, failed, running)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, backfillOf(times[12], tc.maxActive, tc.redo), sj, existing()...)
			// The live schedule's active run finishes after a while.
			for range 4 {
				w.step()
				w.finishAll()
			}
			w.jobs[sj.JobName(running)].Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			w.run()
			created := w.created
			if tc.maxActive > 1 {
				// A time rerun is created once its old Job is gone, a pass
				// after it was claimed: later times may be created first.
				created = slices.Sorted(slices.Values(created))
			}
			if !slices.Equal(created, tc.started) {
				t.Errorf("created %v\nwant      %v", w.created, tc.started)
			}
			if w.maxSeen > int(tc.maxActive) {
				t.Errorf("%d backfill runs active at once, maxActive %d", w.maxSeen, tc.maxActive)
			}
			s := w.bf.Status
			if s.Total != 13 || s.Started != int32(len(tc.started)) || s.Skipped != tc.skipped || s.Succeeded != s.Started || s.Done != "13/13" {
				t.Errorf("status %+v", s)
			}
			if !slices.Equal(w.deletedLive, tc.deleted) {
				t.Errorf("deleted the live schedule's %v, want %v", w.deletedLive, tc.deleted)
			}
			if len(w.events) != 1 || !strings.Contains(w.events[0], "BackfillCompleted: backfill of report complete: 13 times") {
				t.Errorf("events %q", w.events)
			}
		})
	}
}

// TestBackfillKeepsItsHistory: the backfill's finished Jobs beyond the
// ScheduledJob's history limits are deleted, once a status no longer
// claims them; the live schedule's Jobs are not.
func TestBackfillKeepsItsHistory(t *testing.T) {
	sj := scheduledJob(func(sj *v1alpha1.ScheduledJob) { sj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0) })
	times := every10(from, 4)
	w := newWorld(t, backfillOf(times[3], 1, v1alpha1.RedoMissing), sj, liveJob(sj, times[1], batchv1.JobComplete))
	w.fails[sj.JobName(times[2])] = true
	for range 20 {
		plan := w.step()
		for _, job := range plan.Deletes {
			if slices.ContainsFunc(w.bf.Status.Active, func(ref corev1.ObjectReference) bool { return ref.Name == job.Name }) {
				t.Errorf("deleted %s while a status about to be written claims it", job.Name)
			}
		}
		w.finishAll()
	}
	want := names(sj, times[0], times[3])
	if !slices.Equal(w.deleted, want) {
		t.Errorf("deleted %v, want %v (the failed one is kept: failedJobsHistoryLimit 1)", w.deleted, want)
	}
	if _, ok := w.jobs[sj.JobName(times[1])]; !ok {
		t.Error("the live schedule's Job was deleted")
	}
	if s := w.bf.Status; s.Succeeded != 2 || s.Failed != 1 || s.Skipped != 1 {
		t.Errorf("status %+v", s)
	}
}

// TestBackfillClaims: a claim whose Job does not exist is created by
// whoever plans next; one whose Job existed (UID recorded) and is gone is
// counted as failed, never created again.
func TestBackfillClaims(t *testing.T) {
	sj := scheduledJob()
	times := every10(from, 3)
	bf := backfillOf(times[2], 2, v1alpha1.RedoMissing)
	bf.Status = v1alpha1.BackfillStatus{Total: 3, Next: &metav1.Time{Time: times[2]}, Active: []corev1.ObjectReference{
		{Name: sj.JobName(times[0])},                  // claimed, the claimer died before creating it
		{Name: sj.JobName(times[1]), UID: "gone-uid"}, // created, then deleted by hand
	}}
	w := newWorld(t, bf, sj)
	plan := w.step()
	if got := names(sj, times[0], times[2]); !slices.Equal(w.created, got) {
		t.Errorf("created %v, want %v", w.created, got)
	}
	if w.bf.Status.Failed != 1 || len(plan.Events) != 1 || plan.Events[0].Reason != v1alpha1.ReasonMissingJob {
		t.Errorf("status %+v, events %+v", w.bf.Status, plan.Events)
	}
}

// TestBackfillWaits: when the backfill may not start a time, it says why,
// starts nothing, and looks again.
func TestBackfillWaits(t *testing.T) {
	sj := scheduledJob()
	recent := now.Truncate(10 * time.Minute) // 12:00, this minute
	for _, tc := range []struct {
		name   string
		sj     *v1alpha1.ScheduledJob
		to     time.Time
		reason string
		wake   time.Time
	}{
		{name: "no ScheduledJob", to: from, reason: v1alpha1.ReasonScheduledJobNotFound},
		{name: "suspended", sj: scheduledJob(func(sj *v1alpha1.ScheduledJob) { sj.Spec.Suspend = ptr.To(true) }), to: from, reason: v1alpha1.ReasonSuspended},
		{name: "runAt", sj: scheduledJob(func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule, sj.Spec.RunAt = "", &metav1.Time{Time: from} }), to: from, reason: v1alpha1.ReasonNotBackfillable},
		{name: "@every", sj: scheduledJob(func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "@every 1h" }), to: from, reason: v1alpha1.ReasonNotBackfillable},
		{name: "a run of its own active under Forbid", sj: scheduledJob(func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
			sj.Status.Active = []corev1.ObjectReference{{Name: "report-1"}}
		}), to: from, reason: v1alpha1.ReasonWaitingForLiveRun},
		{name: "a time the standby may still start", sj: sj, to: recent, reason: v1alpha1.ReasonWaitingForLiveSchedule, wake: recent.Add(SettleAfter)},
		{name: "a time a catch-up still owes", sj: scheduledJob(func(sj *v1alpha1.ScheduledJob) { sj.Status.NextScheduleTime = &metav1.Time{Time: from} }), to: from, reason: v1alpha1.ReasonWaitingForLiveSchedule},
		{name: "too many times", sj: scheduledJob(func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "* * * * *" }), to: from.AddDate(0, 3, 0), reason: v1alpha1.ReasonBackfillTooManyTimes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bf := backfillOf(tc.to, 1, v1alpha1.RedoMissing)
			if tc.to.Equal(recent) {
				bf.Spec.From = metav1.Time{Time: recent}
			}
			plan := Decide(Input{Backfill: bf, ScheduledJob: tc.sj, Jobs: map[string]*batchv1.Job{}, Now: now})
			progressing := meta.FindStatusCondition(plan.Status.Conditions, v1alpha1.BackfillProgressing)
			if progressing == nil || progressing.Status != metav1.ConditionFalse || progressing.Reason != tc.reason {
				t.Fatalf("Progressing %+v, want False %s", progressing, tc.reason)
			}
			if len(plan.Creates) > 0 || len(plan.Status.Active) > 0 || meta.IsStatusConditionTrue(plan.Status.Conditions, v1alpha1.BackfillComplete) {
				t.Errorf("started or completed while waiting: %+v", plan)
			}
			if want := tc.wake; !want.IsZero() && !plan.Wake.Equal(want) || plan.Wake.IsZero() {
				t.Errorf("wake %v, want %v", plan.Wake, want)
			}
			t.Log(progressing.Message)
		})
	}
}

// TestBackfillJob: a backfill's Job is the run's (name, scheduled-time
// annotation, the ScheduledJob's label), owned by the Backfill, and its
// TTL is at least MinJobTTL.
func TestBackfillJob(t *testing.T) {
	sj := scheduledJob(func(sj *v1alpha1.ScheduledJob) {
		sj.Spec.TimeZone = ptr.To("Europe/Amsterdam")
		sj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	})
	plan := Decide(Input{Backfill: backfillOf(from, 1, v1alpha1.RedoMissing), ScheduledJob: sj, Jobs: map[string]*batchv1.Job{}, Now: now})
	if len(plan.Creates) != 1 {
		t.Fatalf("creates %d", len(plan.Creates))
	}
	job := plan.Creates[0]
	owner := metav1.GetControllerOf(job)
	if job.Name != sj.JobName(from) || job.Annotations[v1alpha1.ScheduledTimestampAnnotation] != "2026-11-20T01:00:00+01:00" ||
		job.Labels[v1alpha1.ScheduledJobLabel] != "report" || job.Labels[v1alpha1.BackfillLabel] != "november" ||
		owner == nil || owner.Kind != "Backfill" || owner.UID != "bf-uid" || *job.Spec.TTLSecondsAfterFinished != MinJobTTL {
		t.Errorf("job %+v", job.ObjectMeta)
	}
}

// TestBackfillRunWaitsInTheGroup: a member of a concurrency group has its
// backfill runs created waiting in the group (suspended, with its label)
// but without a start-by, whatever its startingDeadlineSeconds: their
// times are long past, so they wait as long as it takes. A waiting run
// counts against the Backfill's maxActive.
func TestBackfillRunWaitsInTheGroup(t *testing.T) {
	sj := scheduledJob(func(sj *v1alpha1.ScheduledJob) {
		sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Name: "db"}
		sj.Spec.StartingDeadlineSeconds = ptr.To[int64](60)
	})
	bf := backfillOf(from.Add(time.Hour), 1, v1alpha1.RedoMissing)
	jobs := map[string]*batchv1.Job{}
	plan := Decide(Input{Backfill: bf, ScheduledJob: sj, Jobs: jobs, Now: now})
	if len(plan.Creates) != 1 {
		t.Fatalf("creates %d, want 1", len(plan.Creates))
	}
	waiting := plan.Creates[0]
	if !ptr.Deref(waiting.Spec.Suspend, false) || waiting.Labels[v1alpha1.GroupLabel] != "db" {
		t.Errorf("the backfill run: suspend %v, labels %v; want it waiting in db", waiting.Spec.Suspend, waiting.Labels)
	}
	if startBy, ok := waiting.Annotations[v1alpha1.StartByAnnotation]; ok {
		t.Errorf("the backfill run has a start-by %s: it would be missed at once", startBy)
	}
	waiting.UID = "waiting-uid"
	jobs[waiting.Name] = waiting
	bf.Status = plan.Status
	if again := Decide(Input{Backfill: bf, ScheduledJob: sj, Jobs: jobs, Now: now.Add(time.Minute)}); len(again.Creates) != 0 || again.Status.ActiveCount != 1 {
		t.Errorf("while its run waits in the group: creates %d, activeCount %d; want none beyond maxActive 1", len(again.Creates), again.Status.ActiveCount)
	}
}
