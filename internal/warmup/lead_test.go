package warmup

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

func autoLead(minLead, maxLead time.Duration) Options {
	w := &v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}, MinLead: &metav1.Duration{Duration: minLead}, MaxLead: &metav1.Duration{Duration: maxLead}}
	return w.Settings()
}

// simulatedRun is one run under a provisioning delay: warm-up begins lead
// before T, the capacity is ready delay after that; a run whose capacity
// comes after T starts when it comes (its pods wait for the node).
type simulatedRun struct {
	lead, delay time.Duration
	late        bool
	// held is the node time spent before the run: from the capacity
	// ready to the run's start.
	held time.Duration
}

// simulate runs a ScheduledJob with lead Auto through runs with the given
// provisioning delays, as the planner would: ChooseLead before each
// warm-up, from the status the last one left.
func simulate(opts Options, delays []time.Duration) []simulatedRun {
	var last *v1alpha1.WarmUpStatus
	var lastStart *v1alpha1.RunStart
	runs := make([]simulatedRun, 0, len(delays))
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for _, delay := range delays {
		at = at.Add(time.Hour)
		lead := ChooseLead(opts, last, lastStart, at.Add(-time.Hour+time.Minute))
		start := at.Add(-lead.Lead.Duration)
		ready := start.Add(delay)
		state := &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(at), StartTime: metav1.NewTime(start), Lead: &lead}
		run := simulatedRun{lead: lead.Lead.Duration, delay: delay}
		runStart := at
		if ready.After(at) {
			// Placeholders lose their node to the run's pods: readyTime
			// is never recorded, the run starts when the node comes.
			state.Late, run.late, runStart = true, true, ready
		} else {
			state.ReadyTime = &metav1.Time{Time: ready}
			run.held = at.Sub(ready)
		}
		last = state
		lastStart = &v1alpha1.RunStart{ScheduledTime: metav1.NewTime(at), StartTime: metav1.NewTime(runStart), Lateness: metav1.Duration{Duration: runStart.Sub(at)}}
		runs = append(runs, run)
	}
	return runs
}

// TestAutoLeadAdapts: the provisioning delay goes 60 s → 120 s → 30 s.
// After at most 3 runs of each delay, the lead is at most 1.5 times it
// and runs are on time; the node time spent before runs is below that of
// the fixed lead that covers the worst delay (120 s). The first run uses
// maxLead.
func TestAutoLeadAdapts(t *testing.T) {
	delays := []time.Duration{}
	for _, d := range []time.Duration{60 * time.Second, 120 * time.Second, 30 * time.Second} {
		for range 4 {
			delays = append(delays, d)
		}
	}
	runs := simulate(autoLead(30*time.Second, 3*time.Minute), delays)
	if runs[0].lead != 3*time.Minute {
		t.Errorf("first lead %v, want maxLead 3m", runs[0].lead)
	}
	var held, fixedHeld time.Duration
	for i, r := range runs {
		t.Logf("run %2d: delay %4v lead %5v late %-5v held %v", i+1, r.delay, r.lead, r.late, r.held)
		held += r.held
		fixedHeld += 120*time.Second - r.delay
		changed := i == 0 || runs[i-1].delay != r.delay
		sinceChange := 0
		for j := i; j > 0 && runs[j-1].delay == r.delay; j-- {
			sinceChange++
		}
		if !changed && sinceChange >= 3 && (r.late || r.lead > r.delay*3/2) {
			t.Errorf("run %d, %d runs after the delay became %v: lead %v late %v; want at most %v and on time", i+1, sinceChange, r.delay, r.lead, r.late, r.delay*3/2)
		}
	}
	if held >= fixedHeld {
		t.Errorf("node time before runs %v, want below the fixed 120s lead's %v", held, fixedHeld)
	}
	t.Logf("node time before runs: %v with lead Auto, %v with a fixed 120s lead", held, fixedHeld)
}

func TestChooseLead(t *testing.T) {
	opts := autoLead(30*time.Second, 10*time.Minute)
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	learned := &v1alpha1.LeadStatus{Lead: metav1.Duration{Duration: 90 * time.Second}, Reason: v1alpha1.LeadLearned, MarginPercent: 150,
		Provisioning: &metav1.Duration{Duration: time.Minute}}
	warm := func(lead time.Duration, ready *time.Duration, late bool) *v1alpha1.WarmUpStatus {
		s := &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(at), StartTime: metav1.NewTime(at.Add(-lead)), Lead: learned.DeepCopy(), Late: late}
		if ready != nil {
			s.ReadyTime = &metav1.Time{Time: at.Add(-lead + *ready)}
		}
		return s
	}
	startedAt := func(late time.Duration) *v1alpha1.RunStart {
		return &v1alpha1.RunStart{ScheduledTime: metav1.NewTime(at), StartTime: metav1.NewTime(at.Add(late))}
	}
	d := func(x time.Duration) *time.Duration { return &x }
	tests := map[string]struct {
		opts      Options
		last      *v1alpha1.WarmUpStatus
		lastStart *v1alpha1.RunStart
		lead      time.Duration
		reason    string
		margin    int32
	}{
		"fixed":                               {opts: (&v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(5 * time.Minute)}).Settings(), lead: 5 * time.Minute, reason: v1alpha1.LeadFixed},
		"first run: maxLead":                  {opts: opts, lead: 10 * time.Minute, reason: v1alpha1.LeadFirstRun},
		"the run has not come: unchanged":     {opts: opts, last: warm(90*time.Second, d(time.Minute), false), lead: 90 * time.Second, reason: v1alpha1.LeadLearned, margin: 150},
		"capacity was in place: unchanged":    {opts: opts, last: warm(90*time.Second, d(2*time.Second), false), lastStart: startedAt(0), lead: 90 * time.Second, reason: v1alpha1.LeadLearned, margin: 150},
		"on time: the margin shrinks a tenth": {opts: opts, last: warm(90*time.Second, d(time.Minute), false), lastStart: startedAt(0), lead: 81 * time.Second, reason: v1alpha1.LeadLearned, margin: 135},
		"late, ready after T: a step more":    {opts: opts, last: warm(90*time.Second, d(100*time.Second), true), lastStart: startedAt(10 * time.Second), lead: 175 * time.Second, reason: v1alpha1.LeadLearned, margin: 175},
		"late, the run's start says how late": {opts: opts, last: warm(90*time.Second, nil, true), lastStart: startedAt(30 * time.Second), lead: 210 * time.Second, reason: v1alpha1.LeadLearned, margin: 175},
		"late, start not measured yet: ×1.5":  {opts: opts, last: warm(90*time.Second, nil, true), lead: 135 * time.Second, reason: v1alpha1.LeadLearned, margin: 175},
		"learned below minLead":               {opts: autoLead(2*time.Minute, 10*time.Minute), last: warm(90*time.Second, d(time.Minute), false), lastStart: startedAt(0), lead: 2 * time.Minute, reason: v1alpha1.LeadAtMin, margin: 135},
		"learned above maxLead":               {opts: autoLead(30*time.Second, 2*time.Minute), last: warm(90*time.Second, nil, true), lastStart: startedAt(30 * time.Second), lead: 2 * time.Minute, reason: v1alpha1.LeadAtMax, margin: 175},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			now := at.Add(-time.Second) // before the run: a warm-up in progress
			if tc.lastStart != nil {
				now = tc.lastStart.StartTime.Time
			}
			got := ChooseLead(tc.opts, tc.last, tc.lastStart, now)
			if got.Lead.Duration != tc.lead || got.Reason != tc.reason || got.MarginPercent != tc.margin {
				t.Errorf("lead %v (%s, margin %d%%), want %v (%s, margin %d%%)", got.Lead.Duration, got.Reason, got.MarginPercent, tc.lead, tc.reason, tc.margin)
			}
		})
	}
}
