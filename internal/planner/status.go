package planner

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// setReady sets the Ready condition and reports whether its status, reason
// or message changed.
func (p *planning) setReady(ready bool, reason, message string) bool {
	return setReady(&p.plan.Status, p.sj.Generation, p.now, ready, reason, message)
}

func setReady(status *v1alpha1.ScheduledJobStatus, generation int64, now time.Time, ready bool, reason, message string) bool {
	conditionStatus := metav1.ConditionFalse
	if ready {
		conditionStatus = metav1.ConditionTrue
	}
	old := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady)
	changed := old == nil || old.Status != conditionStatus || old.Reason != reason || old.Message != message
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               v1alpha1.ConditionReady,
		Status:             conditionStatus,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now),
	})
	return changed
}

// RecordCreated adds a Job the reconciler created (or found already
// created and owned) to status; a scheduled run also moves
// lastScheduleTime.
func RecordCreated(status *v1alpha1.ScheduledJobStatus, job *batchv1.Job, scheduled time.Time) {
	if !isTriggered(job) {
		status.LastScheduleTime = later(status.LastScheduleTime, scheduled)
	}
	for _, ref := range status.Active {
		if ref.UID == job.UID {
			return
		}
	}
	status.Active = append(status.Active, refOf(job))
	status.ActiveCount = int32(len(status.Active))
}

// RecordDeleted removes a deleted Job from status.active.
func RecordDeleted(status *v1alpha1.ScheduledJobStatus, job *batchv1.Job) {
	kept := status.Active[:0]
	for _, ref := range status.Active {
		if ref.UID != job.UID {
			kept = append(kept, ref)
		}
	}
	status.Active = kept
	status.ActiveCount = int32(len(status.Active))
}

// RecordConflict records a run that could not start because a Job of its
// name exists and is not this ScheduledJob's. Upstream stops there without
// a requeue and stalls until something else changes; here the run counts as
// missed, Ready says why, and the next run is scheduled as usual (its Job
// name differs).
func RecordConflict(sj *v1alpha1.ScheduledJob, status *v1alpha1.ScheduledJobStatus, scheduled time.Time, jobName string, now time.Time) Event {
	status.LastMissedTime = later(status.LastMissedTime, scheduled)
	message := "job " + jobName + " already exists and is not controlled by this ScheduledJob; the run scheduled at " +
		scheduled.UTC().Format(time.RFC3339) + " did not start"
	setReady(status, sj.Generation, now, false, v1alpha1.ReasonJobNameConflict, message)
	return Event{Type: "Warning", Reason: ReasonJobNameConflict, Message: message}
}

func timeAt(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}
