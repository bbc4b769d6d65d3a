package planner

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

func reasons(out Outcome) []string { return eventReasons(out.Events) }

func eventReasons(events []Event) []string {
	var names []string
	for _, e := range events {
		names = append(names, e.Reason)
	}
	return names
}

func ready(status v1alpha1.ScheduledJobStatus) *metav1.Condition {
	return meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady)
}

// TestScheduleEditDoesNotRunRetroactively: upstream starts a run for a
// time the old schedule never had (kubernetes#63371 and friends).
func TestScheduleEditDoesNotRunRetroactively(t *testing.T) {
	sj := scheduledJob("*/15 * * * *", justBeforeThePriorHour) // was "0 * * * *"
	sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour}
	sj.Status.NextScheduleTime = &metav1.Time{Time: topOfTheHour.Add(time.Hour)} // announced under the old schedule
	now := topOfTheHour.Add(20 * time.Minute)
	plan := Decide(Input{ScheduledJob: sj, Now: now})
	if plan.Create != nil {
		t.Fatalf("the edit started a run for %v", plan.Create.Scheduled)
	}
	status := succeed(plan).Status
	if got := status.NextScheduleTime.Time; !got.Equal(topOfTheHour.Add(30 * time.Minute)) {
		t.Errorf("nextScheduleTime %v, want 10:30 (the new schedule)", got)
	}
	if plan.RequeueAfter != 10*time.Minute+nextScheduleDelta {
		t.Errorf("requeue %v", plan.RequeueAfter)
	}
	// At 10:30 the new schedule runs.
	sj.Status = status
	plan = Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(30*time.Minute + nextScheduleDelta)})
	if plan.Create == nil || !plan.Create.Scheduled.Equal(topOfTheHour.Add(30*time.Minute)) {
		t.Fatalf("no run at 10:30: %+v", plan.Create)
	}
}

// TestFailedCreateStaysDue: a run whose Job could not be created (the API
// server refused it while etcd restarted) is still due at the retry, for
// this controller or the next leader, with and without the Ready condition
// the failed reconcile wrote; its deadline still applies.
func TestFailedCreateStaysDue(t *testing.T) {
	for _, policy := range []v1alpha1.ConcurrencyPolicy{v1alpha1.AllowConcurrent, v1alpha1.ForbidConcurrent, v1alpha1.ReplaceConcurrent} {
		t.Run(string(policy), func(t *testing.T) {
			sj := scheduledJob("* * * * *", justBeforeThePriorHour)
			sj.Spec.ConcurrencyPolicy = policy
			sj.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
			sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour.Add(-time.Minute)}
			now := topOfTheHour.Add(14 * time.Second)
			plan := Decide(Input{ScheduledJob: sj, Now: now})
			if plan.Create == nil || !plan.Create.Scheduled.Equal(topOfTheHour) {
				t.Fatalf("no run at 10:00: %+v", plan.Create)
			}
			failed := plan.Finish(CreateFailed(plan.Create, errors.New("etcdserver: request timed out")))
			if next := failed.Status.NextScheduleTime; next == nil || !next.Equal(&metav1.Time{Time: topOfTheHour}) {
				t.Errorf("nextScheduleTime %v after the failed create, want 10:00, the run still due", next)
			}
			if !slices.Contains(reasons(failed), v1alpha1.ReasonFailedCreate) {
				t.Errorf("events %v, want FailedCreate", reasons(failed))
			}
			sj.Status = failed.Status
			retry := Decide(Input{ScheduledJob: sj, Now: now.Add(15 * time.Second)})
			if retry.Create == nil || !retry.Create.Scheduled.Equal(topOfTheHour) {
				t.Fatalf("the retry within the deadline does not run 10:00: %+v", retry.Create)
			}
			sj.Status = succeed(retry).Status
			if next := sj.Status.NextScheduleTime; next == nil || !next.Equal(&metav1.Time{Time: topOfTheHour.Add(time.Minute)}) {
				t.Errorf("nextScheduleTime %v after the retry created the Job, want 10:01", next)
			}
			// Past the deadline the failed run is recorded as missed.
			sj.Status = failed.Status
			late := Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(45 * time.Second)}).Finish()
			if late.Status.LastMissedTime == nil || !late.Status.LastMissedTime.Equal(&metav1.Time{Time: topOfTheHour}) {
				t.Errorf("lastMissedTime %v past the deadline, want 10:00", late.Status.LastMissedTime)
			}
		})
	}
}

// TestFailedReplaceStaysDue: under Replace, a run whose active Job could not
// be deleted is never created in that reconcile, and stays due too.
func TestFailedReplaceStaysDue(t *testing.T) {
	sj := scheduledJob("* * * * *", justBeforeThePriorHour)
	sj.Spec.ConcurrencyPolicy = v1alpha1.ReplaceConcurrent
	previous := topOfTheHour.Add(-time.Minute)
	active := childJob(sj, previous, "previous", false)
	sj.Status.LastScheduleTime = &metav1.Time{Time: previous}
	sj.Status.Active = []corev1.ObjectReference{{Kind: "Job", Namespace: active.Namespace, Name: active.Name, UID: active.UID}}
	plan := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{active}, Now: topOfTheHour.Add(time.Second)})
	if plan.Create == nil || len(plan.Deletes) != 1 || plan.Deletes[0].Reason != DeleteForReplace {
		t.Fatalf("plan: create %+v, deletes %+v; want a replacement", plan.Create, plan.Deletes)
	}
	failed := plan.Finish(DeleteFailed(active, errors.New("etcdserver: request timed out")))
	if next := failed.Status.NextScheduleTime; next == nil || !next.Equal(&metav1.Time{Time: topOfTheHour}) {
		t.Errorf("nextScheduleTime %v after the failed deletion, want 10:00, the run still due", next)
	}
	sj.Status = failed.Status
	if retry := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{active}, Now: topOfTheHour.Add(5 * time.Second)}); retry.Create == nil {
		t.Error("the retry does not run 10:00")
	}
}

// TestScheduleEditedWhileControllerDown: runs due after the announced time
// still start.
func TestScheduleEditedWhileControllerDown(t *testing.T) {
	sj := scheduledJob("*/15 * * * *", justBeforeThePriorHour)
	sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour}
	sj.Status.NextScheduleTime = &metav1.Time{Time: topOfTheHour.Add(time.Hour)}
	plan := Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(90*time.Minute + time.Second)})
	if plan.Create == nil || !plan.Create.Scheduled.Equal(topOfTheHour.Add(90*time.Minute)) {
		t.Fatalf("the 11:30 run did not start: %+v", plan.Create)
	}
}

func TestForbidWaitsThenStartsLate(t *testing.T) {
	sj := scheduledJob(onTheHour, justBeforeThePriorHour)
	sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](600)
	sj.Status.LastScheduleTime = &metav1.Time{Time: justAfterThePriorHour}
	running := childJob(sj, justAfterThePriorHour, "1234", false)
	sj.Status.Active = []corev1.ObjectReference{refOf(running)}

	plan := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{running}, Now: justAfterTheHour})
	out := succeed(plan)
	if plan.Create != nil {
		t.Fatalf("created %s while Forbid holds the run back", plan.Create.Job.Name)
	}
	if !plan.Held.Equal(topOfTheHour) {
		t.Errorf("Held %v, want the run at 10:00", plan.Held)
	}
	if got := strings.Join(reasons(out), ","); got != v1alpha1.ReasonJobAlreadyActive {
		t.Errorf("events %s, want JobAlreadyActive", got)
	}
	if !out.Status.NextScheduleTime.Time.Equal(topOfTheHour) {
		t.Errorf("nextScheduleTime %v, want the waiting run at 10:00", out.Status.NextScheduleTime)
	}
	if message := ready(out.Status).Message; !strings.Contains(message, "waits for active job mycronjob-24394141") {
		t.Errorf("Ready message %q does not name the active job", message)
	}
	if plan.RequeueAfter != 10*time.Minute+time.Second-time.Minute {
		t.Errorf("requeue %v, want at the deadline (10:10:01)", plan.RequeueAfter)
	}
	// Reconciled again while still blocked: no second event.
	sj.Status = out.Status
	if again := succeed(Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{running}, Now: justAfterTheHour.Add(time.Minute)})); len(again.Events) != 0 {
		t.Errorf("repeated events %v", reasons(again))
	}
	// The Job finishes at 10:05: the run starts, late but within the deadline.
	finished := running.DeepCopy()
	finished.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	plan = Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{finished}, Now: topOfTheHour.Add(5 * time.Minute)})
	if plan.Create == nil || plan.Create.Job.Name != "mycronjob-24394200" {
		t.Fatalf("the waiting run did not start: %+v", plan.Create)
	}
	if !plan.Held.IsZero() {
		t.Errorf("Held %v once the run before finished", plan.Held)
	}
	// Had it finished after the deadline, the run would be recorded missed.
	plan = Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{finished}, Now: topOfTheHour.Add(11 * time.Minute)})
	if plan.Create != nil {
		t.Errorf("created %s after the deadline", plan.Create.Job.Name)
	}
	if out := succeed(plan); !maps.Equal(out.Missed, map[MissReason]int{MissDeadline: 1}) {
		t.Errorf("missed %v, want one past its deadline", out.Missed)
	} else if out.Status.LastMissedTime == nil || !out.Status.LastMissedTime.Time.Equal(topOfTheHour) {
		t.Errorf("lastMissedTime %v, want 10:00", out.Status.LastMissedTime)
	}
}

func TestZeroDeadlineStartsWithinTheSecond(t *testing.T) {
	sj := scheduledJob(onTheHour, justBeforeTheHour)
	sj.Spec.StartingDeadlineSeconds = ptr.To[int64](0)
	if plan := Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(nextScheduleDelta)}); plan.Create == nil {
		t.Error("startingDeadlineSeconds 0 never starts a run (upstream Q2)")
	}
	if plan := Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(time.Second)}); plan.Create != nil {
		t.Error("a run 1 s late started despite startingDeadlineSeconds 0")
	}
}

func TestRunAt(t *testing.T) {
	sj := scheduledJob("", justBeforeThePriorHour)
	sj.Spec.RunAt = &metav1.Time{Time: topOfTheHour}

	plan := Decide(Input{ScheduledJob: sj, Now: justBeforeTheHour})
	if plan.Create != nil {
		t.Fatalf("before runAt: created %s", plan.Create.Job.Name)
	}
	if plan.RequeueAfter != time.Minute+nextScheduleDelta {
		t.Errorf("before runAt: requeue %v, want at runAt", plan.RequeueAfter)
	}
	if next := succeed(plan).Status.NextScheduleTime; next == nil || !next.Time.Equal(topOfTheHour) {
		t.Errorf("before runAt: nextScheduleTime %v, want runAt", next)
	}
	plan = Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(nextScheduleDelta)})
	if plan.Create == nil || plan.Create.Job.Name != "mycronjob-24394200" {
		t.Fatalf("at runAt: no run: %+v", plan.Create)
	}
	job := plan.Create.Job.DeepCopy()
	job.UID = "u1"
	sj.Status = plan.Finish(Created(plan.Create, job)).Status
	plan = Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{job}, Now: justAfterTheHour})
	status := succeed(plan).Status
	if plan.Create != nil {
		t.Errorf("after the run: created %s", plan.Create.Job.Name)
	}
	if plan.RequeueAfter != 0 {
		t.Errorf("after the run: requeue %v, want none", plan.RequeueAfter)
	}
	if status.NextScheduleTime != nil {
		t.Errorf("after the run: nextScheduleTime %v, want unset", status.NextScheduleTime)
	}
	if r := ready(status); r.Reason != v1alpha1.ReasonCompleted {
		t.Errorf("after the run: Ready %+v, want Completed", r)
	}
	// Created after its time has passed: it runs at once.
	late := scheduledJob("", justAfterTheHour)
	late.Spec.RunAt = &metav1.Time{Time: topOfTheHour}
	if plan := Decide(Input{ScheduledJob: late, Now: justAfterTheHour}); plan.Create == nil {
		t.Error("a runAt in the past did not run")
	}
	// Unless the deadline says it is too late.
	late.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
	plan = Decide(Input{ScheduledJob: late, Now: justAfterTheHour})
	if plan.Create != nil {
		t.Errorf("a runAt 60 s past a 30 s deadline started")
	}
	if missed := succeed(plan).Missed; missed[MissDeadline] != 1 {
		t.Errorf("a runAt 60 s past a 30 s deadline: missed %v, want one past its deadline", missed)
	}
}

// triggered is a ScheduledJob that last ran at 10:00, next at 11:00, with
// a run asked for at 10:20.
func triggered() (*v1alpha1.ScheduledJob, time.Time) {
	sj := scheduledJob(onTheHour, justBeforeThePriorHour)
	sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour}
	sj.Status.NextScheduleTime = &metav1.Time{Time: topOfTheHour.Add(time.Hour)}
	sj.Annotations = map[string]string{v1alpha1.TriggerAnnotation: "2016-05-19T10:20:00Z"}
	return sj, topOfTheHour.Add(20 * time.Minute)
}

func TestTrigger(t *testing.T) {
	sj, now := triggered()
	plan := Decide(Input{ScheduledJob: sj, Now: now})
	if plan.Trigger == nil || plan.Create != nil {
		t.Fatalf("trigger %+v, create %v: want only the triggered run", plan.Trigger, plan.Create)
	}
	if !plan.ConsumeTrigger {
		t.Error("the trigger annotation is not consumed")
	}
	job := plan.Trigger.Job
	if job.Name != sj.TriggeredJobName("2016-05-19T10:20:00Z") {
		t.Errorf("triggered job %s, want %s", job.Name, sj.TriggeredJobName("2016-05-19T10:20:00Z"))
	}
	wantAnnotations := map[string]string{"x": "y", v1alpha1.TriggeredAnnotation: "2016-05-19T10:20:00Z", v1alpha1.ScheduledTimestampAnnotation: "2016-05-19T10:20:00Z"}
	if !maps.Equal(job.Annotations, wantAnnotations) {
		t.Errorf("triggered job's annotations %v, want %v", job.Annotations, wantAnnotations)
	}
	// Recorded like a run, but it does not move lastScheduleTime.
	out := succeed(plan)
	if got := reasons(out); !slices.Equal(got, []string{v1alpha1.ReasonSuccessfulCreate, v1alpha1.ReasonTriggered}) {
		t.Errorf("events %v, want SuccessfulCreate, Triggered", got)
	}
	if len(out.Status.Active) != 1 {
		t.Errorf("after the trigger: %d active, want 1", len(out.Status.Active))
	}
	if !out.Status.LastScheduleTime.Time.Equal(topOfTheHour) {
		t.Errorf("after the trigger: lastScheduleTime %v, want 10:00 still", out.Status.LastScheduleTime)
	}
}

// TestTriggerHandledBefore: the annotation survived a crash after its Job
// was created; it is consumed, not run again.
func TestTriggerHandledBefore(t *testing.T) {
	sj, now := triggered()
	created := Decide(Input{ScheduledJob: sj, Now: now}).Trigger.Job.DeepCopy()
	created.UID = "t1"
	if again := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{created}, Now: now}); again.Trigger != nil || !again.ConsumeTrigger {
		t.Errorf("second handling: trigger %v, consume %v; want only consumed", again.Trigger, again.ConsumeTrigger)
	}
}

// TestTriggerRefusedUnderForbid: with a Job running, refused and consumed.
func TestTriggerRefusedUnderForbid(t *testing.T) {
	sj, now := triggered()
	sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
	running := childJob(sj, topOfTheHour, "r1", false)
	refused := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{running}, Now: now})
	if refused.Trigger != nil || !refused.ConsumeTrigger {
		t.Errorf("trigger %v, consume %v; want refused and consumed", refused.Trigger, refused.ConsumeTrigger)
	}
	if events := succeed(refused).Events; len(events) != 1 || !strings.Contains(events[0].Message, "triggered job") {
		t.Errorf("events %v, want one about the triggered job", events)
	}
}

// TestTriggerWhileSuspended: a run asked for by hand still starts.
func TestTriggerWhileSuspended(t *testing.T) {
	sj, now := triggered()
	sj.Spec.Suspend = ptr.To(true)
	if suspended := Decide(Input{ScheduledJob: sj, Now: now}); suspended.Trigger == nil {
		t.Error("a trigger on a suspended ScheduledJob did not run")
	}
}

// TestTriggerWaitsForADueRun: a scheduled run due in the same reconcile
// goes first; the trigger is handled a second later.
func TestTriggerWaitsForADueRun(t *testing.T) {
	sj, _ := triggered()
	due := Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(time.Hour + time.Second)})
	if due.Create == nil || due.Trigger != nil || due.ConsumeTrigger {
		t.Errorf("create %v, trigger %v, consume %v; want the scheduled run alone", due.Create, due.Trigger, due.ConsumeTrigger)
	}
	if due.RequeueAfter != time.Second {
		t.Errorf("requeue %v, want 1s to handle the trigger next", due.RequeueAfter)
	}
}

// TestHistoryCleanup is upstream's TestControllerV2CleanupFinishedJobs (40)
// plus the ordering rules.
func TestHistoryCleanup(t *testing.T) {
	sj := scheduledJob(onTheHour, justBeforeThePriorHour)
	sj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
	older := childJob(sj, justBeforeThePriorHour, "a", true)
	older.Status.StartTime = &metav1.Time{Time: justBeforeThePriorHour}
	newer := childJob(sj, justBeforeTheHour, "b", true)
	newer.Status.StartTime = &metav1.Time{Time: justBeforeTheHour}
	neverStarted := childJob(sj, justAfterThePriorHour, "c", true)
	failed := childJob(sj, justAfterThePriorHour.Add(time.Minute), "d", false)
	failed.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	beingDeleted := childJob(sj, justAfterThePriorHour.Add(2*time.Minute), "e", true)
	beingDeleted.DeletionTimestamp = &metav1.Time{Time: justBeforeTheHour}

	plan := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{newer, neverStarted, older, failed, beingDeleted}, Now: justAfterTheHour})
	var deleted []string
	for _, d := range plan.Deletes {
		deleted = append(deleted, string(d.Job.UID))
	}
	// Successful: a, b, c (c never started, so it counts as newest);
	// keep 1: delete a then b. Failed: d alone is within the limit of 1.
	// e is already being deleted.
	if strings.Join(deleted, ",") != "a,b" {
		t.Errorf("deleted %v, want a,b", deleted)
	}
	// Cleanup runs even while suspended.
	sj.Spec.Suspend = ptr.To(true)
	if plan := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{newer, older}, Now: justAfterTheHour}); len(plan.Deletes) != 1 {
		t.Errorf("suspended: %d deletes, want 1", len(plan.Deletes))
	}
}

func TestActiveJobsAreRebuiltFromTheWorld(t *testing.T) {
	sj := scheduledJob(onTheHour, justBeforeThePriorHour)
	finished := childJob(sj, justBeforeThePriorHour, "f", true)
	gone := childJob(sj, justAfterThePriorHour, "g", false)
	sj.Status.Active = []corev1.ObjectReference{refOf(finished), refOf(gone)}
	stranger := childJob(sj, justBeforeTheHour, "s", false)
	delete(stranger.Annotations, v1alpha1.ScheduledTimestampAnnotation)

	// (The 09:00 run is due too; leave it out: Finish with no results.)
	out := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{finished, stranger}, Now: justBeforeTheHour}).Finish()
	if got := strings.Join(reasons(out), ","); got != "SawCompletedJob,UnexpectedJob,MissingJob" {
		t.Errorf("events %s", got)
	}
	if len(out.Status.Active) != 1 || out.Status.Active[0].UID != "s" {
		t.Errorf("active %v, want only the unexpected Job (adopted)", out.Status.Active)
	}
}

func TestDaylightSavingFollowsPolicy(t *testing.T) {
	// America/New_York: 2026-03-08 02:00 EST jumps to 03:00 EDT (07:00Z).
	jump := mustTime("2026-03-08T07:00:00Z")
	for _, c := range []struct {
		policy v1alpha1.DSTPolicy
		run    bool
	}{{v1alpha1.DSTCron, true}, {v1alpha1.DSTKubernetes, false}} {
		sj := scheduledJob("30 2 * * *", mustTime("2026-03-01T00:00:00Z"))
		sj.Spec.TimeZone = ptr.To("America/New_York")
		sj.Spec.DSTPolicy = c.policy
		sj.Status.LastScheduleTime = &metav1.Time{Time: mustTime("2026-03-07T07:30:00Z")}
		plan := Decide(Input{ScheduledJob: sj, Now: jump.Add(nextScheduleDelta)})
		if (plan.Create != nil) != c.run {
			t.Errorf("%s: create %v, want a run at the jump: %v", c.policy, plan.Create, c.run)
		}
		if c.run && plan.Create.Job.Annotations[v1alpha1.ScheduledTimestampAnnotation] != "2026-03-08T03:00:00-04:00" {
			t.Errorf("scheduled timestamp %s", plan.Create.Job.Annotations[v1alpha1.ScheduledTimestampAnnotation])
		}
	}
}

func TestInvalidSpecEventsOncePerGeneration(t *testing.T) {
	sj := scheduledJob("0 0 30 2 *", justBeforeTheHour)
	out := succeed(Decide(Input{ScheduledJob: sj, Now: justAfterTheHour}))
	if got := reasons(out); !slices.Equal(got, []string{v1alpha1.ReasonInvalidSchedule}) {
		t.Fatalf("events %v, want InvalidSchedule", got)
	}
	if r := ready(out.Status); r.Status != metav1.ConditionFalse {
		t.Fatalf("Ready %+v, want False", r)
	}
	if message, want := ready(out.Status).Message, `spec.schedule "0 0 30 2 *": never fires: no allowed month has an allowed day`; message != want {
		t.Errorf("Ready message %q, want %q (the schedule named once)", message, want)
	}
	sj.Status = out.Status
	if again := succeed(Decide(Input{ScheduledJob: sj, Now: justAfterTheHour.Add(time.Hour)})); len(again.Events) != 0 {
		t.Errorf("the same invalid spec emitted %v again", reasons(again))
	}
	sj.Generation = 2
	if edited := succeed(Decide(Input{ScheduledJob: sj, Now: justAfterTheHour.Add(time.Hour)})); len(edited.Events) != 1 {
		t.Errorf("an edited, still invalid spec emitted %v", reasons(edited))
	}
}

func TestEverySubMinuteIsInvalid(t *testing.T) {
	plan := Decide(Input{ScheduledJob: scheduledJob("@every 30s", justBeforeTheHour), Now: justAfterTheHour})
	if plan.Create != nil {
		t.Errorf("created %s", plan.Create.Job.Name)
	}
	if r := ready(succeed(plan).Status); r.Reason != v1alpha1.ReasonInvalidSchedule || !strings.Contains(r.Message, "minute resolution") {
		t.Errorf("Ready %+v, want InvalidSchedule about minute resolution", r)
	}
}

func TestTerminating(t *testing.T) {
	sj := scheduledJob(onTheHour, justBeforeTheHour)
	sj.DeletionTimestamp = &metav1.Time{Time: justBeforeTheHour}
	plan := Decide(Input{ScheduledJob: sj, Now: justAfterTheHour})
	if plan.Create != nil || plan.RequeueAfter != 0 {
		t.Errorf("create %v, requeue %v: want nothing while terminating", plan.Create, plan.RequeueAfter)
	}
	if r := ready(succeed(plan).Status); r.Reason != v1alpha1.ReasonTerminating {
		t.Errorf("Ready %+v, want Terminating", r)
	}
}

// TestHugeStartingDeadlineStartsRuns: a starting deadline too long for a
// time.Duration (the API accepts any non-negative int64; 2^40 s is 34,800
// years) is a deadline never reached, not one wrapped into the past that
// misses every run (FuzzJobGroupMutator found the wrap in a CronJob
// member's start-by time). Also a run held back by Forbid.
func TestHugeStartingDeadlineStartsRuns(t *testing.T) {
	for _, seconds := range []int64{1 << 40, math.MaxInt64} {
		sj := scheduledJob("* * * * *", justBeforeThePriorHour)
		sj.Spec.StartingDeadlineSeconds = ptr.To(seconds)
		sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour.Add(-time.Minute)}
		plan := Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(14 * time.Second)})
		if plan.Create == nil || !plan.Create.Scheduled.Equal(topOfTheHour) {
			t.Errorf("startingDeadlineSeconds %d: no run at 10:00 (%+v); events %v", seconds, plan.Create, reasons(plan.Finish()))
		}
		if missed := plan.Finish().Status.LastMissedTime; missed != nil {
			t.Errorf("startingDeadlineSeconds %d: lastMissedTime %v", seconds, missed)
		}
	}
}
