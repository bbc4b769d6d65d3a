package main

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// liveObject matches an argument naming a ScheduledJob (sj/NAME) rather
// than a schedule: no schedule has a kind before a slash and no space.
var liveObject = regexp.MustCompile(`^(?i:sj|scheduledjobs?(\.ontime\.dev)?)/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// explainScheduledJob explains a live ScheduledJob at now: its schedule as
// the controller runs it (its placement under a Balanced spread, its time
// zone and daylight-saving policy), its next runs, and its warm-up's lead
// as the controller chose it (status.warmUp.lead, status.nextWarmUpTime),
// and where its recent runs' lateness went (status.recentRunStarts).
func explainScheduledJob(sj *v1alpha1.ScheduledJob, at time.Time) (explanation, error) {
	m, err := meaningOfLive(sj)
	if err != nil {
		return explanation{}, err
	}
	e := explanation{ScheduledJob: sj.Namespace + "/" + sj.Name, TimeZone: m.Location.String()}
	if m.Scheduled() {
		e.Description = m.Describe()
	} else {
		e.Description = "Once, at " + m.RunAt.In(m.Location).Format(time.RFC3339)
	}
	for _, t := range nextRuns(sj, m, at, 5) {
		e.Next = append(e.Next, explainedRun{Run: t.Format(time.RFC3339), Weekday: t.Format("Mon")})
	}
	if w := m.WarmUp; w != nil {
		explainLead(&e, sj, w, m.Location)
	}
	e.RecentRuns = explainStarts(sj, m)
	return e, nil
}

// nextRuns are a live ScheduledJob's next runs after from, at most count,
// in its time zone: anchored where the controller anchors them (the last
// scheduled run, else the creation), so @every and runAt read as it runs
// them.
func nextRuns(sj *v1alpha1.ScheduledJob, m v1alpha1.Meaning, from time.Time, count int) []time.Time {
	var last *time.Time
	if sj.Status.LastScheduleTime != nil {
		last = &sj.Status.LastScheduleTime.Time
	}
	runs := m.RunsSince(sj.CreationTimestamp.Time, last)
	var times []time.Time
	for t := from; len(times) < count; {
		if t = runs.Next(t); t.IsZero() {
			break
		}
		times = append(times, t.In(m.Location))
	}
	return times
}

// meaningOfLive reads a live ScheduledJob as the controller does: with its
// recorded placement under a Balanced spread.
func meaningOfLive(sj *v1alpha1.ScheduledJob) (v1alpha1.Meaning, error) {
	m, err := sj.Meaning(v1alpha1.PlacementChoices(sj.RecordedPlacement()))
	if err != nil {
		return v1alpha1.Meaning{}, cli.Input(fmt.Errorf("scheduledjob %s/%s: %w", sj.Namespace, sj.Name, err))
	}
	return m, nil
}

// getScheduledJob reads the ScheduledJob arg names (sj/NAME).
func getScheduledJob(ctx context.Context, cluster *cli.ClusterFlags, arg string) (*v1alpha1.ScheduledJob, error) {
	name, err := scheduledJobName(arg)
	if err != nil {
		return nil, err
	}
	c, ns, err := cluster.Client()
	if err != nil {
		return nil, err
	}
	sj := &v1alpha1.ScheduledJob{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sj); err != nil {
		return nil, err
	}
	return sj, nil
}

// explainLead says how the next warm-up's lead is chosen, and when each
// coming run's warm-up begins where that is known: for every run with a
// fixed lead; under lead Auto for the next one only (status.nextWarmUpTime;
// later ones are learned from it).
func explainLead(e *explanation, sj *v1alpha1.ScheduledJob, w *v1alpha1.WarmUpSettings, loc *time.Location) {
	if !w.AutoLead {
		e.Lead = w.Lead.String()
		for i := range e.Next {
			run, _ := time.Parse(time.RFC3339, e.Next[i].Run)
			e.Next[i].WarmUp = warmUpStart(run, w.Lead).In(loc).Format(time.RFC3339)
		}
		return
	}
	e.Lead = fmt.Sprintf("Auto, from %s to %s", w.MinLead, w.MaxLead)
	next := sj.Status.NextWarmUpTime
	if next != nil && len(e.Next) > 0 {
		e.Next[0].WarmUp = next.In(loc).Format(time.RFC3339)
	}
	last := sj.Status.WarmUp
	switch {
	case last == nil || last.Lead == nil:
		e.LeadChoice = fmt.Sprintf("nothing measured yet: the first warm-up begins maxLead (%s) ahead", w.MaxLead)
	case last.Lead.Provisioning != nil:
		e.LeadChoice = fmt.Sprintf("the warm-up for %s began %s ahead (%s: provisioning %s × %d %%)",
			last.ScheduledTime.In(loc).Format(time.RFC3339), last.Lead.Lead.Duration, last.Lead.Reason, last.Lead.Provisioning.Duration, last.Lead.MarginPercent)
	default:
		e.LeadChoice = fmt.Sprintf("the warm-up for %s began %s ahead (%s)", last.ScheduledTime.In(loc).Format(time.RFC3339), last.Lead.Lead.Duration, last.Lead.Reason)
	}
	if last != nil && last.Lead != nil && last.Lead.SharedFrom != "" {
		e.LeadChoice += ", learned from " + last.Lead.SharedFrom + " (its pods land on the same nodes)"
	}
}
