package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Spread says how the H fields of spec.schedule get their values.
type Spread struct {
	// strategy chooses the values of H fields. Hash (default) takes them
	// from a hash of the ScheduledJob's namespace/name, as Jenkins does:
	// each ScheduledJob keeps its own minute wherever it runs, but two may
	// hash to the same minute. Balanced lets ontime place each ScheduledJob
	// of the group, when it is created or its schedule changes, in the
	// minute and hour where the fewest others of the group start; once
	// placed it is never moved, except by an explicit rebalance (ontime
	// spread rebalance). See docs/spreading.md.
	// +kubebuilder:default=Hash
	// +optional
	Strategy SpreadStrategy `json:"strategy,omitempty"`

	// group names the ScheduledJobs balanced together, across all
	// namespaces. Default "default". A lowercase DNS label of at most 40
	// characters; ontime keeps the group's placements in a ConfigMap named
	// ontime-spread-<group> in the controller's namespace.
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Group string `json:"group,omitempty"`

	// weight is what one start of this ScheduledJob counts for when its
	// group is balanced: Starts (default) counts each start as one, so
	// the busiest minute has as few starts as possible; CPU counts the
	// CPU its run requests (each pod's effective request times the pods
	// that run at once), so the busiest minute asks for as little capacity
	// as possible.
	// +kubebuilder:default=Starts
	// +optional
	Weight SpreadWeight `json:"weight,omitempty"`

	// runDuration is how long this ScheduledJob's runs last, for a
	// Balanced spread: each run then counts in every minute from its start
	// until runDuration later, not only in the minute it starts, so the
	// group is balanced by the runs in flight at once. That is what a
	// concurrency group's maxActive caps: give the members of one
	// concurrency group one spread group and their typical run durations
	// (the concurrency group's status.typicalRunDuration is a start), and
	// their runs wait less (docs/spreading.md#concurrency-groups). Rounded
	// up to whole minutes; above 0 and at most 24h. Read when the
	// ScheduledJob is placed; a change is recorded for the others'
	// placements without moving this one (ontime spread rebalance moves
	// it). Unset: a run counts in the minute it starts.
	// +optional
	RunDuration *metav1.Duration `json:"runDuration,omitempty"`
}

// MaxSpreadRunDuration bounds spec.spread.runDuration: the balancer counts
// minutes of one day.
const MaxSpreadRunDuration = 24 * time.Hour

// SpanMinutes is how many minutes of the day one run counts in when its
// group is balanced: spec.spread.runDuration rounded up to whole minutes,
// at least 1 (its start's minute) and at most a day.
func (s Spread) SpanMinutes() int {
	if s.RunDuration == nil || s.RunDuration.Duration <= 0 {
		return 1
	}
	minutes := (min(s.RunDuration.Duration, MaxSpreadRunDuration) + time.Minute - 1) / time.Minute
	return int(minutes)
}

// SpreadStrategy chooses the values of H fields.
// +kubebuilder:validation:Enum=Hash;Balanced
type SpreadStrategy string

const (
	// SpreadHash takes H values from a hash of namespace/name.
	SpreadHash SpreadStrategy = "Hash"
	// SpreadBalanced places each ScheduledJob of a group where the fewest
	// others start.
	SpreadBalanced SpreadStrategy = "Balanced"
)

// SpreadWeight is what one start counts for when balancing.
// +kubebuilder:validation:Enum=Starts;CPU
type SpreadWeight string

const (
	// WeightStarts counts each start as one.
	WeightStarts SpreadWeight = "Starts"
	// WeightCPU counts the CPU a run requests.
	WeightCPU SpreadWeight = "CPU"
)

// DefaultSpreadGroup is the group of a Balanced spread that names none.
const DefaultSpreadGroup = "default"

// SpreadStatus is where a Balanced spread placed the ScheduledJob.
type SpreadStatus struct {
	// group is the group it was placed in.
	Group string `json:"group"`
	// schedule is the schedule the placement is for: spec.schedule when
	// it was placed. A changed schedule is placed anew.
	Schedule string `json:"schedule"`
	// choices are the values taken by the schedule's H terms, in order,
	// each counted from the start of the term's range.
	// +listType=atomic
	Choices []int `json:"choices"`
	// epoch counts the group's rebalances; a placement from an earlier
	// epoch than the group's is replaced by the group's.
	Epoch int64 `json:"epoch"`
}

// SpreadOf returns the spread settings, with defaults filled in.
func (sj *ScheduledJob) SpreadOf() Spread {
	spread := Spread{Strategy: SpreadHash, Group: DefaultSpreadGroup, Weight: WeightStarts}
	if s := sj.Spec.Spread; s != nil {
		if s.Strategy != "" {
			spread.Strategy = s.Strategy
		}
		if s.Group != "" {
			spread.Group = s.Group
		}
		if s.Weight != "" {
			spread.Weight = s.Weight
		}
		spread.RunDuration = s.RunDuration
	}
	return spread
}
