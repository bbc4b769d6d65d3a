package warmup

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Group is what warm-up reads of the concurrency group an owner joins.
type Group struct {
	// Status holds the group's predictions; nil when the group was not
	// read (the owner has no warm-up, or joins no group) or is not there.
	Status *v1alpha1.ConcurrencyGroupStatus
	// Refuses says the group refuses the owner's runs: a
	// ClusterConcurrencyGroup whose spec.namespaceSelector does not
	// select the owner's namespace marks every run that waits in it
	// missed (docs/concurrency-groups.md), so no run of the owner is
	// coming for warm-up to prepare.
	Refuses bool
}

// Admission is when a concurrency group predicts a member's runs start,
// for warm-up (Input.NextAdmission, CurrentWaits, CurrentAdmission,
// GroupRefuses).
type Admission struct {
	Next         time.Time
	CurrentWaits bool
	Current      time.Time
	Refused      bool
}

// PredictAdmission reads, from the member's concurrency group, whether
// the group refuses its runs and, from the group's status (nil: not read,
// or not there), when its next run (its Job to be
// named next, in namespace) is predicted to start: as listed in the
// group's upcoming runs, else as a run that joined now; and, from the
// current run's Job, whether that run waits in the group (suspended by
// it) and when the group predicts it starts (its queue entry; a Job just
// created may still be listed as upcoming), or, once released, when it
// started. A Job the group marked missed neither waits nor starts.
func PredictAdmission(group Group, current *batchv1.Job, namespace, next string) Admission {
	a := Admission{Refused: group.Refuses}
	if group.Status != nil {
		a.Next = group.Status.PredictedAdmission(namespace, next)
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
	if group.Status != nil {
		a.Current = group.Status.PredictedAdmission(current.Namespace, current.Name)
	}
	return a
}
