package planner

import (
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// The status's writers. Each field of ScheduledJobStatus, and each
// condition, is set by one function, here or in ready.go (Ready and
// nextScheduleTime) and capacity.go (CapacityReady); the steps that decide
// return values, and Compute and Finish hand them to these.
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

// setCondition sets a condition and reports whether its status, reason or
// message changed. Only the writers of Ready and CapacityReady call it.
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
