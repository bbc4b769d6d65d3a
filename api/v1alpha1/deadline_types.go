package v1alpha1

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Deadline is when a ScheduledJob's run must have succeeded: a time after
// its scheduled time, or a time of day in the ScheduledJob's zone. See
// docs/observability.md.
type Deadline struct {
	// after is how long after its scheduled time a run must have
	// succeeded, such as "4h". Exactly one of after and at.
	// +optional
	After *metav1.Duration `json:"after,omitempty"`

	// at is the time of day, "HH:MM" in the ScheduledJob's time zone, by
	// which a run must have succeeded: the first such time after its
	// scheduled time ("07:00" for a run at 02:00 is 07:00 that day; for
	// a run at 23:00, 07:00 the next day). Exactly one of after and at.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +optional
	At string `json:"at,omitempty"`
}

// MaxDeadlineAfter bounds spec.deadline.after: a run is predicted and
// watched until its deadline, and a week is longer than any schedule's
// period ontime watches a run for.
const MaxDeadlineAfter = 7 * 24 * time.Hour

// For returns the deadline of the run scheduled at scheduled, in loc for
// at; false without a deadline (d nil) or when it is not understood (see
// Validate).
func (d *Deadline) For(scheduled time.Time, loc *time.Location) (time.Time, bool) {
	if d == nil {
		return time.Time{}, false
	}
	if d.After != nil {
		return scheduled.Add(d.After.Duration), d.After.Duration > 0
	}
	at, err := time.Parse("15:04", d.At)
	if err != nil {
		return time.Time{}, false
	}
	local := scheduled.In(loc)
	y, m, day := local.Date()
	deadline := time.Date(y, m, day, at.Hour(), at.Minute(), 0, 0, loc)
	for !deadline.After(scheduled) {
		day++
		deadline = time.Date(y, m, day, at.Hour(), at.Minute(), 0, 0, loc)
	}
	return deadline, true
}

// String reads as the deadline does in docs: "4h after its time" or "by
// 07:00".
func (d *Deadline) String() string {
	if d.After != nil {
		return fmt.Sprintf("%s after its time", d.After.Duration)
	}
	return "by " + d.At
}

// MaxRecentRunTimes is how many successful runs' times
// status.deadline.recentRunTimes keeps.
const MaxRecentRunTimes = 10

// DeadlineStatus is what the controller learned of a ScheduledJob's run
// times and what it predicts of its latest run, under spec.deadline.
type DeadlineStatus struct {
	// recentRunTimes are the times the latest successful runs took, from
	// their Job's start to its completion, newest first, at most 10.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	RecentRunTimes []metav1.Duration `json:"recentRunTimes,omitempty"`

	// typicalRunTime is the run time predictions use: the 90th
	// percentile of recentRunTimes (nearest rank: with 10, the second
	// longest), so that a run as slow as one in ten is predicted, and one
	// outlier is not. Unset until a run succeeded.
	// +optional
	TypicalRunTime *metav1.Duration `json:"typicalRunTime,omitempty"`

	// learnedThrough is the scheduled time of the latest run whose time
	// was learned: each run's time is learned once.
	// +optional
	LearnedThrough *metav1.Time `json:"learnedThrough,omitempty"`

	// scheduledTime is the run watched: the latest scheduled run, until
	// it succeeds. deadline is its deadline (the one its Job was made
	// under, annotation ontime.dev/deadline), and predictedFinish when it
	// is predicted to succeed, never in the past: while it has not
	// started, now (or when it may start) plus typicalRunTime; while it
	// runs, its start plus the 90th percentile of the learned runs that
	// took longer than it has run so far, and once it is slower than
	// every one of them, now plus what it has run (as long again). See
	// docs/observability.md.
	// +optional
	ScheduledTime *metav1.Time `json:"scheduledTime,omitempty"`
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`
	// +optional
	PredictedFinish *metav1.Time `json:"predictedFinish,omitempty"`

	// atRiskReported and missedReported are the scheduled times of the
	// latest runs reported at risk (event DeadlineAtRisk) and missed
	// (event DeadlineMissed): each run is reported once of each.
	// +optional
	AtRiskReported *metav1.Time `json:"atRiskReported,omitempty"`
	// +optional
	MissedReported *metav1.Time `json:"missedReported,omitempty"`
}
