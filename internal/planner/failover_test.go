package planner

import (
	"cmp"
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

// everyMinute is a ScheduledJob on "* * * * *" created a minute before
// topOfTheHour.
func everyMinute(policy v1alpha1.ConcurrencyPolicy) *v1alpha1.ScheduledJob {
	sj := scheduledJob("* * * * *", justBeforeTheHour)
	sj.Spec.ConcurrencyPolicy = policy
	return sj
}

// TestStandbyWindow: the standby may start a run until StandbyWindow after
// its time, ending RequestBound before the next run; a run's Job is kept
// from history cleanup until RequestBound after that.
func TestStandbyWindow(t *testing.T) {
	for _, c := range []struct {
		schedule      string
		until, fenced time.Duration
	}{
		{"* * * * *", 45 * time.Second, time.Minute},
		{"0 * * * *", StandbyWindow, StandbyWindow + RequestBound},
		{"*/2 * * * *", StandbyWindow, StandbyWindow + RequestBound},
	} {
		sj := scheduledJob(c.schedule, justBeforeThePriorHour)
		judged := Judge(sj, nil, topOfTheHour)
		spec := scheduleOf(sj, &judged, nil)
		if got := standbyUntil(spec.schedule, topOfTheHour).Sub(topOfTheHour); got != c.until {
			t.Errorf("%q: the standby starts a run until %s after its time, want %s", c.schedule, got, c.until)
		}
		if got := historyFence(spec.schedule, childJob(sj, topOfTheHour, "a", true)).Sub(topOfTheHour); got != c.fenced {
			t.Errorf("%q: a run's Job is kept %s after its time, want %s", c.schedule, got, c.fenced)
		}
	}
	sj := everyMinute(v1alpha1.AllowConcurrent)
	plan := Decide(Input{ScheduledJob: sj, Now: topOfTheHour.Add(time.Second)})
	if plan.Create == nil || !plan.StandbyUntil.Equal(topOfTheHour.Add(45*time.Second)) {
		t.Errorf("plan.StandbyUntil %s for the run at %s, want 45 s after it", plan.StandbyUntil, topOfTheHour)
	}
}

// TestHistoryWaitsForTheStandbyWindow: with history limit 0, a run's
// finished Job is deleted only once no standby can be starting the run
// (with it gone, a standby's create would succeed and run it twice); the
// plan wakes up then.
func TestHistoryWaitsForTheStandbyWindow(t *testing.T) {
	sj := everyMinute(v1alpha1.AllowConcurrent)
	sj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	job := childJob(sj, topOfTheHour, "a", true)
	fence := topOfTheHour.Add(time.Minute)
	early := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{job}, Now: topOfTheHour.Add(5 * time.Second)})
	if len(early.Deletes) != 0 {
		t.Fatalf("the finished Job was deleted %s after its run, within the standby's window", 5*time.Second)
	}
	if early.RequeueAfter > fence.Sub(topOfTheHour.Add(5*time.Second))+time.Millisecond {
		t.Errorf("requeue after %s, want by the fence at %s", early.RequeueAfter, fence.Format(time.TimeOnly))
	}
	late := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{job}, Now: fence})
	if len(late.Deletes) != 1 {
		t.Errorf("%d deletions at the fence, want the Job's", len(late.Deletes))
	}
}

// TestTriggeredJobKeptWhileItsRequestIsPending: the request is recorded as
// handled by the annotation's removal; its Job is deleted for history only
// after that, or the request would start it again.
func TestTriggeredJobKeptWhileItsRequestIsPending(t *testing.T) {
	sj, now := triggered()
	sj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	job := buildJob(sj, sj.TriggeredJobName(sj.Annotations[v1alpha1.TriggerAnnotation]), now, time.UTC)
	job.Annotations[v1alpha1.TriggeredAnnotation] = sj.Annotations[v1alpha1.TriggerAnnotation]
	job.UID = "t"
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	if plan := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{job}, Now: now.Add(time.Hour)}); len(plan.Deletes) != 0 {
		t.Errorf("request pending: %d deletions, want none", len(plan.Deletes))
	}
	delete(sj.Annotations, v1alpha1.TriggerAnnotation)
	if plan := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{job}, Now: now.Add(time.Hour)}); len(plan.Deletes) != 1 {
		t.Errorf("request handled: %d deletions, want the Job's", len(plan.Deletes))
	}
}

// TestTriggeredJobNotReplacedWhileItsRequestIsPending (make chaos, a
// request's run created twice): a leader died between creating a
// requested run's Job and removing the annotation; the next scheduled run
// of a Replace ScheduledJob deleted that Job and the plan after it,
// finding the annotation and no Job, started the request again. The
// annotation is now removed while the scheduled run starts, and the
// requested run's Job is replaced only once it is.
func TestTriggeredJobNotReplacedWhileItsRequestIsPending(t *testing.T) {
	sj := everyMinute(v1alpha1.ReplaceConcurrent)
	request := "2016-05-19T09:59:20Z"
	sj.Annotations = map[string]string{v1alpha1.TriggerAnnotation: request}
	sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour.Add(-time.Minute)}
	requested := buildJob(sj, sj.TriggeredJobName(request), topOfTheHour.Add(-40*time.Second), time.UTC)
	requested.Annotations[v1alpha1.TriggeredAnnotation] = request
	requested.UID = "requested"
	requested.CreationTimestamp = metav1.NewTime(topOfTheHour.Add(-40 * time.Second))

	// The scheduled run is due: it starts, the request is removed, and
	// the requested run's Job stays.
	due := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{requested}, Now: topOfTheHour})
	if due.Create == nil || due.Trigger != nil || !due.ConsumeTrigger {
		t.Fatalf("scheduled run %v, requested run again %v, request removed %v: want true, false, true", due.Create != nil, due.Trigger != nil, due.ConsumeTrigger)
	}
	for _, d := range due.Deletes {
		if d.Job.UID == requested.UID {
			t.Errorf("the requested run's Job deleted (%s) while its request is on the ScheduledJob", d.Reason)
		}
	}

	// The status is left to the next plan (deferStatus): the annotation is
	// still there, beside both Jobs.
	scheduled := due.Create.Job.DeepCopy()
	scheduled.UID, scheduled.CreationTimestamp = "scheduled", metav1.NewTime(topOfTheHour)
	sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour}
	next := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{requested, scheduled}, Now: topOfTheHour.Add(time.Second)})
	if next.Trigger != nil || !next.ConsumeTrigger || len(next.Deletes) != 0 {
		t.Errorf("with the request still on: trigger %v, consume %v, %d deletions; want no run, the request removed, no deletion", next.Trigger, next.ConsumeTrigger, len(next.Deletes))
	}

	// Once the request is removed, the newer scheduled run replaces it.
	delete(sj.Annotations, v1alpha1.TriggerAnnotation)
	after := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{requested, scheduled}, Now: topOfTheHour.Add(2 * time.Second)})
	if len(after.Deletes) != 1 || after.Deletes[0].Job.UID != requested.UID || after.Deletes[0].Reason != DeleteForReplace {
		t.Errorf("request removed: deletions %+v, want the requested run's Job, replaced", after.Deletes)
	}
}

// TestForbidRunsAreClaimed: a Forbid run is claimed before its Job is
// created; the claim lists it in status.active by name without a UID,
// keeps the run announced until its Job exists, blocks other runs and
// triggers, and its Job, once it exists, takes its place.
func TestForbidRunsAreClaimed(t *testing.T) {
	sj := everyMinute(v1alpha1.ForbidConcurrent)
	now := topOfTheHour.Add(time.Second)
	plan := Decide(Input{ScheduledJob: sj, Now: now})
	if plan.Create == nil || !plan.Create.Claim {
		t.Fatalf("create %v: want the run at %s, to be claimed", plan.Create, topOfTheHour)
	}
	claimedStatus := plan.Finish(plan.Claims()...).Status
	if len(claimedStatus.Active) != 1 || claimedStatus.Active[0].Name != sj.JobName(topOfTheHour) || claimedStatus.Active[0].UID != "" {
		t.Fatalf("status.active after the claim %v, want the run's Job name without a UID", claimedStatus.Active)
	}
	if next := claimedStatus.NextScheduleTime; next == nil || !next.Time.Equal(topOfTheHour) {
		t.Errorf("nextScheduleTime %v after the claim, want the claimed run until its Job exists", next)
	}
	claimed := sj.DeepCopy()
	claimed.Status = claimedStatus

	// The claimer died before creating the Job: the next plan creates it,
	// without claiming again.
	again := Decide(Input{ScheduledJob: claimed, Now: now.Add(10 * time.Second)})
	if again.Create == nil || again.Create.Claim {
		t.Errorf("create %v: want the claimed run, not claimed again", again.Create)
	}
	// A trigger waits for the claimed run.
	claimed.Annotations = map[string]string{v1alpha1.TriggerAnnotation: "now"}
	if trig := Decide(Input{ScheduledJob: claimed, Now: now.Add(10 * time.Second)}); trig.Trigger != nil {
		t.Error("a trigger started beside a claimed Forbid run")
	}
	delete(claimed.Annotations, v1alpha1.TriggerAnnotation)

	// Its Job exists: the claim becomes its reference.
	job := childJob(sj, topOfTheHour, "job-uid", false)
	out := succeed(Decide(Input{ScheduledJob: claimed, Jobs: []*batchv1.Job{job}, Now: now.Add(20 * time.Second)}))
	if len(out.Status.Active) != 1 || out.Status.Active[0].UID != "job-uid" {
		t.Errorf("status.active %v once the Job exists, want its reference", out.Status.Active)
	}
}

// TestStaleClaimsAreDropped: a claim whose run was never created (its
// claimer died, no one took over while it was due) blocks the next run
// only until RequestBound after that run's time, then counts as missed.
func TestStaleClaimsAreDropped(t *testing.T) {
	sj := everyMinute(v1alpha1.ForbidConcurrent)
	sj.Status.Active = []corev1.ObjectReference{claimRef(childJob(sj, topOfTheHour, "", false), sj.JobName(topOfTheHour))}
	next := topOfTheHour.Add(time.Minute)
	held := Decide(Input{ScheduledJob: sj, Now: next.Add(time.Second)})
	if held.Create != nil {
		t.Fatal("the next run started while a claim for the run before could still be creating its Job")
	}
	if held.RequeueAfter > RequestBound {
		t.Errorf("requeue after %s, want by %s, when the claim is dropped", held.RequeueAfter, RequestBound)
	}
	freed := Decide(Input{ScheduledJob: sj, Now: next.Add(RequestBound)})
	if freed.Create == nil || freed.Create.Scheduled != next {
		t.Fatalf("create %v once the claim is stale, want the run at %s", freed.Create, next.Format(time.TimeOnly))
	}
	out := freed.Finish(freed.Claims()...)
	if missed := out.Status.LastMissedTime; missed == nil || !missed.Time.Equal(topOfTheHour) || !slices.Contains(reasons(out), v1alpha1.ReasonMissSchedule) {
		t.Errorf("lastMissedTime %v, events %v: want the claimed run recorded as missed", missed, reasons(out))
	}
}

// TestReplaceByHandWaitsForTheStandbyWindow: a run asked for by hand under
// Replace starts at once, and replaces an active run only once no standby
// can be starting it again.
func TestReplaceByHandWaitsForTheStandbyWindow(t *testing.T) {
	sj := everyMinute(v1alpha1.ReplaceConcurrent)
	sj.Annotations = map[string]string{v1alpha1.TriggerAnnotation: "now"}
	active := childJob(sj, topOfTheHour, "active", false)
	now := topOfTheHour.Add(10 * time.Second)
	plan := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{active}, Now: now})
	if plan.Trigger == nil || len(plan.Deletes) != 0 {
		t.Fatalf("trigger %v, %d deletions: want the run at once, the active one kept", plan.Trigger, len(plan.Deletes))
	}
	byHand := plan.Trigger.Job.DeepCopy()
	byHand.UID, byHand.CreationTimestamp = "by-hand", metav1.NewTime(now)
	delete(sj.Annotations, v1alpha1.TriggerAnnotation)
	later := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{active, byHand}, Now: topOfTheHour.Add(time.Minute - time.Second)})
	if len(later.Deletes) != 0 {
		t.Error("the replaced run was deleted within its standby window")
	}
	at := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{active, byHand}, Now: topOfTheHour.Add(time.Minute)})
	if !slices.ContainsFunc(at.Deletes, func(d Deletion) bool { return d.Job.UID == "active" && d.Reason == DeleteForReplace }) {
		t.Errorf("deletions %v at the fence, want the run replaced", at.Deletes)
	}
}

// TestNoMissingJobForOwnDeletions: a Job status.active lists that is gone
// is reported missing, unless this controller deleted it, or, under
// Replace, a later run's Job exists or a later run came due (a leader
// that replaced it may have died before writing the status without it,
// or before creating the later run's Job: it deletes first).
func TestNoMissingJobForOwnDeletions(t *testing.T) {
	for name, c := range map[string]struct {
		policy  v1alpha1.ConcurrencyPolicy
		deleted bool
		later   bool
		// now is how long after the gone Job's run (at the top of the
		// hour, every minute) it is looked at: 70 s unless set.
		now      time.Duration
		deadline int64
		missing  bool
	}{
		"deleted by hand":                                          {policy: v1alpha1.AllowConcurrent, missing: true},
		"deleted by this controller":                               {policy: v1alpha1.AllowConcurrent, deleted: true},
		"replaced by a later run":                                  {policy: v1alpha1.ReplaceConcurrent, later: true},
		"gone under Allow, a later run":                            {policy: v1alpha1.AllowConcurrent, later: true, missing: true},
		"gone under Replace, a later run came due without its Job": {policy: v1alpha1.ReplaceConcurrent},
		// The later run is missed at its deadline: none starts now.
		"gone under Replace, a later run missed without its Job": {policy: v1alpha1.ReplaceConcurrent, deadline: 5},
		"gone under Replace before a later run came due":         {policy: v1alpha1.ReplaceConcurrent, now: 50 * time.Second, missing: true},
	} {
		t.Run(name, func(t *testing.T) {
			sj := everyMinute(c.policy)
			gone := childJob(sj, topOfTheHour, "gone", false)
			sj.Status.Active = []corev1.ObjectReference{refOf(gone)}
			sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour}
			if c.deadline > 0 {
				sj.Spec.StartingDeadlineSeconds = &c.deadline
			}
			now := cmp.Or(c.now, time.Minute+10*time.Second)
			in := Input{ScheduledJob: sj, Now: topOfTheHour.Add(now)}
			if c.deleted {
				in.Deleted = map[types.UID]bool{"gone": true}
			}
			if c.later {
				in.Jobs = []*batchv1.Job{childJob(sj, topOfTheHour.Add(time.Minute), "later", false)}
			}
			got := Decide(in).Reports(v1alpha1.ReasonMissingJob)
			if got != c.missing {
				t.Errorf("MissingJob reported: %v, want %v", got, c.missing)
			}
		})
	}
}

// TestStoredSpecBreakingAdmissionRules (issue #30): a ScheduledJob stored
// without the webhook's checks is checked with the webhook's rules. A
// warm-up lead longer than the interval between runs (which admission
// refuses for EarlyStart) runs without warm-up and says so; a Job template
// that can never run stops runs and says which field.
func TestStoredSpecBreakingAdmissionRules(t *testing.T) {
	now := topOfTheHour.Add(time.Second)

	lead := everyMinute(v1alpha1.AllowConcurrent)
	lead.Spec.WarmUp = &v1alpha1.WarmUp{Strategy: v1alpha1.WarmUpEarlyStart, Lead: v1alpha1.FixedLead(10 * time.Minute)}
	plan := Decide(Input{ScheduledJob: lead, Now: now})
	out := succeed(plan)
	capacity := meta.FindStatusCondition(out.Status.Conditions, v1alpha1.ConditionCapacityReady)
	if plan.Create == nil {
		t.Error("a run with an invalid warm-up did not start")
	}
	if capacity == nil || capacity.Status != metav1.ConditionFalse || capacity.Reason != v1alpha1.ReasonInvalidWarmUp || !strings.Contains(capacity.Message, "spec.warmUp.lead") {
		t.Errorf("CapacityReady %+v, want False, InvalidWarmUp, naming spec.warmUp.lead", capacity)
	}
	if !slices.Contains(reasons(out), v1alpha1.ReasonInvalidWarmUp) {
		t.Errorf("events %v, want InvalidWarmUp", reasons(out))
	}

	deadline := everyMinute(v1alpha1.AllowConcurrent)
	deadline.Spec.JobTemplate.Spec.ActiveDeadlineSeconds = ptr.To[int64](0)
	plan = Decide(Input{ScheduledJob: deadline, Now: now})
	out = plan.Finish()
	if plan.Create != nil {
		t.Error("a run whose Job can never run started")
	}
	if r := ready(out.Status); r == nil || r.Reason != v1alpha1.ReasonInvalidSpec || !strings.Contains(r.Message, "spec.jobTemplate.spec.activeDeadlineSeconds: Invalid value: 0") {
		t.Errorf("Ready %+v, want False, InvalidSpec, naming the field and the value", r)
	}
	if !slices.Contains(reasons(out), v1alpha1.ReasonInvalidSpec) {
		t.Errorf("events %v, want InvalidSpec", reasons(out))
	}
	// Once reported for this generation, not again.
	deadline.Status = out.Status
	if again := Decide(Input{ScheduledJob: deadline, Now: now.Add(time.Minute)}).Finish(); slices.Contains(reasons(again), v1alpha1.ReasonInvalidSpec) {
		t.Error("InvalidSpec reported again for the same generation")
	}
}

// TestRunsSkippedByTheStandbyAreMissed: a run the standby started after
// runs that never did (held by Forbid past their time, or no leader)
// moves lastScheduleTime past them; the leader records them as missed,
// as it records the runs it skips itself. The MissSchedule event is the
// standby's, sent with its SuccessfulCreate: the leader, which cannot
// tell whether it was sent, sends none.
func TestRunsSkippedByTheStandbyAreMissed(t *testing.T) {
	sj := everyMinute(v1alpha1.AllowConcurrent)
	sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour}
	skipped, started := topOfTheHour.Add(time.Minute), topOfTheHour.Add(2*time.Minute)
	now := started.Add(10 * time.Second)

	standbyPlan := Decide(Input{ScheduledJob: sj, Now: now})
	if standbyPlan.Create == nil || !standbyPlan.Create.Skipped.Equal(skipped) {
		t.Fatalf("the standby's run %+v, want the one at %s, skipping %s", standbyPlan.Create, started.Format(time.TimeOnly), skipped.Format(time.TimeOnly))
	}
	byStandby := childJob(sj, started, "s", false)
	events := standbyPlan.ResultEvents(Created(standbyPlan.Create, byStandby))
	if got := eventReasons(events); !slices.Equal(got, []string{v1alpha1.ReasonMissSchedule, v1alpha1.ReasonSuccessfulCreate}) {
		t.Errorf("the standby's events %v, want MissSchedule and SuccessfulCreate", got)
	}
	if !strings.Contains(events[0].Message, skipped.Format(time.RFC1123Z)) {
		t.Errorf("MissSchedule %q, want it to name %s", events[0].Message, skipped.Format(time.RFC1123Z))
	}

	out := Decide(Input{ScheduledJob: sj, Jobs: []*batchv1.Job{byStandby}, Now: now}).Finish()
	if missed := out.Status.LastMissedTime; missed == nil || !missed.Time.Equal(skipped) || out.Missed[MissSkipped] != 1 {
		t.Errorf("lastMissedTime %v, skipped %d; want the run at %s, 1", missed, out.Missed[MissSkipped], skipped.Format(time.TimeOnly))
	}
	if slices.Contains(reasons(out), v1alpha1.ReasonMissSchedule) {
		t.Errorf("the leader's events %v: MissSchedule again", reasons(out))
	}
}
