package planner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// The status's writers. Each field of ScheduledJobStatus, and each
// condition, is set by one function, here (readiness.write: Ready and
// nextScheduleTime) or in capacity.go (CapacityReady); the steps that decide
// return values, and Decide and Finish hand them to these.
// TestOneWriterPerStatusField fails when another function assigns a field.

// setObserved records which spec the status describes: its generation,
// the schedule in effect and the spread placement.
func setObserved(status *v1alpha1.ScheduledJobStatus, generation int64, effective string, placement *v1alpha1.SpreadStatus) {
	status.ObservedGeneration = generation
	status.EffectiveSchedule = effective
	status.Spread = placement
}

// setActive sets status.active, and activeCount with it.
func setActive(status *v1alpha1.ScheduledJobStatus, refs []corev1.ObjectReference) {
	status.Active = refs
	status.ActiveCount = int32(len(refs))
}

// setLastScheduleTime sets status.lastScheduleTime.
func setLastScheduleTime(status *v1alpha1.ScheduledJobStatus, t *metav1.Time) {
	status.LastScheduleTime = t
}

// setLastSuccessfulTime sets status.lastSuccessfulTime.
func setLastSuccessfulTime(status *v1alpha1.ScheduledJobStatus, t *metav1.Time) {
	status.LastSuccessfulTime = t
}

// setFailures sets status.failures (nil without spec.suspendAfterFailures).
func setFailures(status *v1alpha1.ScheduledJobStatus, streak *v1alpha1.FailureStreak) {
	status.Failures = streak
}

// setCatchUp records the catch-up a run begins (spec.catchUp).
func setCatchUp(status *v1alpha1.ScheduledJobStatus, c *v1alpha1.CatchUpStatus) {
	status.CatchUp = c.DeepCopy()
}

// recordMissed moves status.lastMissedTime forward to at, never back; a
// zero at changes nothing.
func recordMissed(status *v1alpha1.ScheduledJobStatus, at time.Time) {
	if !at.IsZero() {
		status.LastMissedTime = later(status.LastMissedTime, at)
	}
}

// setWarmUp records the warm-up: its state and when the next one begins
// (zero: none is coming).
func setWarmUp(status *v1alpha1.ScheduledJobStatus, state *v1alpha1.WarmUpStatus, nextStart time.Time) {
	status.WarmUp = state
	status.NextWarmUpTime = nil
	if !nextStart.IsZero() {
		status.NextWarmUpTime = timeAt(nextStart)
	}
}

// setLastRunStart records the latest run whose start was measured.
func setLastRunStart(status *v1alpha1.ScheduledJobStatus, start *v1alpha1.RunStart) {
	status.LastRunStart = start
}

// setWaiting writes a concurrency group member's Waiting condition: True,
// naming them, while some of its active runs wait for room in the group
// (their Jobs suspended); absent when it is not a member.
func setWaiting(status *v1alpha1.ScheduledJobStatus, sj *v1alpha1.ScheduledJob, active []*batchv1.Job, now time.Time) {
	group := sj.Spec.ConcurrencyGroup
	if group == nil {
		meta.RemoveStatusCondition(&status.Conditions, v1alpha1.ConditionWaiting)
		return
	}
	var waiting []string
	for _, job := range active {
		if suspendedJob(job) && job.Labels[group.Label()] != "" {
			waiting = append(waiting, job.Name)
		}
	}
	kind := cmp.Or(group.Kind, v1alpha1.KindConcurrencyGroup)
	if len(waiting) == 0 {
		setCondition(status, sj.Generation, now, v1alpha1.ConditionWaiting, metav1.ConditionFalse, v1alpha1.ReasonNotWaiting,
			fmt.Sprintf("no run waits for room in %s %s", kind, group.Name))
		return
	}
	setCondition(status, sj.Generation, now, v1alpha1.ConditionWaiting, metav1.ConditionTrue, v1alpha1.ReasonWaitingForGroup,
		fmt.Sprintf("%s wait for room in %s %s (kubectl get %s %s)", strings.Join(waiting, ", "), kind, group.Name, strings.ToLower(kind), group.Name))
}

// setCondition sets a condition and reports whether its status, reason or
// message changed. Only the writers of Ready, CapacityReady and Waiting
// call it.
func setCondition(status *v1alpha1.ScheduledJobStatus, generation int64, now time.Time, conditionType string, conditionStatus metav1.ConditionStatus, reason, message string) bool {
	old := meta.FindStatusCondition(status.Conditions, conditionType)
	changed := old == nil || old.Status != conditionStatus || old.Reason != reason || old.Message != message
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               conditionType,
		Status:             conditionStatus,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now),
	})
	return changed
}

// Edits of status.active, which setActive stores.

// withJob lists a run's Job in place of its claim, or adds it.
func withJob(active []corev1.ObjectReference, job *batchv1.Job) []corev1.ObjectReference {
	for i, ref := range active {
		switch {
		case ref.UID == job.UID:
			return active
		case isClaim(ref) && ref.Name == job.Name:
			edited := slices.Clone(active)
			edited[i] = refOf(job)
			return edited
		}
	}
	return append(slices.Clone(active), refOf(job))
}

// withoutJob drops a Job that is gone.
func withoutJob(active []corev1.ObjectReference, job *batchv1.Job) []corev1.ObjectReference {
	return slices.DeleteFunc(slices.Clone(active), func(ref corev1.ObjectReference) bool { return ref.UID == job.UID })
}

// withClaim adds the claim of a run whose Job is not created yet.
func withClaim(active []corev1.ObjectReference, job *batchv1.Job) []corev1.ObjectReference {
	if claimed(active, job.Name) {
		return active
	}
	return append(slices.Clone(active), claimRef(job, job.Name))
}

// withoutClaims drops the claims of the named Jobs.
func withoutClaims(active []corev1.ObjectReference, names ...string) []corev1.ObjectReference {
	return slices.DeleteFunc(slices.Clone(active), func(ref corev1.ObjectReference) bool { return isClaim(ref) && slices.Contains(names, ref.Name) })
}

// The Ready condition and status.nextScheduleTime have one writer,
// readiness.write, which Finish calls once. The steps that decide them
// return a readiness instead of writing status, and Finish lets an
// action's result override the decision (a run whose Job name is taken, a
// run that did not start), in one stated order, so that no result depends
// on the order of calls: cert-manager's trigger controller works the same
// way (its policy chain returns a reason and message; one condition is
// written from them).

// readiness is what the Ready condition and status.nextScheduleTime say.
type readiness struct {
	// next is the next run status announces; nil for none.
	next    *time.Time
	ready   bool
	reason  string
	message string
}

// readyReason is the reason of status's Ready condition ("" without one).
func readyReason(status *v1alpha1.ScheduledJobStatus) string {
	if ready := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady); ready != nil {
		return ready.Reason
	}
	return ""
}

// notReady is a readiness that announces no run.
func notReady(reason, message string) readiness {
	return readiness{reason: reason, message: message}
}

// scheduled is a readiness that announces the run at next.
func scheduled(next time.Time, message string) readiness {
	return readiness{next: &next, ready: true, reason: v1alpha1.ReasonScheduled, message: message}
}

// changes reports whether writing r would change the status, reason or
// message of status's Ready condition: an event that reports the condition
// is emitted only then, not on every reconcile.
func (r readiness) changes(status *v1alpha1.ScheduledJobStatus) bool {
	old := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady)
	return old == nil || old.Status != r.conditionStatus() || old.Reason != r.reason || old.Message != r.message
}

func (r readiness) conditionStatus() metav1.ConditionStatus {
	if r.ready {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// retrying is r once a scheduled run did not start (its create failed, or
// a Replace deletion before it did): status announces that run, not the
// one after it. The returned error retries the reconcile, and a new leader
// may be the one that retries; had the status written meanwhile announced
// the following run, notBeforeAnnounced would take the failed run for one
// the schedule never had, and it would be lost without a trace (a create
// refused while etcd restarts must be retried by whichever leader comes
// next).
func (r readiness) retrying(run *Run) readiness {
	next := r.next
	if next == nil || run.Scheduled.Before(*next) {
		next = &run.Scheduled
	}
	return readiness{next: next, ready: true, reason: v1alpha1.ReasonScheduled,
		message: "the run at " + run.Scheduled.UTC().Format(time.RFC3339) + " did not start and is retried"}
}

// starting is r while a claimed run's Job is being created: status
// announces that run until its Job exists, so that whoever creates it
// (the claimer, or the next leader if the claimer died) finds it due.
func (r readiness) starting(run *Run) readiness {
	next := r.next
	if next == nil || run.Scheduled.Before(*next) {
		next = &run.Scheduled
	}
	return readiness{next: next, ready: true, reason: v1alpha1.ReasonScheduled,
		message: "the run at " + run.Scheduled.UTC().Format(time.RFC3339) + " is starting"}
}

// write records r in status: the one place that sets the Ready condition
// and status.nextScheduleTime.
func (r readiness) write(status *v1alpha1.ScheduledJobStatus, generation int64, now time.Time) {
	status.NextScheduleTime = nil
	if r.next != nil {
		status.NextScheduleTime = timeAt(*r.next)
	}
	setCondition(status, generation, now, v1alpha1.ConditionReady, r.conditionStatus(), r.reason, r.message)
}
