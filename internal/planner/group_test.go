package planner

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestGroupMemberRuns: a member of a concurrency group has each run's Job
// created suspended, labeled with its group, with its priority and its
// start-by (scheduled time plus startingDeadlineSeconds).
func TestGroupMemberRuns(t *testing.T) {
	sj, first := groupMember()
	plan := Decide(Input{ScheduledJob: sj, Now: first.Add(time.Second)})
	if plan.Create == nil {
		t.Fatal("no run created")
	}
	job := plan.Create.Job
	if !suspendedJob(job) || job.Labels[v1alpha1.ClusterGroupLabel] != "db" || job.Annotations[v1alpha1.GroupPriorityAnnotation] != "3" ||
		job.Annotations[v1alpha1.StartByAnnotation] != first.Add(2*time.Minute).UTC().Format(time.RFC3339) {
		t.Fatalf("the member's Job: suspend %v, labels %v, annotations %v", job.Spec.Suspend, job.Labels, job.Annotations)
	}

}

// TestTriggeredRunWaitsInTheGroup: a run asked for by hand (ontime
// trigger) of a group's member waits like a scheduled one, at most its
// startingDeadlineSeconds from when the controller created it (its
// scheduled time).
func TestTriggeredRunWaitsInTheGroup(t *testing.T) {
	sj, first := groupMember()
	asked := first.Add(2*time.Minute + 10*time.Second) // between two runs
	created := asked.Add(3 * time.Second)
	sj.Status.LastScheduleTime = &metav1.Time{Time: first}
	sj.Annotations = map[string]string{v1alpha1.TriggerAnnotation: asked.UTC().Format(time.RFC3339)}
	plan := Decide(Input{ScheduledJob: sj, Now: created})
	if plan.Trigger == nil {
		t.Fatal("no triggered run")
	}
	job := plan.Trigger.Job
	startBy := created.Add(2 * time.Minute).UTC().Format(time.RFC3339)
	if !suspendedJob(job) || job.Labels[v1alpha1.ClusterGroupLabel] != "db" || job.Annotations[v1alpha1.StartByAnnotation] != startBy {
		t.Errorf("the triggered run's Job: suspend %v, labels %v, annotations %v; want it waiting in db until %s", job.Spec.Suspend, job.Labels, job.Annotations, startBy)
	}
}

// groupMember is a ScheduledJob every 5 minutes in a cluster group, with a
// starting deadline of 2 minutes, and its first run's time.
func groupMember() (*v1alpha1.ScheduledJob, time.Time) {
	sj := scheduledJob("*/5 * * * *", justBeforeThePriorHour)
	sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Kind: v1alpha1.KindClusterConcurrencyGroup, Name: "db", Priority: 3}
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](120)
	sj.Spec.SuccessfulJobsHistoryLimit, sj.Spec.FailedJobsHistoryLimit = ptr.To[int32](3), ptr.To[int32](3)
	return sj, topOfTheHour
}

// TestGroupMemberWaits: a waiting run is active (Forbid holds the next
// one), says so in the Waiting condition; a run the group marked missed is
// not active, moves lastMissedTime, and its Job is deleted whatever the
// history limits; a ScheduledJob in no group has no Waiting condition and
// unsuspended Jobs.
func TestGroupMemberWaits(t *testing.T) {
	sj, first := groupMember()
	t.Run("waiting: active, and said", func(t *testing.T) {
		waiting := childJob(sj, first, "uid-1", false)
		v1alpha1.JoinGroup(waiting, *sj.Spec.ConcurrencyGroup, nil)
		s := sj.DeepCopy()
		s.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
		s.Status.LastScheduleTime = &metav1.Time{Time: first}
		s.Status.Active = append(s.Status.Active, refOf(waiting))
		plan := Decide(Input{ScheduledJob: s, Jobs: []*batchv1.Job{waiting}, Now: first.Add(5 * time.Minute)})
		if plan.Create != nil {
			t.Errorf("Forbid started %s while a run waits", plan.Create.Job.Name)
		}
		out := succeed(plan)
		if len(out.Status.Active) != 1 {
			t.Errorf("active %v, want the waiting run", out.Status.Active)
		}
		c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionWaiting)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonWaitingForGroup {
			t.Errorf("Waiting %+v", c)
		}
	})

	t.Run("missed: recorded and deleted", func(t *testing.T) {
		missed := childJob(sj, first, "uid-1", false)
		v1alpha1.JoinGroup(missed, *sj.Spec.ConcurrencyGroup, nil)
		missed.Annotations[v1alpha1.MissedAnnotation] = first.Add(2 * time.Minute).Format(time.RFC3339)
		s := sj.DeepCopy()
		s.Status.LastScheduleTime = &metav1.Time{Time: first}
		s.Status.Active = append(s.Status.Active, refOf(missed))
		// Past the standby's window of the run, so history may delete it.
		plan := Decide(Input{ScheduledJob: s, Jobs: []*batchv1.Job{missed}, Now: first.Add(4 * time.Minute)})
		out := succeed(plan)
		if len(out.Status.Active) != 0 || out.Status.LastMissedTime == nil || !out.Status.LastMissedTime.Equal(&metav1.Time{Time: first}) {
			t.Errorf("active %v, lastMissedTime %v; want none active, missed at %v", out.Status.Active, out.Status.LastMissedTime, first)
		}
		if !slices.ContainsFunc(plan.Deletes, func(d Deletion) bool { return d.Job.Name == missed.Name }) {
			t.Errorf("deletes %v: want the missed run's Job deleted", plan.Deletes)
		}
		if c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionWaiting); c == nil || c.Status != metav1.ConditionFalse {
			t.Errorf("Waiting %+v, want False", c)
		}
	})

	t.Run("not a member: no condition", func(t *testing.T) {
		s := sj.DeepCopy()
		s.Spec.ConcurrencyGroup = nil
		out := succeed(Decide(Input{ScheduledJob: s, Now: first.Add(time.Second)}))
		if c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionWaiting); c != nil {
			t.Errorf("Waiting %+v on a ScheduledJob in no group", c)
		}
		if job := Decide(Input{ScheduledJob: s, Now: first.Add(time.Second)}).Create.Job; job.Spec.Suspend != nil {
			t.Errorf("a non-member's Job is created with suspend %v", *job.Spec.Suspend)
		}
	})
}

// TestGroupMemberWarmUp follows an hourly run of a concurrency group's
// member with a 10-minute lead, whose group predicts it will start at
// 10:20: no capacity is held before 10:10, none while it waits until then,
// the placeholders come at 10:10 and stay for the hand-off once the group
// releases the run at 10:20.
func TestGroupMemberWarmUp(t *testing.T) {
	sj := warmJob("0 * * * *", "", "", 10*time.Minute, mustTime("2026-11-24T09:30:00Z"))
	sj.Spec.JobTemplate.Spec.Parallelism = ptr.To[int32](2)
	sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Name: "db"}
	predicted := mustTime("2026-11-24T10:20:00Z")
	w := &world{t: t, sj: sj, group: &v1alpha1.ConcurrencyGroupStatus{NewRunAdmission: &metav1.Time{Time: predicted}}}
	nextWarmUp := func(want string) func(t *testing.T, _ Plan, out Outcome) {
		return func(t *testing.T, _ Plan, out Outcome) {
			if got := out.Status.NextWarmUpTime; got == nil || !got.Time.Equal(mustTime("2026-11-24T"+want+"Z")) {
				t.Errorf("nextWarmUpTime %v, want %s", got, want)
			}
		}
	}
	steps := []lifecycleStep{
		// Predicted to wait: warm-up is placed before 10:20, not 10:00.
		{at: "09:50:00", capacity: "Unknown/WarmingUp", check: nextWarmUp("10:10:00")},
		// The run's Job, suspended: it waits in the queue.
		{at: "10:00:00.1", events: []string{v1alpha1.ReasonSuccessfulCreate}, capacity: "Unknown/WarmingUp", check: func(t *testing.T, plan Plan, out Outcome) {
			if plan.Create == nil || !suspendedJob(plan.Create.Job) {
				t.Fatalf("run %+v, want a suspended Job", plan.Create)
			}
			nextWarmUp("10:10:00")(t, plan, out)
		}},
		{at: "10:00:30", before: func(w *world) {
			w.group = &v1alpha1.ConcurrencyGroupStatus{Queue: []v1alpha1.QueuedRun{{Namespace: w.jobs[0].Namespace, Name: w.jobs[0].Name, PredictedAdmission: &metav1.Time{Time: predicted}}}}
		}, capacity: "Unknown/WarmingUp", requeue: 9*time.Minute + 30*time.Second},
		{at: "10:10:00", create: 2, events: []string{v1alpha1.ReasonWarmUpStarted}, capacity: "False/WarmingUp"},
		{at: "10:11:01", before: func(w *world) { w.bind(mustTime("2026-11-24T10:11:00Z")) }, events: []string{v1alpha1.ReasonWarmUpReady}, capacity: "True/CapacityReady"},
		// Released as predicted: the placeholders stay for the hand-off.
		{at: "10:20:00.5", before: func(w *world) {
			w.jobs[0].Spec.Suspend = ptr.To(false)
			w.jobs[0].Status.StartTime = &metav1.Time{Time: predicted}
			w.group = &v1alpha1.ConcurrencyGroupStatus{}
		}, capacity: "True/CapacityReady", check: func(t *testing.T, _ Plan, out Outcome) {
			if out.WarmUpLate {
				t.Error("late, though the capacity was ready at its start")
			}
		}},
		{at: "10:20:03", before: func(w *world) { w.jobs[0].Status.Ready = ptr.To[int32](2) }, delete: 2, capacity: "True/CapacityReady", check: nextWarmUp("10:50:00")},
	}
	w.run(t, steps)
}

// TestGroupRefusedMemberIsNotWarmed: a member whose cluster concurrency
// group stops selecting its namespace while its next run warms up (the
// group will refuse that run) deletes the run's placeholders at once,
// reports why in CapacityReady, announces no further warm-up, and warms
// again once the group selects the namespace.
func TestGroupRefusedMemberIsNotWarmed(t *testing.T) {
	sj := warmJob("0 * * * *", "", "", 10*time.Minute, mustTime("2026-11-24T09:30:00Z"))
	sj.Spec.JobTemplate.Spec.Parallelism = ptr.To[int32](2)
	sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Kind: v1alpha1.KindClusterConcurrencyGroup, Name: "licensed"}
	w := &world{t: t, sj: sj, group: &v1alpha1.ConcurrencyGroupStatus{}}
	refused := func(t *testing.T, _ Plan, out Outcome) {
		if out.Status.NextWarmUpTime != nil || out.Status.WarmUp != nil {
			t.Errorf("nextWarmUpTime %v, warmUp %+v; want neither", out.Status.NextWarmUpTime, out.Status.WarmUp)
		}
		c := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionCapacityReady)
		if c == nil || !strings.Contains(c.Message, `ClusterConcurrencyGroup "licensed"'s spec.namespaceSelector does not select namespace`) {
			t.Errorf("CapacityReady %+v, want it to name the group's selector", c)
		}
	}
	steps := []lifecycleStep{
		{at: "09:50:00", create: 2, events: []string{v1alpha1.ReasonWarmUpStarted}, capacity: "False/WarmingUp"},
		{at: "09:55:00", before: func(w *world) { w.groupRefuses = true }, delete: 2, events: []string{v1alpha1.ReasonWarmUpCanceled},
			capacity: "False/" + v1alpha1.ReasonNotSelected, check: refused},
		// The run's Job is made as any member's; the group refuses it.
		{at: "10:00:00.1", events: []string{v1alpha1.ReasonSuccessfulCreate}, capacity: "False/" + v1alpha1.ReasonNotSelected, check: refused},
		// The group marked the run missed; the namespace is selected
		// again: the next run warms up lead before its time.
		{at: "10:30:00", before: func(w *world) {
			w.jobs[0].Annotations[v1alpha1.MissedAnnotation] = "2026-11-24T10:00:01Z"
			w.groupRefuses = false
		}, capacity: "Unknown/WarmingUp", check: func(t *testing.T, _ Plan, out Outcome) {
			if got := out.Status.NextWarmUpTime; got == nil || !got.Time.Equal(mustTime("2026-11-24T10:50:00Z")) {
				t.Errorf("nextWarmUpTime %v, want 10:50", got)
			}
		}},
	}
	w.run(t, steps)
}
