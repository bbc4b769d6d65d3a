package planner

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// schedule says when runs are due.
type schedule interface {
	// Next returns the first run strictly after t, or the zero time.
	Next(t time.Time) time.Time
	// Prev returns the last run at or before t, or the zero time.
	Prev(t time.Time) time.Time
}

// everyChain is an @every schedule: runs at first, first+every, … where
// first is one interval after the last run (or the creation), as the
// CronJob controller counts.
type everyChain struct {
	first time.Time
	every time.Duration
}

func (c everyChain) Prev(t time.Time) time.Time {
	if t.Before(c.first) {
		return time.Time{}
	}
	return c.first.Add(t.Sub(c.first) / c.every * c.every)
}

func (c everyChain) Next(t time.Time) time.Time {
	if t.Before(c.first) {
		return c.first
	}
	return c.first.Add((t.Sub(c.first)/c.every + 1) * c.every)
}

// once is a runAt schedule.
type once struct{ at time.Time }

func (o once) Prev(t time.Time) time.Time {
	if t.Before(o.at) {
		return time.Time{}
	}
	return o.at
}

func (o once) Next(t time.Time) time.Time {
	if t.Before(o.at) {
		return o.at
	}
	return time.Time{}
}

// parseSchedule reads spec.schedule or spec.runAt, spec.timeZone and
// spec.dstPolicy. What admission let through but cannot run sets Ready to
// False with the reason, and the controller waits for the spec to change
// instead of stalling silently (upstream returns with no requeue and only an
// event).
func (p *planning) parseSchedule() bool {
	spec := &p.sj.Spec
	loc := time.UTC
	if spec.TimeZone != nil {
		var err error
		if loc, err = LoadTimeZone(*spec.TimeZone); err != nil {
			p.invalid(v1alpha1.ReasonUnknownTimeZone, ReasonUnknownTimeZone, fmt.Sprintf("invalid timeZone: %q: %s", *spec.TimeZone, err))
			return false
		}
	}
	p.loc = loc
	if spec.RunAt != nil {
		p.sched = once{at: spec.RunAt.Time}
		return true
	}
	if strings.Contains(spec.Schedule, "TZ") && p.sj.Status.ObservedGeneration != p.sj.Generation {
		p.event(corev1.EventTypeWarning, ReasonUnsupportedSchedule,
			fmt.Sprintf("CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", spec.Schedule))
	}
	parsed, err := cron.Parser{Location: loc, DSTPolicy: DSTPolicy(spec.DSTPolicy)}.Parse(spec.Schedule)
	if err != nil {
		eventReason := ReasonUnparseableSchedule
		if strings.Contains(err.Error(), "never fires") {
			eventReason = ReasonInvalidSchedule
		}
		p.invalid(v1alpha1.ReasonInvalidSchedule, eventReason, fmt.Sprintf("unparseable schedule: %q : %s", spec.Schedule, err))
		return false
	}
	p.loc = parsed.Location()
	if every := parsed.Interval(); every > 0 {
		if every < time.Minute {
			p.invalid(v1alpha1.ReasonInvalidSchedule, ReasonInvalidSchedule,
				fmt.Sprintf("invalid schedule: %q : runs less than a minute apart would share a Job name (names have minute resolution); use @every 1m or more", spec.Schedule))
			return false
		}
		anchor := p.sj.CreationTimestamp.Time
		if last := p.plan.Status.LastScheduleTime; last != nil {
			anchor = last.Time
		}
		p.sched = everyChain{first: parsed.Next(anchor), every: every}
		return true
	}
	p.sched = parsed
	return true
}

// DSTPolicy maps the API's policy to the engine's.
func DSTPolicy(policy v1alpha1.DSTPolicy) cron.DSTPolicy {
	if policy == v1alpha1.DSTKubernetes {
		return cron.DSTKubernetes
	}
	return cron.DSTCron
}

// LoadTimeZone loads a spec.timeZone; "Local" and "" are not zones here.
func LoadTimeZone(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "Local") {
		return nil, fmt.Errorf("unknown time zone %s", name)
	}
	return cron.LoadLocation(name)
}

// invalid records a spec the controller cannot run. The event is emitted
// once per spec generation, not on every reconcile.
func (p *planning) invalid(conditionReason, eventReason, message string) {
	if p.setReady(false, conditionReason, message) || p.sj.Status.ObservedGeneration != p.sj.Generation {
		p.event(corev1.EventTypeWarning, eventReason, message)
	}
}

// handledUntil returns the time up to which runs have been dealt with
// (started or recorded as missed): only runs after it are due.
func (p *planning) handledUntil() time.Time {
	status := &p.plan.Status
	var handled time.Time
	if p.sj.Spec.RunAt == nil {
		// Runs before the ScheduledJob existed are not due (as upstream).
		handled = p.sj.CreationTimestamp.Time
	}
	for _, t := range []*time.Time{timeOf(status.LastScheduleTime), timeOf(status.LastMissedTime)} {
		if t != nil && t.After(handled) {
			handled = *t
		}
	}
	return handled
}

// schedule starts the run that is due, if any, and says when the next is.
func (p *planning) schedule() {
	handled := p.handledUntil()
	due := p.sched.Prev(p.now)
	if !due.IsZero() && due.After(handled) && p.notBeforeAnnounced(due) {
		p.runDue(due, handled)
	}
	p.announceNext()
}

// notBeforeAnnounced keeps schedule edits from starting retroactive runs
// (upstream #63371 and friends): a run earlier than the next run this
// controller last announced in status.nextScheduleTime was not due under the
// schedule then in force, so a new schedule cannot make it due. Without
// edits, the due run is always at or after the announced one.
func (p *planning) notBeforeAnnounced(due time.Time) bool {
	announced := p.sj.Status.NextScheduleTime
	return p.sj.Spec.RunAt != nil || announced == nil || !due.Before(announced.Time)
}

// runDue handles the most recent due run: the runs between the last
// handled one and it are missed (only the most recent missed run starts,
// as with a CronJob, but here they are counted exactly and recorded), then
// the deadline and the concurrency policy decide.
func (p *planning) runDue(due, handled time.Time) {
	status := &p.plan.Status
	spec := &p.sj.Spec
	skipped, latest := p.countBetween(handled, due)
	if skipped > 0 {
		status.LastMissedTime = later(status.LastMissedTime, latest)
		p.plan.Missed[MissSkipped] += skipped
	}
	// Upstream counts missed runs only within the deadline window; without
	// a deadline that window is the one just counted.
	missed := skipped
	if spec.StartingDeadlineSeconds != nil {
		if start := p.now.Add(-time.Duration(*spec.StartingDeadlineSeconds) * time.Second); start.After(handled) {
			missed, _ = p.countBetween(start, due)
		}
	}
	if missed+1 > tooManyMissed {
		p.event(corev1.EventTypeWarning, ReasonTooManyMissedTimes,
			fmt.Sprintf("too many missed start times (%d). Set or decrease .spec.startingDeadlineSeconds or check clock skew", missed+1))
	}
	// Deadlines are whole seconds, so lateness is too: with
	// startingDeadlineSeconds 0 a run created in its own second still starts.
	if lateness := p.now.Truncate(time.Second).Sub(due); spec.StartingDeadlineSeconds != nil && lateness > time.Duration(*spec.StartingDeadlineSeconds)*time.Second {
		status.LastMissedTime = later(status.LastMissedTime, due)
		p.plan.Missed[MissDeadline]++
		p.event(corev1.EventTypeWarning, ReasonMissSchedule, "Missed scheduled time to start a job: "+due.UTC().Format(time.RFC1123Z))
		return
	}
	if len(p.active) > 0 {
		switch spec.ConcurrencyPolicy {
		case v1alpha1.ForbidConcurrent:
			p.blocked = due
			return
		case v1alpha1.ReplaceConcurrent:
			p.replaceActive()
		}
	}
	if p.hasJobNamed(JobName(p.sj, due)) {
		// Started already; status was written before the Job was seen.
		return
	}
	p.plan.Create = &Run{Job: buildJob(p.sj, JobName(p.sj, due), due, p.loc), Scheduled: due}
}

// tooManyMissed is upstream's threshold for the TooManyMissedTimes
// warning; here the count is exact, not estimated from the first interval.
const tooManyMissed = 100

// countLimit bounds counting missed runs (a minutely schedule after a
// 70-day outage); beyond it the count is reported as the limit.
const countLimit = 100_000

// countBetween counts the runs strictly between after and before and
// returns the latest of them.
func (p *planning) countBetween(after, before time.Time) (int, time.Time) {
	n := 0
	var latest time.Time
	for t := p.sched.Prev(before.Add(-time.Second)); !t.IsZero() && t.After(after) && n < countLimit; t = p.sched.Prev(t.Add(-time.Second)) {
		if n == 0 {
			latest = t
		}
		n++
	}
	return n, latest
}

func (p *planning) replaceActive() {
	for _, job := range p.active {
		p.plan.Deletes = append(p.plan.Deletes, Deletion{Job: job, Reason: DeleteForReplace})
	}
}

func (p *planning) hasJobNamed(name string) bool {
	for _, job := range p.in.Jobs {
		if job.Name == name {
			return true
		}
	}
	return false
}

// announceNext sets status.nextScheduleTime, the Ready condition and the
// requeue. Every path ends here with a requeue at the next run, unless there
// is none (a runAt that has run).
func (p *planning) announceNext() {
	status := &p.plan.Status
	if !p.blocked.IsZero() {
		p.announceBlocked()
		return
	}
	next := p.sched.Next(p.now)
	if next.IsZero() {
		status.NextScheduleTime = nil
		message := "ran once"
		if status.LastScheduleTime != nil {
			message += " at " + status.LastScheduleTime.In(p.loc).Format(time.RFC3339)
		}
		p.setReady(true, v1alpha1.ReasonCompleted, message)
		return
	}
	status.NextScheduleTime = timeAt(next)
	p.setReady(true, v1alpha1.ReasonScheduled, "next run at "+next.In(p.loc).Format(time.RFC3339))
	p.requeueAt(next.Add(nextScheduleDelta))
}

// announceBlocked: under Forbid the due run waits for the active Job; when
// that finishes, its update triggers a reconcile that starts the run. With a
// deadline, look again when it passes, so the miss is recorded on time.
func (p *planning) announceBlocked() {
	status := &p.plan.Status
	status.NextScheduleTime = timeAt(p.blocked)
	message := fmt.Sprintf("the run at %s waits for active job %s (concurrencyPolicy Forbid)",
		p.blocked.In(p.loc).Format(time.RFC3339), p.active[0].Name)
	if p.setReady(true, v1alpha1.ReasonScheduled, message) {
		p.event(corev1.EventTypeNormal, ReasonJobAlreadyActive, "Not starting job because prior execution is running and concurrency policy is Forbid")
	}
	if next := p.sched.Next(p.now); !next.IsZero() {
		p.requeueAt(next.Add(nextScheduleDelta))
	}
	if deadline := p.sj.Spec.StartingDeadlineSeconds; deadline != nil {
		p.requeueAt(p.blocked.Add(time.Duration(*deadline+1) * time.Second))
	}
}

// requeueAt lowers the requeue to reach t, if that is sooner.
func (p *planning) requeueAt(t time.Time) {
	after := max(t.Sub(p.now), time.Millisecond)
	if p.plan.RequeueAfter == 0 || after < p.plan.RequeueAfter {
		p.plan.RequeueAfter = after
	}
}

// trigger handles the trigger annotation: one run now, as if scheduled,
// obeying concurrencyPolicy. It waits while a scheduled run is being created
// in this same reconcile, so that the two are not confused.
func (p *planning) trigger() {
	value, ok := p.sj.Annotations[v1alpha1.TriggerAnnotation]
	if !ok || p.sj.DeletionTimestamp != nil {
		return
	}
	if p.plan.Create != nil {
		p.requeueAt(p.now.Add(time.Second))
		return
	}
	p.plan.ConsumeTrigger = true
	name := TriggeredJobName(p.sj, value)
	if p.hasJobNamed(name) {
		return // handled before a crash kept the annotation from being removed
	}
	if len(p.active) > 0 {
		switch p.sj.Spec.ConcurrencyPolicy {
		case v1alpha1.ForbidConcurrent:
			p.event(corev1.EventTypeWarning, ReasonJobAlreadyActive,
				"Not starting triggered job because prior execution is running and concurrency policy is Forbid")
			return
		case v1alpha1.ReplaceConcurrent:
			p.replaceActive()
		}
	}
	scheduled := p.now.Truncate(time.Second)
	job := buildJob(p.sj, name, scheduled, p.loc)
	job.Annotations[v1alpha1.TriggeredAnnotation] = value
	p.plan.Trigger = &Run{Job: job, Scheduled: scheduled}
}
