package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BackfillSpec says which past runs of a ScheduledJob to run now. It cannot
// be changed once created: delete the Backfill and create another.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a Backfill's spec cannot be changed; delete it and create another"
// +kubebuilder:validation:XValidation:rule="self.to >= self.from",message="spec.to must not be before spec.from"
type BackfillSpec struct {
	// scheduledJobName is the ScheduledJob, in the Backfill's namespace,
	// whose runs are backfilled. Its schedule (or schedules), time zone,
	// H values and Job template are read when each run starts; a runAt or
	// @every ScheduledJob has no times to backfill.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ScheduledJobName string `json:"scheduledJobName"`

	// from is the earliest scheduled time backfilled (RFC 3339), included.
	From metav1.Time `json:"from"`

	// to is the latest scheduled time backfilled (RFC 3339), included. It
	// must be in the past when the Backfill is created: later times are
	// the live schedule's. A time the live schedule has not passed yet
	// (status.nextScheduleTime, which a catch-up holds in the past) waits
	// until it has.
	To metav1.Time `json:"to"`

	// maxActive is how many of the backfill's runs may be active at once
	// (1, the default, runs them one after another, oldest first). The
	// ScheduledJob's own runs do not count, and are never held back by a
	// backfill: under concurrencyPolicy Forbid or Replace, or with
	// spec.maxActive, a backfill run starts only while none of the
	// ScheduledJob's own runs is active.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	MaxActive int32 `json:"maxActive,omitempty"`

	// redo says which times run again. Missing (the default) runs the
	// times with no Job of their name (ontime names a run's Job after its
	// time: a time whose Job the history limits deleted counts as
	// missing); Failed also reruns the times whose Job failed (the failed
	// Job is deleted first); All reruns every time, deleting its finished
	// Job first and waiting for an active one to finish.
	// +kubebuilder:validation:Enum=Missing;Failed;All
	// +kubebuilder:default=Missing
	// +optional
	Redo BackfillRedo `json:"redo,omitempty"`
}

// BackfillRedo says which times a Backfill runs again.
type BackfillRedo string

const (
	// RedoMissing runs the times that have no Job.
	RedoMissing BackfillRedo = "Missing"
	// RedoFailed runs the times that have no Job or a failed one.
	RedoFailed BackfillRedo = "Failed"
	// RedoAll runs every time.
	RedoAll BackfillRedo = "All"
)

// BackfillStatus is a Backfill's progress. Only the controller writes it,
// each write conditional on the resourceVersion it planned from: a time is
// claimed here (listed in active, without a UID, next moved past it)
// before its Job is created, so that no two writers start it.
type BackfillStatus struct {
	// next is the earliest time not yet started nor skipped: every earlier
	// time has been. Unset before the first write and once every time has.
	// +optional
	Next *metav1.Time `json:"next,omitempty"`

	// active are the runs started and not yet finished: a Job name with
	// the Job's UID, or without one while its Job is being created.
	// +listType=atomic
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// activeCount is how many runs active lists.
	// +optional
	ActiveCount int32 `json:"activeCount,omitempty"`

	// total is how many times lie from spec.from to spec.to.
	// +optional
	Total int32 `json:"total,omitempty"`

	// started is how many runs the backfill started (created a Job for).
	// +optional
	Started int32 `json:"started,omitempty"`

	// skipped is how many times were not run: their Job existed and redo
	// did not ask for it again.
	// +optional
	Skipped int32 `json:"skipped,omitempty"`

	// succeeded is how many of the runs started succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// failed is how many of the runs started failed, or whose Job was
	// deleted (by hand, or by its ttlSecondsAfterFinished) before the
	// backfill saw it finish.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// done is started-and-finished plus skipped, out of total: "12/1000".
	// +optional
	Done string `json:"done,omitempty"`

	// completionTime is when every time had been run or skipped and every
	// run had finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// conditions: Complete (True once every time is done) and Progressing
	// (False, with the reason, while the backfill waits: Suspended,
	// ScheduledJobNotFound, ScheduleNotBackfillable, WaitingForLiveRun,
	// WaitingForLiveSchedule).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Backfill conditions, their reasons, and the events of a backfill. A
// complete backfill says ReasonCompleted, one whose ScheduledJob is
// suspended ReasonSuspended, as a ScheduledJob does.
const (
	BackfillComplete    = "Complete"
	BackfillProgressing = "Progressing"

	ReasonBackfilling            = "Backfilling"
	ReasonScheduledJobNotFound   = "ScheduledJobNotFound"
	ReasonNotBackfillable        = "ScheduleNotBackfillable"
	ReasonWaitingForLiveRun      = "WaitingForLiveRun"
	ReasonWaitingForLiveSchedule = "WaitingForLiveSchedule"
	ReasonBackfillTooManyTimes   = "TooManyTimes"
	ReasonBackfillCompleted      = "BackfillCompleted"
)

// BackfillLabel is on every Job a Backfill creates; its value is the
// Backfill's name.
const BackfillLabel = "ontime.dev/backfill"

// BackfillMaxTimes is the most times one Backfill may cover.
const BackfillMaxTimes = 100000

// Backfill runs the past times of a ScheduledJob's schedule from spec.from
// to spec.to, oldest first, as the ScheduledJob's Jobs would have run
// (`ontime backfill sj/NAME --from T1 --to T2` creates one). The controller
// carries it out, across its own restarts and failovers, and starts each
// time at most once: its Job has the name a scheduled run of that time has,
// so a time that has a Job is not run again unless spec.redo asks.
// Deleting the Backfill stops it and deletes its Jobs (they are its
// dependents; `kubectl delete --cascade=orphan` keeps them running).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=all
// +kubebuilder:printcolumn:name="ScheduledJob",type=string,JSONPath=`.spec.scheduledJobName`
// +kubebuilder:printcolumn:name="From",type=string,JSONPath=`.spec.from`
// +kubebuilder:printcolumn:name="To",type=string,JSONPath=`.spec.to`
// +kubebuilder:printcolumn:name="Done",type=string,JSONPath=`.status.done`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.activeCount`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failed`
// +kubebuilder:printcolumn:name="Complete",type=string,JSONPath=`.status.conditions[?(@.type=="Complete")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Progressing")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Backfill struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which past runs of a ScheduledJob to run now, how many at
	// once, and which times that have a Job to run again. It cannot be
	// changed once created.
	Spec BackfillSpec `json:"spec"`
	// status is the backfill's progress.
	// +optional
	Status BackfillStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BackfillList is a list of Backfills.
type BackfillList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Backfill `json:"items"`
}

func init() {
	register(&Backfill{}, &BackfillList{})
}
