package v1alpha1

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LeadAuto is the value of spec.warmUp.lead that asks ontime to learn the
// lead from the capacity-ready times it measures.
const LeadAuto = "Auto"

// Lead is how long before each run warm-up begins: a duration, or Auto.
// It is written as a string, "10m" or "Auto".
// +kubebuilder:validation:Type=string
type Lead struct {
	// Duration is the lead when it is not Auto.
	metav1.Duration `json:"-"`
	// Auto is set for "Auto".
	Auto bool `json:"-"`
}

// FixedLead is a lead of d.
func FixedLead(d time.Duration) Lead { return Lead{Duration: metav1.Duration{Duration: d}} }

// MarshalJSON writes "Auto" or the duration.
func (l Lead) MarshalJSON() ([]byte, error) {
	if l.Auto {
		return json.Marshal(LeadAuto)
	}
	return l.Duration.MarshalJSON()
}

// UnmarshalJSON reads "Auto" or a duration such as "10m".
func (l *Lead) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("lead: want a duration such as \"10m\", or \"Auto\": %w", err)
	}
	if s == LeadAuto {
		*l = Lead{Auto: true}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("lead %q: want a duration such as \"10m\", or \"Auto\"", s)
	}
	*l = FixedLead(d)
	return nil
}

// String is how the lead is written.
func (l Lead) String() string {
	if l.Auto {
		return LeadAuto
	}
	return l.Duration.Duration.String()
}

// Bounds of an Auto lead, unless spec.warmUp.minLead and maxLead say
// otherwise.
const (
	DefaultMinLead = 30 * time.Second
	DefaultMaxLead = 30 * time.Minute
)

// Reasons a lead was chosen (LeadStatus.Reason).
const (
	// LeadFixed: spec.warmUp.lead is a duration.
	LeadFixed = "Fixed"
	// LeadFirstRun: nothing measured yet; the first warm-up uses maxLead.
	LeadFirstRun = "FirstRun"
	// LeadLearned: the last measured provisioning time times the margin.
	LeadLearned = "Learned"
	// LeadAtMin and LeadAtMax: what was learned, bounded by minLead or
	// maxLead.
	LeadAtMin = "AtMinLead"
	LeadAtMax = "AtMaxLead"
)

// LeadStatus is the lead a warm-up used and how it was chosen.
type LeadStatus struct {
	// lead is the lead this warm-up began with.
	Lead metav1.Duration `json:"lead"`

	// reason says how it was chosen: Fixed (spec.warmUp.lead is a
	// duration), FirstRun (lead Auto, nothing measured yet: maxLead),
	// Learned (the last measured provisioning time times the margin),
	// AtMinLead or AtMaxLead (that, bounded).
	Reason string `json:"reason"`

	// provisioning is the provisioning time it was learned from: from the
	// last warm-up's start to its capacity ready, or to its run's start
	// when the run started before the capacity was seen ready.
	// +optional
	Provisioning *metav1.Duration `json:"provisioning,omitempty"`

	// marginPercent is the margin applied to provisioning, in percent: it
	// starts at 125, grows by 25 after a late run (up to 300) and shrinks
	// by a tenth after each run on time (down to 120).
	// +optional
	MarginPercent int32 `json:"marginPercent,omitempty"`

	// sharedFrom names the ScheduledJob (namespace/name) whose warm-up
	// this lead was learned from, when it was another one whose pods land
	// on the same nodes (the same nodeSelector, required node affinity,
	// tolerations and extended resources) and whose measurement was newer
	// than this one's own.
	// +optional
	SharedFrom string `json:"sharedFrom,omitempty"`
}
