package planner

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Two kinds of actor start runs: the leader, and the standby of every
// replica (internal/controller/standby), which starts a run the leader has
// not started a moment after its time. A run's Job has a name fixed by the
// run, so a second create of it fails with AlreadyExists while the Job
// exists. What this file decides keeps that enough (docs/reliability.md,
// "Exactly once"):
//
//   - The standby starts a run only within its window (StandbyUntil), and
//     no run's Job is deleted for history before the window has closed and
//     RequestBound more has passed (historyFence). A standby's create
//     therefore lands while the run's Job, if it was ever created, still
//     exists, whatever its cache showed.
//   - A run under an active limit (Forbid, maxActive) is claimed before
//     its Job is created:
//     a status write, conditional on the resourceVersion the run was
//     planned from, lists it in status.active by name, without a UID. Two
//     actors cannot both claim runs from the same status, so runs past
//     the limit are never started side by side, even by actors whose
//     caches are behind.

// RequestBound is the longest a request may take from the moment its
// sender decided to send it (reading its clock) to the moment the API
// server carries it out, clock differences between replicas included: the
// same kind of bound leader election's lease duration assumes, and equal
// to it.
const RequestBound = 15 * time.Second

// StandbyWindow is how long after its time the standby may start a run
// whose leader has not: long enough for a takeover (the Lease's 15 s and a
// retry) and an outage of half a minute across the run's time; beyond it
// the leader starts the run when there is one again.
const StandbyWindow = 45 * time.Second

// standbyUntil is when the standby stops trying to start the run at t: the
// window, ending RequestBound before the next run at the latest, when a
// Replace run may delete this one's Job.
func standbyUntil(sched schedule, t time.Time) time.Time {
	until := t.Add(StandbyWindow)
	if sched == nil {
		return until
	}
	if next := sched.Next(t); !next.IsZero() && next.Add(-RequestBound).Before(until) {
		until = next.Add(-RequestBound)
	}
	return until
}

// historyFence is the earliest a run's Job may be deleted for history:
// once the standby can no longer be creating it. A Job that is not a
// scheduled run (a trigger's, one made by hand) has none.
func historyFence(sched schedule, job *batchv1.Job) time.Time {
	scheduled, ok := v1alpha1.ScheduledTime(job)
	if !ok || v1alpha1.IsTriggered(job) {
		return time.Time{}
	}
	return standbyUntil(sched, scheduled).Add(RequestBound)
}

// claimRef is the status.active entry of a claimed run: the Job's name,
// no UID yet.
func claimRef(job *batchv1.Job, name string) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: job.Namespace, Name: name}
}

// Claiming is sj with run claimed: status.active as sj has it plus the
// claim, set by the leader's one writer of status.active. A standby writes
// it, on condition that sj is still the version it read; its view of the
// Jobs, perhaps behind, changes nothing else.
func Claiming(sj *v1alpha1.ScheduledJob, run *Run) *v1alpha1.ScheduledJob {
	claimed := sj.DeepCopy()
	setActive(&claimed.Status, withClaim(sj.Status.Active, run.Job))
	return claimed
}

// isClaim reports whether a status.active entry is a claim: a run whose
// Job's creation was decided and may not have happened yet.
func isClaim(ref corev1.ObjectReference) bool { return ref.UID == "" }

// claimed reports whether status.active claims or lists the Job name.
func claimed(active []corev1.ObjectReference, name string) bool {
	for _, ref := range active {
		if ref.Name == name {
			return true
		}
	}
	return false
}

// claimMinute is the scheduled minute a scheduled run's claim names (its
// Job name ends in minutes since the epoch); false for a trigger's.
func claimMinute(sj *v1alpha1.ScheduledJob, name string) (time.Time, bool) {
	return v1alpha1.RunTimeOfJobName(sj.Name, name)
}
