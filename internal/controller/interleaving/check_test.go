package interleaving

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// The invariants of docs/reliability.md, checked on the API server's
// history:
//
//   - a scheduled time (or a trigger request) is started at most once: one
//     Job UID per (ScheduledJob, scheduled time), whoever created it and
//     whatever deleted it meanwhile;
//   - none is lost: a time with no Job is recorded as missed
//     (status.lastMissedTime) or no leader had the API server for
//     leaderFor() within its window (for Forbid, from when the run before
//     it finished);
//   - a Forbid ScheduledJob never has two Jobs running at once;
//   - a MissingJob event names a Job that someone other than ontime
//     deleted (never one ontime deleted itself: Replace, history cleanup);
//   - with catchUp, runs start in the order they were scheduled, and a run
//     is owed (not lost) until maxRuns later runs are due or its deadline
//     passes;
//   - with suspendAfterFailures N, ontime suspends a ScheduledJob only
//     once N of its scheduled runs had failed in a row, in the order they
//     were scheduled (no run counted twice, none passed over), and does
//     once a leader had the API server for leaderFor() after that.

// leaderFor is how long a leader must have had the API server, within a
// run's window, for a run without a Job to count as lost: 10 s, and as
// long as its cache may be behind (a Forbid run waits until the cache
// shows the run before it finished).
func (w *world) leaderFor() time.Duration { return 10*time.Second + w.scenario.cacheLag }

// checkNow checks what must hold at every moment: a ScheduledJob never
// has more Jobs running than its active limit (Forbid's one, maxActive).
func (w *world) checkNow() {
	for _, sj := range w.scenario.scheduledJobs {
		limit, ok := sj.ActiveLimit()
		if !ok {
			continue
		}
		var running []string
		for key, obj := range w.api.objects {
			job, ok := obj.(*batchv1.Job)
			if !ok || key.kind != kindJob || !ownedBy(job, sj.Name) || (job.Spec.Suspend != nil && *job.Spec.Suspend) {
				continue
			}
			if _, done := v1alpha1.JobFinished(job); !done {
				running = append(running, job.Name)
			}
		}
		if len(running) > limit {
			slices.Sort(running)
			w.violate("over its limit: %s (%s) has %d Jobs running at once: %s", sj.Name, limitName(sj), len(running), strings.Join(running, ", "))
		}
	}
}

// limitName names what sets a ScheduledJob's active limit.
func limitName(sj *v1alpha1.ScheduledJob) string {
	if sj.Spec.ConcurrencyPolicy == v1alpha1.ForbidConcurrent {
		return "Forbid"
	}
	return fmt.Sprintf("maxActive %d", *sj.Spec.MaxActive)
}

func (w *world) violate(format string, args ...any) {
	message := w.now().Format("15:04:05.000") + " " + fmt.Sprintf(format, args...)
	for _, v := range w.violations {
		if v[13:] == message[13:] {
			return
		}
	}
	w.violations = append(w.violations, message)
}

func ownedBy(job *batchv1.Job, name string) bool {
	owner := metav1.GetControllerOf(job)
	return owner != nil && owner.Kind == "ScheduledJob" && owner.Name == name
}

// creation is one Job's creation, from the log.
type creation struct {
	job *batchv1.Job
	at  time.Time
	by  string
}

// checkEnd checks the history once the world has run.
func (w *world) checkEnd() {
	created := w.creations()
	w.checkDuplicates(created)
	w.checkLost(created)
	w.checkCatchUpOrder(created)
	w.checkMissingJobEvents()
	w.checkTriggersHandled()
	w.checkSuspensions(created)
}

// streakReached is when limit of the ScheduledJob's scheduled runs had
// failed in a row, in the order they were scheduled (zero: never): the
// time the last of the runs up to the limit's finished, as ontime counts
// each run only once the runs before it have finished. Runs asked for by
// hand do not count.
func (w *world) streakReached(name string, limit int, created map[string][]creation) time.Time {
	type run struct {
		scheduled time.Time
		job       string
	}
	var runs []run
	for _, creations := range created {
		job := creations[0].job
		scheduled, ok := v1alpha1.ScheduledTime(job)
		if ownedBy(job, name) && ok && !v1alpha1.IsTriggered(job) {
			runs = append(runs, run{scheduled: scheduled, job: job.Name})
		}
	}
	slices.SortFunc(runs, func(a, b run) int { return a.scheduled.Compare(b.scheduled) })
	ends := map[string]runEnd{}
	for _, end := range w.runEnds {
		ends[end.job] = end
	}
	var allEndedBy time.Time
	inARow := 0
	for _, r := range runs {
		end, ok := ends[r.job]
		if !ok {
			return time.Time{} // still running: nothing after it counts yet
		}
		allEndedBy = latest(allEndedBy, end.at)
		if !end.failed {
			inARow = 0
			continue
		}
		if inARow++; inARow >= limit {
			return allEndedBy
		}
	}
	return time.Time{}
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// suspendedAt is when ontime set the ScheduledJob's spec.suspend (zero:
// never; nothing else in the world sets it).
func (w *world) suspendedAt(name string) time.Time {
	for _, ch := range w.api.log {
		if sj, ok := ch.object.(*v1alpha1.ScheduledJob); ok && sj.Name == name && sj.Spec.Suspend != nil && *sj.Spec.Suspend {
			return ch.at
		}
	}
	return time.Time{}
}

// checkSuspensions checks suspendAfterFailures against the Job
// controller's record of how each run ended.
func (w *world) checkSuspensions(created map[string][]creation) {
	for _, sj := range w.scenario.scheduledJobs {
		if sj.Spec.SuspendAfterFailures == nil {
			continue
		}
		limit, suspended := int(*sj.Spec.SuspendAfterFailures), w.suspendedAt(sj.Name)
		reached := w.streakReached(sj.Name, limit, created)
		switch {
		case !suspended.IsZero() && (reached.IsZero() || suspended.Before(reached)):
			w.violate("suspended early: %s was suspended at %s before %d of its runs had failed in a row", sj.Name, suspended.Format("15:04:05.000"), limit)
		case suspended.IsZero() && !reached.IsZero() && w.ledWithin(reached, w.now()) >= w.leaderFor():
			w.violate("not suspended: %d runs of %s had failed in a row at %s", limit, sj.Name, reached.Format("15:04:05.000"))
		}
	}
}

// creations lists every Job creation, by run: the ScheduledJob and its
// scheduled time, or its trigger request.
func (w *world) creations() map[string][]creation {
	seen := map[string]bool{}
	created := map[string][]creation{}
	for _, ch := range w.api.log {
		job, ok := ch.object.(*batchv1.Job)
		if !ok || seen[string(job.UID)] {
			continue
		}
		seen[string(job.UID)] = true
		created[runOf(job)] = append(created[runOf(job)], creation{job: job, at: ch.at, by: ch.by})
	}
	return created
}

// runOf names the run a Job is for.
func runOf(job *batchv1.Job) string {
	owner := metav1.GetControllerOf(job)
	if v, ok := job.Annotations[v1alpha1.TriggeredAnnotation]; ok {
		return fmt.Sprintf("%s trigger %s", owner.Name, v)
	}
	return fmt.Sprintf("%s at %s", owner.Name, job.Annotations[v1alpha1.ScheduledTimestampAnnotation])
}

func runKey(name string, t time.Time) string {
	return fmt.Sprintf("%s at %s", name, t.UTC().Format(time.RFC3339))
}

func (w *world) checkDuplicates(created map[string][]creation) {
	for run, creations := range created {
		if len(creations) < 2 {
			continue
		}
		var how []string
		for _, c := range creations {
			how = append(how, fmt.Sprintf("%s by %s at %s", c.job.UID, c.by, c.at.Format("15:04:05.000")))
		}
		w.violate("duplicate: the run %s was started %d times: %s", run, len(creations), strings.Join(how, "; "))
	}
}

// checkLost: every scheduled time up to the end of chaos has a Job, is
// recorded as missed, or could not start.
func (w *world) checkLost(created map[string][]creation) {
	chaosEnd := w.scenario.start.Add(w.scenario.chaos)
	for _, sj := range w.scenario.scheduledJobs {
		stored, ok := w.api.objects[objectKey{kind: kindScheduledJob, namespace: namespace, name: sj.Name}].(*v1alpha1.ScheduledJob)
		if !ok {
			continue
		}
		meaning, err := sj.Meaning(nil)
		if err != nil {
			panic(err)
		}
		runs := meaning.Runs(stored.CreationTimestamp.Time)
		for t := runs.Next(stored.CreationTimestamp.Time); !t.IsZero() && t.Before(chaosEnd); t = runs.Next(t) {
			w.checkRun(stored, runs, t, created)
		}
	}
}

// checkRun checks one scheduled time of a ScheduledJob as checkLost says.
func (w *world) checkRun(sj *v1alpha1.ScheduledJob, runs cron.Runs, t time.Time, created map[string][]creation) {
	key := runKey(sj.Name, t)
	if len(created[key]) > 0 {
		return // started
	}
	if sj.Status.LastMissedTime != nil && !sj.Status.LastMissedTime.Time.Before(t) {
		w.checkDroppedWhenNotOwed(sj, runs, t) // recorded as missed
		return
	}
	end, blockersUntil := w.window(sj, runs, t)
	if suspended := w.suspendedAt(sj.Name); !suspended.IsZero() && suspended.Before(end) {
		// Suspended runs do not start, as with a CronJob; one held by a
		// Job created after its time (a run asked for by hand) may have
		// been held until the suspension.
		end, blockersUntil = suspended, suspended
	}
	if d := sj.Spec.StartingDeadlineSeconds; d != nil && t.Add(time.Duration(*d)*time.Second).Before(end) {
		end = t.Add(time.Duration(*d) * time.Second)
	}
	from := t
	if limit, ok := sj.ActiveLimit(); ok {
		if from = w.freeFrom(sj.Name, limit, created, t, blockersUntil); from.IsZero() || !from.Before(end) {
			return // held by the runs before it
		}
	}
	if led := w.ledWithin(from, end); led >= w.leaderFor() {
		w.violate("lost: the run %s has no Job and is not recorded as missed, though a leader had the API server for %s from %s to %s",
			key, led, from.Format(time.TimeOnly), end.Format(time.TimeOnly))
	}
}

// checkDroppedWhenNotOwed: under catchUp, the run at t, which has no Job,
// was first recorded as missed once it was no longer owed: maxRuns later
// runs were due, or its deadline had passed (or the ScheduledJob had been
// suspended).
func (w *world) checkDroppedWhenNotOwed(sj *v1alpha1.ScheduledJob, runs cron.Runs, t time.Time) {
	c := sj.Spec.CatchUp
	if c == nil {
		return
	}
	owedUntil := t
	for range c.MaxRuns {
		owedUntil = runs.Next(owedUntil)
	}
	if d := sj.Spec.StartingDeadlineSeconds; d != nil && t.Add(time.Duration(*d+1)*time.Second).Before(owedUntil) {
		owedUntil = t.Add(time.Duration(*d+1) * time.Second)
	}
	for _, ch := range w.api.log {
		stored, ok := ch.object.(*v1alpha1.ScheduledJob)
		if !ok || stored.Name != sj.Name || stored.Status.LastMissedTime == nil || stored.Status.LastMissedTime.Time.Before(t) {
			continue
		}
		if suspended := w.suspendedAt(sj.Name); ch.at.Before(owedUntil) && (suspended.IsZero() || ch.at.Before(suspended)) {
			w.violate("dropped while owed: %s recorded the run at %s missed at %s (by %s), though catchUp owed it until %s",
				sj.Name, t.Format(time.TimeOnly), ch.at.Format("15:04:05.000"), ch.by, owedUntil.Format(time.TimeOnly))
		}
		return
	}
}

// checkCatchUpOrder: a ScheduledJob with catchUp starts its scheduled runs
// in the order they were scheduled: no run began (was claimed, or its Job
// created) before a run scheduled earlier.
func (w *world) checkCatchUpOrder(created map[string][]creation) {
	for _, sj := range w.scenario.scheduledJobs {
		if sj.Spec.CatchUp == nil {
			continue
		}
		began := w.began(sj.Name)
		var runs []creation
		for _, creations := range created {
			for _, c := range creations {
				if ownedBy(c.job, sj.Name) && !v1alpha1.IsTriggered(c.job) {
					runs = append(runs, c)
				}
			}
		}
		slices.SortFunc(runs, func(a, b creation) int { return cmp.Compare(began[a.job.Name], began[b.job.Name]) })
		for i := 1; i < len(runs); i++ {
			before, _ := v1alpha1.ScheduledTime(runs[i-1].job)
			after, _ := v1alpha1.ScheduledTime(runs[i].job)
			if after.Before(before) {
				w.violate("out of order: %s started the run at %s (by %s) after the one at %s (by %s)", sj.Name,
					after.Format(time.TimeOnly), runs[i].by, before.Format(time.TimeOnly), runs[i-1].by)
			}
		}
	}
}

// began is when each run of the ScheduledJob named began, as the API
// server's order of writes: its claim in status.active, or its Job's
// creation where it was not claimed first. A run under a limit starts at
// its claim; two actors may then create the Jobs of two claimed runs in
// either order, which is no disorder.
func (w *world) began(name string) map[string]int64 {
	began := map[string]int64{}
	mark := func(job string, rv int64) {
		if _, ok := began[job]; !ok {
			began[job] = rv
		}
	}
	for _, ch := range w.api.log {
		switch o := ch.object.(type) {
		case *v1alpha1.ScheduledJob:
			if o.Name == name {
				for _, ref := range o.Status.Active {
					mark(ref.Name, ch.rv)
				}
			}
		case *batchv1.Job:
			if ownedBy(o, name) {
				mark(o.Name, ch.rv)
			}
		}
	}
	return began
}

// window is when the run at t had to start by (the next run's time, or the
// end so far), and until when the Jobs created may hold it under a limit:
// those created by its time, or, under catchUp, by the end of its window
// (it is owed until maxRuns later runs are due, and held meanwhile by the
// older runs owed, whenever they started).
func (w *world) window(sj *v1alpha1.ScheduledJob, runs cron.Runs, t time.Time) (end, blockersUntil time.Time) {
	end, blockersUntil = runs.Next(t), t
	if c := sj.Spec.CatchUp; c != nil {
		for range c.MaxRuns - 1 {
			end = runs.Next(end)
		}
		blockersUntil = end
	}
	if end.IsZero() || end.After(w.now()) {
		end = w.now()
	}
	if blockersUntil.After(end) {
		blockersUntil = end
	}
	return end, blockersUntil
}

// freeFrom is when, from t on, fewer than limit of the ScheduledJob's Jobs
// created by then, or by blockersUntil, were running (zero: never): when a
// run at t held by its active limit could start.
func (w *world) freeFrom(name string, limit int, created map[string][]creation, t, blockersUntil time.Time) time.Time {
	for from := t; ; {
		var ends []time.Time // of the Jobs running at from; zero: never
		for _, creations := range created {
			for _, c := range creations {
				if !ownedBy(c.job, name) || (c.at.After(from) && c.at.After(blockersUntil)) {
					continue
				}
				if end := w.endedAt(c.job); end.IsZero() || end.After(from) {
					ends = append(ends, end)
				}
			}
		}
		if len(ends) < limit {
			return from
		}
		next := time.Time{} // the first of them to end
		for _, end := range ends {
			if !end.IsZero() && (next.IsZero() || end.Before(next)) {
				next = end
			}
		}
		if next.IsZero() {
			return time.Time{}
		}
		from = next
	}
}

// endedAt is when the log shows job finished, or else deleted (zero:
// neither).
func (w *world) endedAt(job *batchv1.Job) time.Time {
	if finished := w.finishedAt(job); !finished.IsZero() {
		return finished
	}
	return w.deletedAt(job)
}

// deletedAt is when the log shows job deleted (zero: never).
func (w *world) deletedAt(job *batchv1.Job) time.Time {
	for _, ch := range w.api.log {
		if ch.object == nil && ch.deleted != nil && ch.deleted.GetUID() == job.UID {
			return ch.at
		}
	}
	return time.Time{}
}

// finishedAt is when the log shows job finished (zero: never).
func (w *world) finishedAt(job *batchv1.Job) time.Time {
	for _, ch := range w.api.log {
		if j, ok := ch.object.(*batchv1.Job); ok && j.UID == job.UID {
			if _, done := v1alpha1.JobFinished(j); done {
				return ch.at
			}
		}
	}
	return time.Time{}
}

// ledWithin is the longest time from to to during which one replica led
// with the API server up.
func (w *world) ledWithin(from, to time.Time) time.Duration {
	intervals := w.leadership
	if w.lease != nil && !w.ledSince.IsZero() && w.now().After(w.ledSince) {
		intervals = append(intervals, interval{w.ledSince, w.now()})
	}
	var longest time.Duration
	for _, i := range intervals {
		start, end := i.from, i.to
		if start.Before(from) {
			start = from
		}
		if end.After(to) {
			end = to
		}
		longest = max(longest, end.Sub(start))
	}
	return longest
}

// checkMissingJobEvents: a MissingJob event names a Job deleted by someone
// other than ontime.
func (w *world) checkMissingJobEvents() {
	for _, e := range *w.recorder.events {
		if e.reason != v1alpha1.ReasonMissingJob {
			continue
		}
		name := strings.TrimPrefix(e.msg, "Active job went missing: ")
		deletedBy := ""
		for _, ch := range w.api.log {
			if ch.object == nil && ch.key.kind == kindJob && ch.key.name == name && ch.at.Compare(e.at) <= 0 {
				deletedBy = ch.by
			}
		}
		if deletedBy != "user" {
			w.violate("MissingJob: %s reported %s missing at %s, which %s", e.actor, name, e.at.Format("15:04:05.000"), describeDeleter(deletedBy))
		}
	}
}

func describeDeleter(by string) string {
	if by == "" {
		return "nobody deleted"
	}
	return by + " deleted itself"
}

// checkTriggersHandled: every run asked for by hand was handled by the end:
// the annotation is gone.
func (w *world) checkTriggersHandled() {
	for _, sj := range w.scenario.scheduledJobs {
		stored, ok := w.api.objects[objectKey{kind: kindScheduledJob, namespace: namespace, name: sj.Name}].(*v1alpha1.ScheduledJob)
		if ok && stored.Annotations[v1alpha1.TriggerAnnotation] != "" {
			w.violate("trigger: %s still asks for %s at the end", sj.Name, stored.Annotations[v1alpha1.TriggerAnnotation])
		}
	}
}
