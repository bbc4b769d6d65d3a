package v1alpha1

import (
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StartObjective says what share of a ScheduledJob's runs should start
// within a time of their scheduled time, over a window of days: "99 % of
// runs within 30 s, over 7 days". See docs/observability.md.
type StartObjective struct {
	// within is how late a run may start and still be on time: from its
	// scheduled time to its first container running, as
	// status.lastRunStart.lateness measures it, such as "30s" or "2m".
	Within metav1.Duration `json:"within"`

	// percent is the share of runs, in percent, that should be on time:
	// more than 0 and less than 100, with at most three decimals, such
	// as "99" or "99.5". A string, as Kubernetes APIs avoid floats.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,2}(\.[0-9]{1,3})?$`
	Percent string `json:"percent"`

	// windowDays is how many days of runs count towards the objective:
	// the current day (UTC) and the days before it. Defaults to 7.
	// +kubebuilder:default=7
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=31
	// +optional
	WindowDays int32 `json:"windowDays,omitempty"`
}

// DefaultObjectiveWindowDays is spec.startObjective.windowDays's default.
const DefaultObjectiveWindowDays = 7

// MaxObjectiveWindowDays bounds spec.startObjective.windowDays (the CRD's
// bound too), and so status.startObjective.days.
const MaxObjectiveWindowDays = 31

// Days returns the window in days, with its default.
func (o *StartObjective) Days() int {
	if o.WindowDays <= 0 {
		return DefaultObjectiveWindowDays
	}
	return int(o.WindowDays)
}

// Ratio returns percent as a ratio, 0.99 for "99", or an error naming the
// value when it is not a number strictly between 0 and 100.
func (o *StartObjective) Ratio() (float64, error) {
	p, err := strconv.ParseFloat(o.Percent, 64)
	if err != nil || !(p > 0 && p < 100) { // NaN is neither
		return 0, fmt.Errorf("percent %q must be a number more than 0 and less than 100, such as \"99\" or \"99.5\"", o.Percent)
	}
	return p / 100, nil
}

// String reads as the objective does in docs: "99% within 30s over 7d".
func (o *StartObjective) String() string {
	return fmt.Sprintf("%s%% within %s over %dd", o.Percent, o.Within.Duration, o.Days())
}

// OnTime reports whether a run that started lateness after its scheduled
// time met the objective.
func (o *StartObjective) OnTime(lateness time.Duration) bool {
	return lateness <= o.Within.Duration
}

// StartObjectiveStatus is how a ScheduledJob's runs met its
// spec.startObjective over its window.
type StartObjectiveStatus struct {
	// runs is how many runs of the window were counted, and onTime how
	// many of them started within spec.startObjective.within. A run is
	// counted once: when its start is measured (status.lastRunStart), when
	// it is reported missed (late), or when it has not started a minute
	// after within (late). Runs asked for by hand do not count.
	Runs   int32 `json:"runs"`
	OnTime int32 `json:"onTime"`

	// attainment is onTime over runs in percent, with two decimals, such
	// as "98.61". Unset while no run is counted.
	// +optional
	Attainment string `json:"attainment,omitempty"`

	// met is false when attainment is below spec.startObjective.percent;
	// true while no run is counted.
	Met bool `json:"met"`

	// days are the window's counts per day (UTC), newest first; days
	// without a counted run are left out.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=31
	Days []ObjectiveDay `json:"days,omitempty"`

	// countedThrough is the scheduled time of the latest run counted from
	// its Job: a run of a Job scheduled at or before it is not counted
	// again.
	// +optional
	CountedThrough *metav1.Time `json:"countedThrough,omitempty"`
}

// ObjectiveDay is one day's runs, as StartObjectiveStatus counts them.
type ObjectiveDay struct {
	// date is the day, UTC, as 2006-01-02.
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	Date string `json:"date"`

	// runs and onTime are that day's counts.
	Runs   int32 `json:"runs"`
	OnTime int32 `json:"onTime"`
}
