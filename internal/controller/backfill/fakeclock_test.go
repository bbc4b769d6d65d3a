//go:build integration

package backfill

import (
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// TestBackfillOnAFakeClock reconciles a Backfill by hand on the suite's
// fake clock, against a real API server: of a ScheduledJob every 5
// minutes whose live schedule ran one time already, a backfill of the last
// 20 minutes runs the three other past times two at a time, oldest first,
// skips the one that ran, and waits (WaitingForLiveSchedule) for the time
// a standby might still start until 60 s after it; then, with a run of
// its own active under Forbid, it waits for it (WaitingForLiveRun) before
// completing.
func TestBackfillOnAFakeClock(t *testing.T) {
	h := harness(t)
	ns := h.NewNamespace(t)
	now := h.Clock.Now().Truncate(5 * time.Minute).Add(30 * time.Second)
	h.Clock.SetTime(now)
	times := []time.Time{now.Add(-20*time.Minute - 30*time.Second), now.Add(-15*time.Minute - 30*time.Second), now.Add(-10*time.Minute - 30*time.Second),
		now.Add(-5*time.Minute - 30*time.Second), now.Add(-30 * time.Second)}
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: ns},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "*/5 * * * *", ConcurrencyPolicy: v1alpha1.ForbidConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
	h.Create(t, sj)
	ran := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: sj.JobName(times[1]), Namespace: ns, Labels: map[string]string{v1alpha1.ScheduledJobLabel: "report"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sj, v1alpha1.GroupVersion.WithKind("ScheduledJob"))}},
		Spec: sj.Spec.JobTemplate.Spec}
	h.Create(t, ran)
	bf := &v1alpha1.Backfill{ObjectMeta: metav1.ObjectMeta{Name: "last-20-minutes", Namespace: ns},
		Spec: v1alpha1.BackfillSpec{ScheduledJobName: "report", From: metav1.Time{Time: times[0]}, To: metav1.Time{Time: times[4]}, MaxActive: 2}}
	h.Create(t, bf)
	h.WaitForCache(t, ran)
	h.WaitForCache(t, sj)
	c := NewController(h.Cached, h.Reader, h.Clock, h.Recorder)
	step := func() *v1alpha1.Backfill {
		t.Helper()
		if _, err := c.Reconcile(h.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(bf)}); err != nil {
			t.Fatal(err)
		}
		current := &v1alpha1.Backfill{}
		if err := h.Live.Get(h.Ctx, client.ObjectKeyFromObject(bf), current); err != nil {
			t.Fatal(err)
		}
		return current
	}
	finish := func(name string) {
		t.Helper()
		h.Complete(t, ns, name, h.Clock.Now())
	}

	got := step()
	wantActive(t, got, sj.JobName(times[0]), sj.JobName(times[2])) // times[1] ran: skipped
	finish(sj.JobName(times[0]))
	finish(sj.JobName(times[2]))
	got = step() // counts both, claims times[3], waits for times[4]
	wantActive(t, got, sj.JobName(times[3]))
	wantWaiting(t, got, v1alpha1.ReasonWaitingForLiveSchedule)

	h.Clock.Step(31 * time.Second) // times[4] is 61 s old: the live schedule's window has closed
	sj.Status.Active = []corev1.ObjectReference{{Kind: "Job", Name: "report-live", Namespace: ns, UID: "live-uid"}}
	if err := h.Live.Status().Update(h.Ctx, sj); err != nil {
		t.Fatal(err)
	}
	h.WaitForCache(t, sj)
	got = step()
	wantWaiting(t, got, v1alpha1.ReasonWaitingForLiveRun)
	wantActive(t, got, sj.JobName(times[3]))

	sj.Status.Active = nil
	if err := h.Live.Status().Update(h.Ctx, sj); err != nil {
		t.Fatal(err)
	}
	h.WaitForCache(t, sj)
	finish(sj.JobName(times[3]))
	got = step()
	wantActive(t, got, sj.JobName(times[4]))
	finish(sj.JobName(times[4]))
	got = step()
	if !meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.BackfillComplete) || got.Status.Done != "5/5" || got.Status.Started != 4 || got.Status.Skipped != 1 {
		t.Errorf("status %+v", got.Status)
	}
	scheduled := &batchv1.Job{}
	if err := h.Live.Get(h.Ctx, client.ObjectKey{Namespace: ns, Name: sj.JobName(times[4])}, scheduled); err != nil {
		t.Fatal(err)
	}
	if want := times[4].UTC().Format(time.RFC3339); scheduled.Annotations[v1alpha1.ScheduledTimestampAnnotation] != want {
		t.Errorf("scheduled-timestamp %q, want %s", scheduled.Annotations[v1alpha1.ScheduledTimestampAnnotation], want)
	}
}

func wantActive(t *testing.T, bf *v1alpha1.Backfill, names ...string) {
	t.Helper()
	var got []string
	for _, ref := range bf.Status.Active {
		got = append(got, ref.Name)
	}
	if len(got) != len(names) {
		t.Fatalf("active %v, want %v", got, names)
	}
	for i := range names {
		if got[i] != names[i] {
			t.Fatalf("active %v, want %v", got, names)
		}
	}
}

func wantWaiting(t *testing.T, bf *v1alpha1.Backfill, reason string) {
	t.Helper()
	if c := meta.FindStatusCondition(bf.Status.Conditions, v1alpha1.BackfillProgressing); c == nil || c.Status != metav1.ConditionFalse || c.Reason != reason {
		t.Fatalf("Progressing %+v, want False %s", c, reason)
	}
}

// harnessOnce is the package's API server, started by the first test that
// needs it and stopped by TestMain.
var harnessOnce struct {
	sync.Once
	h   *testenv.Harness
	err error
}

// harness is the package's API server and manager, started once.
func harness(t *testing.T) *testenv.Harness {
	t.Helper()
	harnessOnce.Do(func() {
		harnessOnce.h, harnessOnce.err = testenv.StartHarness(testenv.HarnessOptions{Options: testenv.Options{CRDDirs: []string{"config/crd/bases"}}, Scheme: ontimescheme.New()})
	})
	if harnessOnce.err != nil {
		t.Fatal(harnessOnce.err)
	}
	return harnessOnce.h
}
