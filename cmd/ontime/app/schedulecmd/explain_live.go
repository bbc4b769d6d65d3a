package schedulecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		explainLead(&e, sj.Status.WarmUp, sj.Status.NextWarmUpTime, w, m.Location)
	}
	owner := lateRunOwner{schedule: sj.Spec.Schedule, hashable: true, group: sj.Spec.ConcurrencyGroup, lastWarmUp: sj.Status.WarmUp}
	e.RecentRuns = explainStarts(recentStarts(sj.Status.RecentRunStarts, sj.Status.LastRunStart), owner, m)
	if d := sj.Spec.Deadline; d != nil {
		e.Deadline = &explainedDeadline{Deadline: d.String()}
		if c := meta.FindStatusCondition(sj.Status.Conditions, v1alpha1.ConditionDeadlineAtRisk); c != nil {
			e.Deadline.Reason, e.Deadline.Message = c.Reason, c.Message
		}
	}
	if o := sj.Spec.StartObjective; o != nil {
		e.StartObjective = &explainedObjective{Objective: o.String(), Met: true}
		if s := sj.Status.StartObjective; s != nil {
			e.StartObjective.Runs, e.StartObjective.OnTime, e.StartObjective.Attainment, e.StartObjective.Met = s.Runs, s.OnTime, s.Attainment, s.Met
		}
	}
	return e, nil
}

// nextRuns are a live ScheduledJob's next runs after from, at most count,
// in its time zone: anchored where the controller anchors them (the last
// scheduled run, else the creation), so @every and runAt read as it runs
// them.
func nextRuns(sj *v1alpha1.ScheduledJob, m v1alpha1.Meaning, from time.Time, count int) []time.Time {
	return runsAfter(m, sj.CreationTimestamp.Time, sj.Status.LastScheduleTime, from, count)
}

// runsAfter are an owner's next runs after from, at most count, in its
// time zone, anchored at its last scheduled run, else its creation.
func runsAfter(m v1alpha1.Meaning, created time.Time, lastSchedule *metav1.Time, from time.Time, count int) []time.Time {
	var last *time.Time
	if lastSchedule != nil {
		last = &lastSchedule.Time
	}
	runs := m.RunsSince(created, last)
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
	c, key, err := cluster.ScheduledJob(arg)
	if err != nil {
		return nil, err
	}
	sj := &v1alpha1.ScheduledJob{}
	if err := c.Get(ctx, key, sj); err != nil {
		return nil, err
	}
	return sj, nil
}

// explainLead says how the next warm-up's lead is chosen, and when each
// coming run's warm-up begins where that is known: for every run with a
// fixed lead; under lead Auto for the next one only (next, a ScheduledJob's
// status.nextWarmUpTime; later ones are learned from it). last is the last
// warm-up (status.warmUp, or an annotated CronJob's state).
func explainLead(e *explanation, last *v1alpha1.WarmUpStatus, next *metav1.Time, w *v1alpha1.WarmUpSettings, loc *time.Location) {
	if !w.AutoLead {
		e.Lead = w.Lead.String()
		for i := range e.Next {
			run, _ := time.Parse(time.RFC3339, e.Next[i].Run)
			e.Next[i].WarmUp = warmUpStart(run, w.Lead).In(loc).Format(time.RFC3339)
		}
		return
	}
	e.Lead = fmt.Sprintf("Auto, from %s to %s", w.MinLead, w.MaxLead)
	if next != nil && len(e.Next) > 0 {
		e.Next[0].WarmUp = next.In(loc).Format(time.RFC3339)
	}
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

// liveCronJob matches an argument naming a CronJob (cj/NAME).
var liveCronJob = regexp.MustCompile(`^(?i:cj|cronjobs?(\.batch)?)/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// explainCronJob explains a CronJob with ontime's warm-up annotations at
// now: its schedule as the CronJob controller runs it, its next runs and
// their warm-up, and where its recent runs' lateness went (its
// warmup.ontime.dev/state annotation). A CronJob without them is neither
// warmed up nor measured by ontime, and is refused, naming the annotation.
func explainCronJob(cj *batchv1.CronJob, at time.Time) (explanation, error) {
	m, err := v1alpha1.CronJobMeaning(cj, v1alpha1.ControllerDefaults{})
	if err != nil {
		return explanation{}, cli.Input(fmt.Errorf("cronjob %s/%s: %w", cj.Namespace, cj.Name, err))
	}
	if m.WarmUp == nil {
		return explanation{}, cli.BadInput("cronjob %s/%s has no %s annotation: ontime neither warms it up nor measures its runs; explain its schedule with ontime explain %q",
			cj.Namespace, cj.Name, v1alpha1.WarmUpLeadAnnotation, cj.Spec.Schedule)
	}
	var state v1alpha1.CronJobWarmUpState
	if value := cj.Annotations[v1alpha1.WarmUpStateAnnotation]; value != "" {
		if err := json.Unmarshal([]byte(value), &state); err != nil {
			return explanation{}, cli.Input(fmt.Errorf("cronjob %s/%s: annotation %s cannot be read: %w", cj.Namespace, cj.Name, v1alpha1.WarmUpStateAnnotation, err))
		}
	}
	e := explanation{CronJob: cj.Namespace + "/" + cj.Name, TimeZone: m.Location.String(), Description: m.Describe()}
	for _, t := range runsAfter(m, cj.CreationTimestamp.Time, cj.Status.LastScheduleTime, at, 5) {
		e.Next = append(e.Next, explainedRun{Run: t.Format(time.RFC3339), Weekday: t.Format("Mon")})
	}
	explainLead(&e, state.WarmUp, nil, m.WarmUp, m.Location)
	owner := lateRunOwner{schedule: cj.Spec.Schedule, lastWarmUp: state.WarmUp}
	if ref, member := v1alpha1.CronJobGroupRef(cj.Annotations); member {
		owner.group = &ref
	}
	e.RecentRuns = explainStarts(recentStarts(state.RecentRunStarts, state.LastRunStart), owner, m)
	return e, nil
}
