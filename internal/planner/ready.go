package planner

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

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
