package warmup

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Admission is when a concurrency group predicts a member's runs start,
// for warm-up (Input.NextAdmission, CurrentWaits, CurrentAdmission).
type Admission struct {
	Next         time.Time
	CurrentWaits bool
	Current      time.Time
}

// PredictAdmission reads, from the status of the member's concurrency
// group (nil: not read, or not there), when its next run would start if it
// joined the queue now, and, from the current run's Job, whether that run
// waits in the group (suspended by it) and when the group predicts it
// starts, or, once released, when it started. A Job the group marked
// missed neither waits nor starts.
func PredictAdmission(group *v1alpha1.ConcurrencyGroupStatus, current *batchv1.Job) Admission {
	var a Admission
	if group != nil && group.NewRunAdmission != nil {
		a.Next = group.NewRunAdmission.Time
	}
	if current == nil {
		return a
	}
	if _, _, member := v1alpha1.GroupOf(current); !member {
		return a
	}
	if _, missed := v1alpha1.MissedInGroup(current); missed {
		return a
	}
	if current.Spec.Suspend == nil || !*current.Spec.Suspend {
		if current.Status.StartTime != nil {
			a.Current = current.Status.StartTime.Time
		}
		return a
	}
	a.CurrentWaits = true
	if group == nil {
		return a
	}
	for _, run := range group.Queue {
		if run.Namespace == current.Namespace && run.Name == current.Name {
			if run.PredictedAdmission != nil {
				a.Current = run.PredictedAdmission.Time
			}
			return a
		}
	}
	// Not listed: a run just created, that joins behind every waiting run
	// (or one past the first MaxQueueListed, near the back).
	a.Current = a.Next
	return a
}
