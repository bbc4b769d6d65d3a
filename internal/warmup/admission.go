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
// group (nil: not read, or not there), when its next run (its Job to be
// named next, in namespace) is predicted to start: as listed in the
// group's upcoming runs, else as a run that joined now; and, from the
// current run's Job, whether that run waits in the group (suspended by
// it) and when the group predicts it starts (its queue entry; a Job just
// created may still be listed as upcoming), or, once released, when it
// started. A Job the group marked missed neither waits nor starts.
func PredictAdmission(group *v1alpha1.ConcurrencyGroupStatus, current *batchv1.Job, namespace, next string) Admission {
	var a Admission
	if group != nil {
		a.Next = predicted(group, namespace, next)
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
	if group != nil {
		a.Current = predicted(group, current.Namespace, current.Name)
	}
	return a
}

// predicted is the group's prediction for the run whose Job is (or will
// be) namespace/name: its entry in the queue, else in the upcoming runs,
// else as a run that joined now (zero: none).
func predicted(group *v1alpha1.ConcurrencyGroupStatus, namespace, name string) time.Time {
	for _, runs := range [][]v1alpha1.QueuedRun{group.Queue, group.Upcoming} {
		for _, run := range runs {
			if run.Namespace == namespace && run.Name == name {
				if run.PredictedAdmission == nil {
					return time.Time{}
				}
				return run.PredictedAdmission.Time
			}
		}
	}
	if group.NewRunAdmission != nil {
		return group.NewRunAdmission.Time
	}
	return time.Time{}
}
