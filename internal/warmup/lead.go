package warmup

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Margins of an Auto lead over the measured provisioning time, in percent:
// it starts at initialMargin, grows by lateStep points after a late run up
// to maxMargin, and shrinks by a tenth after each run on time (give node
// time back slowly) down to minMargin. A late run's own measurement
// already carries the longer delay into the lead; the margin grows only by
// a step, for the variance the late run revealed. (Growing it by half, as
// before, counted the delay twice: leads of 1.5× the new delay for several
// runs, which cost what the shorter leads saved.)
const (
	initialMargin = 125
	minMargin     = 120
	maxMargin     = 300
	lateStep      = 25
)

// capacityInPlace is how soon after its start a warm-up is ready when it
// found its capacity in place (a node left from an earlier run, not yet
// consolidated): placing a pod takes a second or two, provisioning a node
// tens of seconds at least. Such a warm-up says nothing of provisioning,
// and learning from it would shrink the lead to minLead and make the next
// run, which may need a new node, late.
const capacityInPlace = 10 * time.Second

// ChooseLead says which lead the next warm-up uses at now and why: the
// fixed lead; or, under lead Auto, one learned from the last warm-up
// (status.warmUp) and its run's start (status.lastRunStart). A warm-up
// whose run has not come yet keeps the lead it began with, so the choice
// changes once per run, never during a warm-up; the first warm-up uses
// maxLead.
func ChooseLead(opts Options, last *v1alpha1.WarmUpStatus, lastStart *v1alpha1.RunStart, now time.Time) v1alpha1.LeadStatus {
	if !opts.AutoLead {
		return v1alpha1.LeadStatus{Lead: metav1.Duration{Duration: opts.Lead}, Reason: v1alpha1.LeadFixed}
	}
	if last == nil || last.Lead == nil || last.Lead.Reason == v1alpha1.LeadFixed {
		return v1alpha1.LeadStatus{Lead: metav1.Duration{Duration: opts.MaxLead}, Reason: v1alpha1.LeadFirstRun}
	}
	previous := *last.Lead
	provisioning, late, judged := measuredProvisioning(last, lastStart, now)
	if !judged || (!late && provisioning < capacityInPlace) {
		return bounded(previous, opts)
	}
	margin := previous.MarginPercent
	if margin == 0 {
		margin = initialMargin
	}
	if late {
		margin = min(margin+lateStep, maxMargin)
	} else {
		margin = max(margin*9/10, minMargin)
	}
	chosen := v1alpha1.LeadStatus{Lead: previous.Lead, Reason: v1alpha1.LeadLearned, Provisioning: previous.Provisioning, MarginPercent: margin}
	switch {
	case provisioning > 0:
		chosen.Provisioning = &metav1.Duration{Duration: provisioning}
		chosen.Lead.Duration = (provisioning * time.Duration(margin) / 100).Round(time.Second)
	case late:
		// Late, and how late is not known yet: grow what was used by
		// half, to cover a delay that grew at once.
		chosen.Lead.Duration = previous.Lead.Duration * 3 / 2
	}
	return bounded(chosen, opts)
}

// measuredProvisioning reads, from a warm-up whose run has come (judged),
// how long its capacity took: warm-up start to ready; for a run that
// started before its capacity was seen ready, warm-up start to the run's
// start (at least that long), once the run's start is measured.
func measuredProvisioning(last *v1alpha1.WarmUpStatus, lastStart *v1alpha1.RunStart, now time.Time) (provisioning time.Duration, late, judged bool) {
	started := last.StartTime.Time
	switch {
	case last.Late && last.ReadyTime != nil:
		return last.ReadyTime.Sub(started), true, true
	case last.Late:
		if lastStart != nil && lastStart.ScheduledTime.Time.Equal(last.ScheduledTime.Time) {
			return lastStart.StartTime.Sub(started), true, true
		}
		return 0, true, true
	case last.ReadyTime != nil && !last.ReadyTime.After(last.ScheduledTime.Time) && !now.Before(last.ScheduledTime.Time):
		// Ready in time, and the run's time has come: on time.
		return last.ReadyTime.Sub(started), false, true
	}
	return 0, false, false
}

// bounded keeps a lead within minLead and maxLead, and says so.
func bounded(lead v1alpha1.LeadStatus, opts Options) v1alpha1.LeadStatus {
	switch {
	case lead.Lead.Duration < opts.MinLead:
		lead.Lead.Duration, lead.Reason = opts.MinLead, v1alpha1.LeadAtMin
	case lead.Lead.Duration > opts.MaxLead:
		lead.Lead.Duration, lead.Reason = opts.MaxLead, v1alpha1.LeadAtMax
	}
	return lead
}
