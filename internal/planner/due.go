package planner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// scheduling is what deciding about runs reads: a ScheduledJob whose spec
// can run, its schedule, the zone runs are named in, its Jobs and the time.
type scheduling struct {
	sj     *v1alpha1.ScheduledJob
	sched  schedule
	loc    *time.Location
	now    time.Time
	jobs   []*batchv1.Job
	active []*batchv1.Job
	// claims are the claimed runs whose Jobs do not exist yet, by name.
	claims []string
}

// blockers are the runs, other than the one named, that count against
// the active limit (Forbid's one, or maxActive): active Jobs and claimed
// runs, by name.
func (s scheduling) blockers(name string) []string {
	var names []string
	for _, job := range s.active {
		if job.Name != name {
			names = append(names, job.Name)
		}
	}
	for _, claim := range s.claims {
		if claim != name {
			names = append(names, claim)
		}
	}
	return names
}

// limited reports whether a limit bounds the ScheduledJob's active runs
// (Forbid, or maxActive): its runs are then claimed before their Jobs are
// created.
func (s scheduling) limited() bool {
	_, ok := s.sj.ActiveLimit()
	return ok
}

// atLimit reports whether the run named name must wait: the runs that
// count against the active limit have reached it.
func (s scheduling) atLimit(name string) bool {
	limit, ok := s.sj.ActiveLimit()
	return ok && len(s.blockers(name)) >= limit
}

// newRun is the run at scheduled with its Job named name; under an active
// limit it is to be claimed first, unless it is already. Under
// spec.deadline the Job carries the run's deadline as the spec says now,
// which the run is judged by (runs by hand and backfills have none).
func (s scheduling) newRun(name string, scheduled time.Time) *Run {
	job := buildJob(s.sj, name, scheduled, s.loc)
	if deadline, ok := s.sj.Spec.Deadline.For(scheduled, s.loc); ok {
		v1alpha1.StampDeadline(job, deadline)
	}
	return &Run{Job: job, Scheduled: scheduled, Claim: s.limited() && !slices.Contains(s.claims, name)}
}

// dropStaleClaims removes from status.active the claims of scheduled runs
// that can no longer start (their claimer died before creating the Job,
// and no one created it while the run was due): once a later run has been
// due for RequestBound (under spec.catchUp: once the run stopped being owed,
// catchUpAbandoned), no create of theirs can still be on its way. Each
// counts as a missed run.
func (s scheduling) dropStaleClaims(missed map[MissReason]int, events *[]Event, wake *[]time.Time) staleClaims {
	due := s.sched.Prev(s.now)
	request, requested := s.sj.Annotations[v1alpha1.TriggerAnnotation]
	catchingUp := s.catchesUp()
	var claims staleClaims
	for _, name := range s.claims {
		minute, ok := claimMinute(s.sj, name)
		if !ok && (!requested || name != s.sj.TriggeredJobName(request)) {
			// A trigger's claim whose request was replaced by hand before
			// its Job was created: the request it stood for is gone.
			claims.dropped = append(claims.dropped, name)
			continue
		}
		// over: no plan starts the claimed run any more, since overAt.
		over, overAt := ok && !due.IsZero() && name != s.sj.JobName(due) && minute.Before(due), due
		if ok && catchingUp {
			// A run a catch-up owes is not over when a later run is due.
			overAt = s.catchUpAbandoned(minute)
			over = !overAt.After(s.now)
		}
		if !over || s.now.Before(overAt.Add(RequestBound)) {
			if over || ok && catchingUp {
				*wake = append(*wake, overAt.Add(RequestBound))
			}
			claims.kept = append(claims.kept, name)
			continue
		}
		claims.dropped = append(claims.dropped, name)
		claims.lastMissed = latest(claims.lastMissed, minute)
		missed[MissSkipped]++
		*events = append(*events, missScheduleEvent(minute))
	}
	return claims
}

// staleClaims are the claims kept and dropped, and the latest run a dropped
// claim stood for, now missed.
type staleClaims struct {
	kept, dropped []string
	lastMissed    time.Time
}

// latest is the later of two times.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// handledUntil returns the time up to which runs have been dealt with
// (started or recorded as missed): only runs after it are due.
func handledUntil(sj *v1alpha1.ScheduledJob, lastSchedule, lastMissed *metav1.Time) time.Time {
	var handled time.Time
	if sj.Spec.RunAt == nil {
		// Runs before the ScheduledJob existed are not due (as upstream).
		handled = sj.CreationTimestamp.Time
	}
	for _, t := range []*time.Time{timeOf(lastSchedule), timeOf(lastMissed)} {
		if t != nil && t.After(handled) {
			handled = *t
		}
	}
	return handled
}

// dueRun is the decision about the most recent run that is due.
type dueRun struct {
	// create is the run's Job, when it starts now.
	create *Run
	// replace are the active Jobs to delete first (concurrencyPolicy
	// Replace).
	replace []*batchv1.Job
	// blocked is a due run that the active limit holds back.
	blocked time.Time
	// catchUpNext is, while a catch-up (spec.catchUp) goes on, the run
	// owed after the one this decision is about.
	catchUpNext time.Time
	// missed counts runs that did not start, by reason; lastMissed is the
	// latest of them.
	missed     map[MissReason]int
	lastMissed time.Time
	events     []Event
}

// record adds the missed runs to the metric's counts and returns the
// latest of them (zero if none), for status.lastMissedTime.
func (d dueRun) record(missed map[MissReason]int) time.Time {
	for reason, n := range d.missed {
		missed[reason] += n
	}
	return d.lastMissed
}

// skippedByOthers counts as missed the runs a later run, started
// by someone else (the standby, or a leader that died before writing
// status), skipped: status.lastScheduleTime moved from the Jobs past them,
// so decideDueRun will not count them. handled is where the status stood
// before the Jobs were observed. Their MissSchedule event was emitted by
// whoever created that run's Job (Plan.ResultEvents), so none is emitted
// here: a leader restarted before its status write would report it twice.
// It returns the latest of them (zero if none), for
// status.lastMissedTime. last is status.lastScheduleTime as the Jobs say.
func (s scheduling) skippedByOthers(handled time.Time, last *metav1.Time, missed map[MissReason]int) time.Time {
	if last == nil || !last.After(handled) {
		return time.Time{}
	}
	n := 0
	var newest time.Time
	upTo := last.Time
	if s.now.Before(upTo) {
		upTo = s.now // a clock behind the runs': nothing was due after now
	}
	for t := s.sched.Prev(upTo.Add(-time.Second)); !t.IsZero() && t.After(handled) && n < countLimit; t = s.sched.Prev(t.Add(-time.Second)) {
		if hasJobNamed(s.jobs, s.sj.JobName(t)) {
			continue
		}
		if newest.IsZero() {
			newest = t
		}
		n++
	}
	if n > 0 {
		missed[MissSkipped] += n
	}
	return newest
}

// decideDueRun decides about the most recent due run after handled, if any.
func (s scheduling) decideDueRun(handled time.Time) dueRun {
	due := s.sched.Prev(s.now)
	if due.IsZero() || !due.After(handled) || !s.notBeforeAnnounced(due) {
		return dueRun{replace: s.replacedByEarlyRun(due)}
	}
	if s.catchesUp() {
		if owed := s.owedRuns(handled, due); len(owed) > 1 {
			return s.catchUp(owed, handled)
		}
	}
	return s.runDue(due, handled)
}

// replacedByEarlyRun: a run created early (EarlyStart) under
// concurrencyPolicy Replace replaces the active runs before it at its
// scheduled time, as a run created then would, not when it was created.
func (s scheduling) replacedByEarlyRun(due time.Time) []*batchv1.Job {
	own := jobNamed(s.jobs, s.sj.JobName(due))
	if due.IsZero() || s.sj.Spec.ConcurrencyPolicy != v1alpha1.ReplaceConcurrent || own == nil || !createdEarly(own) {
		return nil
	}
	var older []*batchv1.Job
	for _, job := range s.active {
		if at, ok := v1alpha1.ScheduledTime(job); ok && at.Before(due) {
			older = append(older, job)
		}
	}
	return older
}

// notBeforeAnnounced keeps schedule edits from starting retroactive runs
// (upstream #63371 and friends): a run earlier than the next run this
// controller last announced in status.nextScheduleTime was not due under the
// schedule then in force, so a new schedule cannot make it due. Without
// edits, the due run is always at or after the announced one.
func (s scheduling) notBeforeAnnounced(due time.Time) bool {
	announced := s.sj.Status.NextScheduleTime
	return s.sj.Spec.RunAt != nil || announced == nil || !due.Before(announced.Time)
}

// runDue handles the most recent due run: the runs between the last
// handled one and it are missed (only the most recent missed run starts,
// as with a CronJob, but here they are counted exactly and recorded), then
// the deadline and the concurrency policy decide.
func (s scheduling) runDue(due, handled time.Time) dueRun {
	spec := &s.sj.Spec
	d := dueRun{missed: map[MissReason]int{}}
	skipped, latest := s.countBetween(handled, due)
	if skipped > 0 {
		d.lastMissed = latest
		d.missed[MissSkipped] = skipped
		d.events = append(d.events, missScheduleEvent(latest))
	}
	if missed := s.missedInWindow(skipped, handled, due); missed+1 > tooManyMissed {
		d.events = append(d.events, tooManyMissedTimesEvent(missed+1))
	}
	if s.tooLate(due) {
		d.lastMissed = due
		d.missed[MissDeadline]++
		d.events = append(d.events, missScheduleEvent(due))
		return d
	}
	// The run's own Job is not in its way: it exists already when it was
	// created early (EarlyStart), or before a crash kept status from
	// saying so.
	name := s.sj.JobName(due)
	switch {
	case s.atLimit(name):
		d.blocked = due
		return d
	case spec.ConcurrencyPolicy == v1alpha1.ReplaceConcurrent:
		d.replace = withoutJobNamed(s.active, name)
	}
	if !hasJobNamed(s.jobs, name) {
		d.create = s.newRun(name, due)
		if skipped > 0 {
			d.create.Skipped = latest
		}
	}
	return d
}

func withoutJobNamed(jobs []*batchv1.Job, name string) []*batchv1.Job {
	var others []*batchv1.Job
	for _, job := range jobs {
		if job.Name != name {
			others = append(others, job)
		}
	}
	return others
}

// missedInWindow is upstream's count of missed runs for its
// TooManyMissedTimes warning: those within the deadline window. Without a
// deadline that window is the one just counted.
func (s scheduling) missedInWindow(skipped int, handled, due time.Time) int {
	deadline := s.sj.Spec.StartingDeadlineSeconds
	if deadline == nil {
		return skipped
	}
	start := s.now.Add(-v1alpha1.StartingDeadline(*deadline))
	if !start.After(handled) {
		return skipped
	}
	missed, _ := s.countBetween(start, due)
	return missed
}

// tooManyMissed is upstream's threshold for the TooManyMissedTimes
// warning; here the count is exact, not estimated from the first interval.
const tooManyMissed = 100

// countLimit bounds counting missed runs (a minutely schedule after a
// 70-day outage); beyond it the count is reported as the limit.
const countLimit = 100_000

// countBetween counts the runs strictly between after and before and
// returns the latest of them.
func (s scheduling) countBetween(after, before time.Time) (int, time.Time) {
	n := 0
	var latest time.Time
	for t := s.sched.Prev(before.Add(-time.Second)); !t.IsZero() && t.After(after) && n < countLimit; t = s.sched.Prev(t.Add(-time.Second)) {
		if n == 0 {
			latest = t
		}
		n++
	}
	return n, latest
}

func hasJobNamed(jobs []*batchv1.Job, name string) bool {
	for _, job := range jobs {
		if job.Name == name {
			return true
		}
	}
	return false
}

// announcement is what announce decided: the readiness, when to look
// again, and an event to emit if the Ready condition changes.
type announcement struct {
	readiness      readiness
	wake           []time.Time
	eventIfChanged *Event
}

// announce says when the next run is, given the run the limit holds back (if
// any) and the last scheduled run. Every path ends with a wake-up at the
// next run, unless there is none (a runAt that has run).
func (s scheduling) announce(blocked time.Time, lastScheduled *metav1.Time) announcement {
	if !blocked.IsZero() {
		return s.announceBlocked(blocked)
	}
	next := s.sched.Next(s.now)
	if next.IsZero() {
		message := "ran once"
		if lastScheduled != nil {
			message += " at " + lastScheduled.In(s.loc).Format(time.RFC3339)
		}
		return announcement{readiness: readiness{ready: true, reason: v1alpha1.ReasonCompleted, message: message}}
	}
	return announcement{
		readiness: scheduled(next, "next run at "+next.In(s.loc).Format(time.RFC3339)),
		wake:      []time.Time{next.Add(nextScheduleDelta)},
	}
}

// announceBlocked: at the active limit the due run waits for an active
// Job; when one finishes, its update triggers a reconcile that starts the
// run. With a deadline, look again when it passes, so the miss is recorded
// on time.
func (s scheduling) announceBlocked(blocked time.Time) announcement {
	event := jobAlreadyActiveEvent(s.sj, len(s.blockers(s.sj.JobName(blocked))))
	a := announcement{readiness: scheduled(blocked, s.waitsFor(blocked)), eventIfChanged: &event}
	if next := s.sched.Next(s.now); !next.IsZero() {
		a.wake = append(a.wake, next.Add(nextScheduleDelta))
	}
	if deadline := s.sj.Spec.StartingDeadlineSeconds; deadline != nil {
		a.wake = append(a.wake, blocked.Add(v1alpha1.StartingDeadline(*deadline)+time.Second))
	}
	return a
}

// waitsFor says what the run at blocked waits for: under Forbid the
// active Job, under maxActive one of the active Jobs.
func (s scheduling) waitsFor(blocked time.Time) string {
	at, blockers := blocked.In(s.loc).Format(time.RFC3339), s.blockers(s.sj.JobName(blocked))
	if s.sj.Spec.ConcurrencyPolicy == v1alpha1.ForbidConcurrent {
		return fmt.Sprintf("the run at %s waits for active job %s (concurrencyPolicy Forbid)", at, blockers[0])
	}
	limit, _ := s.sj.ActiveLimit()
	named := strings.Join(blockers[:min(len(blockers), 3)], ", ")
	if len(blockers) > 3 {
		named += fmt.Sprintf(" and %d more", len(blockers)-3)
	}
	return fmt.Sprintf("the run at %s waits for one of %d active jobs to finish (maxActive %d): %s", at, len(blockers), limit, named)
}

// schedule says when runs are due: an anchored cron.Schedule, or once.
type schedule = cron.Runs

// specSchedule is what the spec says about when to run.
type specSchedule struct {
	// schedule is nil when problem is set.
	schedule schedule
	// loc is the zone runs are named in: the schedule's, else
	// spec.timeZone's, else UTC.
	loc *time.Location
	// effective is the schedule with its H fields replaced by their values
	// ("" for runAt and a schedule that cannot run).
	effective string
	// problem is why the spec cannot run, if it cannot.
	problem *specProblem
	// warnings are events about a spec that runs all the same.
	warnings []Event
}

// specProblem is a spec that admission let through but that cannot run: the
// Ready condition says why and the controller waits for the spec to change,
// instead of stalling silently as upstream does (it returns with no requeue
// and only an event).
type specProblem struct {
	condition string
	message   string
	event     Event
}

// scheduleOf is the schedule in effect: spec.schedule or spec.runAt,
// spec.timeZone, spec.dstPolicy and spec.spread as judged (Judgement's
// meaning, read with a Balanced spread's placement). lastSchedule anchors
// an @every schedule.
func scheduleOf(sj *v1alpha1.ScheduledJob, judged *Judgement, lastSchedule *time.Time) specSchedule {
	spec := &sj.Spec
	result := specSchedule{loc: time.UTC}
	if spec.RunAt == nil && strings.Contains(spec.Schedule, "TZ") && specChanged(sj) {
		result.warnings = append(result.warnings, unsupportedScheduleEvent(spec.Schedule))
	}
	if judged.problem != nil {
		result.problem = judged.problem
		return result
	}
	result.loc, result.effective = judged.meaning.Location, judged.effective
	result.schedule = judged.meaning.RunsSince(sj.CreationTimestamp.Time, lastSchedule)
	return result
}

// problemOf explains a spec field that cannot be read. A schedule that
// never fires or runs less than a minute apart gets upstream's
// InvalidSchedule event, one that does not parse its UnparseableSchedule;
// the condition says InvalidSchedule for both.
func problemOf(e *v1alpha1.SpecError) *specProblem {
	message := e.Error()
	if e.Reason == v1alpha1.ReasonUnknownTimeZone {
		return &specProblem{e.Reason, message, unknownTimeZoneEvent(message)}
	}
	var parseErr *cron.ParseError
	if errors.As(e, &parseErr) && parseErr.Kind != cron.ErrNeverFires {
		return &specProblem{e.Reason, message, unparseableScheduleEvent(message)}
	}
	return &specProblem{e.Reason, message, invalidScheduleEvent(message)}
}

// spreadChoices are the values of the schedule's H fields under a
// Balanced spread: the placement's, which the reconciler obtains from the
// group before planning. Without one for the current schedule the
// ScheduledJob waits (the reconciler retries), rather than run at hashed
// minutes it would leave once placed. Under Hash they come from the hash.
func spreadChoices(sj *v1alpha1.ScheduledJob, placement *v1alpha1.SpreadStatus) ([]int, *specProblem) {
	spread := sj.SpreadOf()
	if spread.Strategy != v1alpha1.SpreadBalanced || len(sj.Spec.Schedules) > 0 {
		// A list is not placed (admission refuses Balanced with one; a
		// spec stored without admission is reported as invalid).
		return nil, nil
	}
	if placement == nil || placement.Schedule != sj.Spec.Schedule || placement.Group != spread.Group {
		message := fmt.Sprintf("spec.spread: waiting for a place in spread group %q", spread.Group)
		return nil, &specProblem{v1alpha1.ReasonSpreadPending, message, spreadPendingEvent(message)}
	}
	return placement.Choices, nil
}
