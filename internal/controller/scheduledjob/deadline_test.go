//go:build integration

package scheduledjob

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestDeadline, against a real API server on a fake clock, with a
// deadline 30 minutes after each hourly run: the first run succeeds in 20
// minutes, which the controller learns; the second starts 15 minutes late,
// so it is predicted to succeed 5 minutes after its deadline: the
// DeadlineAtRisk condition and event say so at once, naming where the run
// is, 14 minutes before the deadline; at the deadline, DeadlineMissed.
func TestDeadline(t *testing.T) {
	ns := newNamespace(t)
	sj, first := createWithARunLearned(t, newScheduledJob(ns, "deadline", "0 * * * *"))
	reconcileAt(t, sj, first.Add(21*time.Minute))
	stored := get(t, sj)
	if d := stored.Status.Deadline; d == nil || d.TypicalRunTime == nil || d.TypicalRunTime.Duration != 20*time.Minute {
		t.Fatalf("status.deadline %+v, want the first run's 20m learned", d)
	}
	if c := meta.FindStatusCondition(stored.Status.Conditions, v1alpha1.ConditionDeadlineAtRisk); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonRunSucceeded {
		t.Errorf("DeadlineAtRisk %+v, want False/RunSucceeded", c)
	}

	second := first.Add(time.Hour)
	reconcileAt(t, sj, second.Add(100*time.Millisecond))
	late := runJob(t, sj, second)
	late.Status.StartTime = &metav1.Time{Time: second.Add(15 * time.Minute)}
	if err := env.Live.Status().Update(env.Ctx, &late); err != nil {
		t.Fatal(err)
	}
	drainEvents()
	result := reconcileAt(t, sj, second.Add(16*time.Minute))
	checkDeadlineCondition(t, sj, v1alpha1.ReasonDeadlineAtRisk, "predicted to succeed at "+stamp(second.Add(35*time.Minute))+", after its deadline "+stamp(second.Add(30*time.Minute)))
	if !slices.ContainsFunc(drainEvents(), func(e string) bool { return strings.HasPrefix(e, "Warning DeadlineAtRisk") }) {
		t.Error("no DeadlineAtRisk event")
	}
	if want := 14 * time.Minute; result.RequeueAfter <= 0 || result.RequeueAfter > want {
		t.Errorf("requeue after %s, want at most %s: at the deadline", result.RequeueAfter, want)
	}
	reconcileAt(t, sj, second.Add(30*time.Minute))
	checkDeadlineCondition(t, sj, v1alpha1.ReasonDeadlineMissed, "has not succeeded by its deadline "+stamp(second.Add(30*time.Minute)))
	if !slices.ContainsFunc(drainEvents(), func(e string) bool { return strings.HasPrefix(e, "Warning DeadlineMissed") }) {
		t.Error("no DeadlineMissed event")
	}
	if missed, atRisk := testutil.ToFloat64(deadlineMissed.WithLabelValues(ns, sj.Name)), testutil.ToFloat64(deadlineAtRisk.WithLabelValues(ns, sj.Name)); missed != 1 || atRisk != 1 {
		t.Errorf("ontime_deadline_missed_total %v, ontime_deadline_at_risk %v; want 1, 1", missed, atRisk)
	}
}

// TestDeadlineReadsItsGroup: a member of a concurrency group with a
// deadline (and no warm-up) reads its group's predictions from the cache:
// runs take 20 minutes, the deadline is 30 minutes after each run, and the
// group predicts the next run is admitted 15 minutes after its time: the
// condition says DeadlineInfeasible before that run exists. The group's
// changes reconcile it (the members index finds it).
func TestDeadlineReadsItsGroup(t *testing.T) {
	ns := newNamespace(t)
	group := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}}
	create(t, group)
	sj := newScheduledJob(ns, "deadline", "0 * * * *")
	sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Name: "db"}
	sj, first := createWithARunLearned(t, sj)

	second := first.Add(time.Hour)
	admission := second.Add(15 * time.Minute)
	group.Status.Upcoming = []v1alpha1.QueuedRun{{Namespace: ns, Name: sj.JobName(second), PredictedAdmission: &metav1.Time{Time: admission}}}
	if err := env.Live.Status().Update(env.Ctx, group); err != nil {
		t.Fatal(err)
	}
	env.WaitForCache(t, group)
	drainEvents()
	reconcileAt(t, sj, first.Add(21*time.Minute))
	checkDeadlineCondition(t, sj, v1alpha1.ReasonDeadlineInfeasible,
		`ConcurrencyGroup "db" predicts the next run, at `+stamp(second)+", is admitted at "+stamp(admission))
	if !slices.ContainsFunc(drainEvents(), func(e string) bool { return strings.HasPrefix(e, "Warning DeadlineInfeasible") }) {
		t.Error("no DeadlineInfeasible event")
	}
	members := membersReadingGroup(env.Ctx, env.Cached, v1alpha1.GroupIndexValue(v1alpha1.KindConcurrencyGroup, client.ObjectKeyFromObject(group)))
	if len(members) != 1 || members[0].Name != sj.Name {
		t.Errorf("members reconciled when the group changes: %v, want %s", members, sj.Name)
	}
}

// createWithARunLearned creates the hourly sj with a deadline 30 minutes
// after each run, and has its first run succeed in 20 minutes: it returns
// the stored ScheduledJob and that run's time.
func createWithARunLearned(t *testing.T, sj *v1alpha1.ScheduledJob) (*v1alpha1.ScheduledJob, time.Time) {
	t.Helper()
	sj.Spec.Deadline = &v1alpha1.Deadline{After: &metav1.Duration{Duration: 30 * time.Minute}}
	create(t, sj)
	sj = get(t, sj)
	first := hourRun(sj)
	reconcileAt(t, sj, first.Add(100*time.Millisecond))
	job := runJob(t, sj, first)
	finishFrom(t, &job, true, first.Add(time.Second), first.Add(20*time.Minute+time.Second))
	return sj, first
}

// checkDeadlineCondition: DeadlineAtRisk is True with reason, saying says.
func checkDeadlineCondition(t *testing.T, sj *v1alpha1.ScheduledJob, reason, says string) {
	t.Helper()
	c := meta.FindStatusCondition(get(t, sj).Status.Conditions, v1alpha1.ConditionDeadlineAtRisk)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason || !strings.Contains(c.Message, says) {
		t.Errorf("DeadlineAtRisk %+v, want True/%s saying %q", c, reason, says)
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
