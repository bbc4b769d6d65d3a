//go:build integration

package concurrencygroup

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// TestGroupOnAFakeClock reconciles a ConcurrencyGroup of 2 by hand on a
// fake clock, against a real API server, with four waiting runs: the one
// of higher priority starts first, then the earliest scheduled; a finished
// run's slot goes to the next; a CronJob's run still waiting past its
// start-by is marked missed and deleted; once all finished, the status
// lists nothing and Saturated is False.
func TestGroupOnAFakeClock(t *testing.T) {
	h := harness(t)
	ns := h.NewNamespace(t)
	now := h.Clock.Now().Truncate(time.Second)
	h.Clock.SetTime(now)
	group := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 2}}
	h.Create(t, group)
	db := v1alpha1.ConcurrencyGroupRef{Name: "db"}
	h.newRun(t, ns, "a", now.Add(-30*time.Second), sjOwner, db, nil)
	h.newRun(t, ns, "b", now.Add(-20*time.Second), sjOwner, db, nil)
	h.newRun(t, ns, "c", now.Add(-10*time.Second), cronJobOwner, db, ptr.To(now.Add(20*time.Second)))
	h.newRun(t, ns, "d", now.Add(-5*time.Second), sjOwner, v1alpha1.ConcurrencyGroupRef{Name: "db", Priority: 5}, nil)

	c := New(v1alpha1.KindConcurrencyGroup, h.Cached, h.Reader, h.Clock, h.Recorder, nil)
	step := func() *v1alpha1.ConcurrencyGroup {
		t.Helper()
		return h.reconcile(t, c, group)
	}
	finish := func(name string) {
		t.Helper()
		h.Complete(t, ns, name, h.Clock.Now())
	}

	got := step()
	wantRunning(t, h, ns, "a", "d")
	if got.Status.ActiveCount != 2 || got.Status.Waiting != 2 || !meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.GroupSaturated) {
		t.Fatalf("status %+v", got.Status)
	}
	finish("a")
	got = step()
	wantRunning(t, h, ns, "b", "d")
	// a ran for no time on the fake clock: runs typically take 0 s, so c
	// is predicted to be admitted now, when b's and d's slots free.
	wantPredicted(t, got.Status, "c", h.Clock.Now())

	h.Clock.Step(21 * time.Second) // past c's start-by
	got = step()
	missed := &batchv1.Job{}
	if err := h.Live.Get(h.Ctx, types.NamespacedName{Namespace: ns, Name: "c"}, missed); !apierrors.IsNotFound(err) && missed.DeletionTimestamp == nil {
		t.Fatalf("the CronJob's missed run: %v, annotations %v", err, missed.Annotations)
	}
	if got.Status.Waiting != 0 {
		t.Errorf("waiting %d after the miss", got.Status.Waiting)
	}
	finish("b")
	finish("d")
	got = step()
	if len(got.Status.Active) != 0 || got.Status.Admitted != 3 || meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.GroupSaturated) {
		t.Errorf("status at the end %+v", got.Status)
	}
}

// reconcile runs one reconcile of the group, waits for the cache to show
// its namespace's Jobs as they are after it, and returns the group as the
// API server has it.
func (h *harnessT) reconcile(t *testing.T, c *Controller, group *v1alpha1.ConcurrencyGroup) *v1alpha1.ConcurrencyGroup {
	t.Helper()
	if _, err := c.Reconcile(h.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(group)}); err != nil {
		t.Fatal(err)
	}
	current := &v1alpha1.ConcurrencyGroup{}
	if err := h.Live.Get(h.Ctx, client.ObjectKeyFromObject(group), current); err != nil {
		t.Fatal(err)
	}
	for _, job := range h.jobs(t, group.Namespace) {
		h.WaitForCache(t, job)
	}
	return current
}

// wantRunning: exactly these Jobs of ns are released and unfinished.
func wantRunning(t *testing.T, h *harnessT, ns string, names ...string) {
	t.Helper()
	var running []string
	for _, job := range h.jobs(t, ns) {
		if !suspended(job) && !finished(job) {
			running = append(running, job.Name)
		}
	}
	if !slices.Equal(running, names) {
		t.Fatalf("running %v, want %v", running, names)
	}
}

// harnessT is the package's harness, with a listing of Jobs.
type harnessT struct{ *testenv.Harness }

// The owners of the tests' runs: a ScheduledJob's controller records its
// missed runs, a CronJob's missed runs are deleted by the group.
var (
	sjOwner      = metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ScheduledJob", Name: "report", UID: "sj-uid", Controller: ptr.To(true)}
	cronJobOwner = metav1.OwnerReference{APIVersion: "batch/v1", Kind: "CronJob", Name: "legacy", UID: "cj-uid", Controller: ptr.To(true)}
)

// newRun creates a member's run scheduled at scheduled: its Job, waiting
// in the group ref names, and waits for the cache to have it.
func (h *harnessT) newRun(t *testing.T, ns, name string, scheduled time.Time, owner metav1.OwnerReference, ref v1alpha1.ConcurrencyGroupRef, startBy *time.Time) {
	t.Helper()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: []metav1.OwnerReference{owner},
		Annotations: map[string]string{v1alpha1.ScheduledTimestampAnnotation: scheduled.Format(time.RFC3339)}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	v1alpha1.JoinGroup(job, ref, startBy)
	h.Create(t, job)
	h.WaitForCache(t, job)
}

func (h *harnessT) jobs(t *testing.T, ns string) []*batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := h.Live.List(h.Ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	jobs := make([]*batchv1.Job, len(list.Items))
	for i := range list.Items {
		jobs[i] = &list.Items[i]
	}
	return jobs
}

// harnessOnce is the package's API server, started by the first test that
// needs it and stopped by TestMain.
var harnessOnce struct {
	sync.Once
	h   *testenv.Harness
	err error
}

func harness(t testing.TB) *harnessT {
	t.Helper()
	harnessOnce.Do(func() {
		harnessOnce.h, harnessOnce.err = testenv.StartHarness(testenv.HarnessOptions{Options: testenv.Options{CRDDirs: []string{"config/crd/bases"}}, Scheme: ontimescheme.New(),
			Indexes: func(ctx context.Context, indexer client.FieldIndexer) error {
				if err := indexer.IndexField(ctx, &v1alpha1.ScheduledJob{}, jobcontrol.ScheduledJobGroupKey, jobcontrol.IndexScheduledJobGroup); err != nil {
					return err
				}
				return jobcontrol.IndexCronJobs(ctx, indexer)
			}})
	})
	if harnessOnce.err != nil {
		t.Fatal(harnessOnce.err)
	}
	return &harnessT{harnessOnce.h}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if harnessOnce.h != nil {
		harnessOnce.h.Stop()
	}
	os.Exit(code)
}

// wantPredicted checks that the group's runs typically take no time (on
// the fake clock) and that its queue is one run predicted at at.
func wantPredicted(t *testing.T, status v1alpha1.ConcurrencyGroupStatus, name string, at time.Time) {
	t.Helper()
	typical, queue := status.TypicalRunDuration, status.Queue
	if typical == nil || typical.Duration != 0 || len(queue) != 1 || queue[0].Name != name ||
		queue[0].PredictedAdmission == nil || !queue[0].PredictedAdmission.Time.Equal(at) {
		t.Fatalf("typical run %v, queue %+v; want 0s, %s predicted at %s", typical, queue, name, at)
	}
}

// TestGroupPredictsMembersNextRuns: the group lists the next run of each
// ScheduledJob that joins it, from its status.nextScheduleTime, and of each
// CronJob that joins it by annotation, from its schedule, with their
// predicted admissions once runs' typical duration is known, in order; a
// member of another group, or a suspended one, is not listed.
func TestGroupPredictsMembersNextRuns(t *testing.T) {
	h := harness(t)
	ns := h.NewNamespace(t)
	now := h.Clock.Now().Truncate(time.Hour).Add(time.Hour + time.Minute) // hh:01
	h.Clock.SetTime(now)
	group := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}}
	h.Create(t, group)
	group.Status.TypicalRunDuration = &metav1.Duration{Duration: 10 * time.Minute}
	if err := h.Live.Status().Update(h.Ctx, group); err != nil {
		t.Fatal(err)
	}
	next := now.Add(5 * time.Minute)
	member := func(name, groupName string, suspend bool) *v1alpha1.ScheduledJob {
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.ScheduledJobSpec{Schedule: "*/5 * * * *",
			Suspend: ptr.To(suspend), ConcurrencyGroup: &v1alpha1.ConcurrencyGroupRef{Name: groupName},
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
		h.Create(t, sj)
		sj.Status.NextScheduleTime = &metav1.Time{Time: next}
		if err := h.Live.Status().Update(h.Ctx, sj); err != nil {
			t.Fatal(err)
		}
		h.WaitForCache(t, sj)
		return sj
	}
	report := member("report", "db", false)
	member("other", "elsewhere", false)
	member("paused", "db", true)
	cronJob := func(name, groupName string, suspend bool) *batchv1.CronJob {
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{v1alpha1.GroupLabel: groupName}},
			Spec: batchv1.CronJobSpec{Schedule: "10 * * * *", Suspend: ptr.To(suspend), JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
		h.Create(t, cj)
		h.WaitForCache(t, cj)
		return cj
	}
	legacy := cronJob("legacy", "db", false)
	cronJob("legacy-elsewhere", "elsewhere", false)
	cronJob("legacy-paused", "db", true)
	h.WaitForCache(t, group)

	c := New(v1alpha1.KindConcurrencyGroup, h.Cached, h.Reader, h.Clock, h.Recorder, nil)
	if _, err := c.Reconcile(h.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(group)}); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.ConcurrencyGroup{}
	if err := h.Live.Get(h.Ctx, client.ObjectKeyFromObject(group), got); err != nil {
		t.Fatal(err)
	}
	// report's run at :06 takes the one slot for 10 minutes; legacy's
	// at :10 is predicted at :16.
	upcoming := got.Status.Upcoming
	legacyRun := now.Add(9 * time.Minute)
	if len(upcoming) != 2 || upcoming[0].Name != report.JobName(next) || upcoming[0].PredictedAdmission == nil || !upcoming[0].PredictedAdmission.Time.Equal(next) ||
		upcoming[1].Name != v1alpha1.RunJobName(legacy.Name, legacyRun) || upcoming[1].PredictedAdmission == nil || !upcoming[1].PredictedAdmission.Time.Equal(next.Add(10*time.Minute)) {
		t.Errorf("upcoming %+v, want %s predicted at %s, then %s at %s", upcoming, report.JobName(next), next.Format(time.TimeOnly),
			v1alpha1.RunJobName(legacy.Name, legacyRun), next.Add(10*time.Minute).Format(time.TimeOnly))
	}
}
