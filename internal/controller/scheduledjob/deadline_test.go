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
	checkDeadlineCondition(t, sj, v1alpha1.ReasonDeadlineAtRisk, "predicted to succeed at "+stamp(second.Add(35*time.Minute))+", 5m0s after its deadline "+stamp(second.Add(30*time.Minute)))
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

// createMinutely creates a ScheduledJob every minute under Forbid with a
// deadline 50 s after each run, and has its first two runs succeed in 24
// s: it returns the stored ScheduledJob and the third run's time.
func createMinutely(t *testing.T, ns string) (*v1alpha1.ScheduledJob, time.Time) {
	t.Helper()
	sj := newScheduledJob(ns, "nightly", "* * * * *")
	sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
	sj.Spec.Deadline = &v1alpha1.Deadline{After: &metav1.Duration{Duration: 50 * time.Second}}
	create(t, sj)
	sj = get(t, sj)
	run := sj.CreationTimestamp.Time.Truncate(time.Minute).Add(time.Minute)
	for range 2 {
		reconcileAt(t, sj, run.Add(100*time.Millisecond))
		job := runJob(t, sj, run)
		finishFrom(t, &job, true, run, run.Add(24*time.Second))
		reconcileAt(t, sj, run.Add(25*time.Second))
		run = run.Add(time.Minute)
	}
	return sj, run
}

// TestSlowRunAtRiskAgainstTheAPIServer is issue #60's run, slower than
// every run before it, on a fake clock against a real API server: two runs
// of 24 s learned, a deadline 50 s after each run, then a run that does
// not finish. Following the requeues the controller asks for (and nothing
// else), the condition goes OnTrack → DeadlineAtRisk 26 s after the run's
// start (its slowest learned run, 24 s, plus the 2 s resolution of Job
// times; 24 s before its deadline) → DeadlineMissed at the deadline, with
// one event each; status.deadline.predictedFinish is never in the past.
func TestSlowRunAtRiskAgainstTheAPIServer(t *testing.T) {
	ns := newNamespace(t)
	sj, third := createMinutely(t, ns)
	reconcileAt(t, sj, third.Add(100*time.Millisecond))
	slow := runJob(t, sj, third)
	slow.Status.StartTime = &metav1.Time{Time: third}
	if err := env.Live.Status().Update(env.Ctx, &slow); err != nil {
		t.Fatal(err)
	}
	drainEvents()
	deadline := third.Add(50 * time.Second)
	var timeline []string
	now := third.Add(time.Second)
	for now.Before(deadline.Add(time.Second)) {
		result := reconcileAt(t, sj, now)
		st := get(t, sj).Status
		c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionDeadlineAtRisk)
		if c == nil || st.Deadline == nil || st.Deadline.PredictedFinish == nil || st.Deadline.PredictedFinish.Time.Before(now.Truncate(time.Second)) {
			t.Fatalf("at %s: condition %+v, status.deadline %+v: want a condition and a prediction not in the past", now.Sub(third), c, st.Deadline)
		}
		if n := len(timeline); n == 0 || !strings.HasPrefix(timeline[n-1], c.Reason+" ") {
			timeline = append(timeline, c.Reason+" "+now.Sub(third).String())
		}
		if result.RequeueAfter <= 0 {
			t.Fatalf("at %s: no requeue while the run runs", now.Sub(third))
		}
		now = now.Add(result.RequeueAfter)
	}
	if got, want := strings.Join(timeline, ", "), "OnTrack 1s, DeadlineAtRisk 26s, DeadlineMissed 50s"; got != want {
		t.Errorf("the condition's timeline %s, want %s", got, want)
	}
	events := drainEvents()
	for _, reason := range []string{v1alpha1.ReasonDeadlineAtRisk, v1alpha1.ReasonDeadlineMissed} {
		if n := len(slices.DeleteFunc(slices.Clone(events), func(e string) bool { return !strings.HasPrefix(e, "Warning "+reason+" ") })); n != 1 {
			t.Errorf("%d %s events, want 1; events: %q", n, reason, events)
		}
	}
	if missed := testutil.ToFloat64(deadlineMissed.WithLabelValues(ns, sj.Name)); missed != 1 {
		t.Errorf("ontime_deadline_missed_total %v, want 1", missed)
	}
}

// TestShortenedDeadlineAgainstTheAPIServer: two runs met their 50 s
// deadline in 24 s; the deadline is cut to 5 s. Neither is reported (no
// DeadlineMissed event, ontime_deadline_missed_total unchanged), and the
// next run is judged at once: DeadlineInfeasible.
func TestShortenedDeadlineAgainstTheAPIServer(t *testing.T) {
	ns := newNamespace(t)
	sj, third := createMinutely(t, ns)
	stored := get(t, sj)
	stored.Spec.Deadline = &v1alpha1.Deadline{After: &metav1.Duration{Duration: 5 * time.Second}}
	if err := env.Live.Update(env.Ctx, stored); err != nil {
		t.Fatal(err)
	}
	drainEvents()
	reconcileAt(t, stored, third.Add(-30*time.Second))
	events := drainEvents()
	if slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, "Warning DeadlineMissed") }) {
		t.Errorf("a deadline cut to 5 s reported runs that met their 50 s: %q", events)
	}
	if missed := testutil.ToFloat64(deadlineMissed.WithLabelValues(ns, sj.Name)); missed != 0 {
		t.Errorf("ontime_deadline_missed_total %v, want 0", missed)
	}
	checkDeadlineCondition(t, sj, v1alpha1.ReasonDeadlineInfeasible, "must succeed by "+stamp(third.Add(5*time.Second)))
}
