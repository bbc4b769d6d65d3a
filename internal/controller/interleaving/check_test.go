package interleaving

import (
	"fmt"
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
//     deleted (never one ontime deleted itself: Replace, history cleanup).

// leaderFor is how long a leader must have had the API server, within a
// run's window, for a run without a Job to count as lost: 10 s, and as
// long as its cache may be behind (a Forbid run waits until the cache
// shows the run before it finished).
func (w *world) leaderFor() time.Duration { return 10*time.Second + w.scenario.cacheLag }

// checkNow checks what must hold at every moment: Forbid never has two
// Jobs running.
func (w *world) checkNow() {
	for _, sj := range w.scenario.scheduledJobs {
		if sj.Spec.ConcurrencyPolicy != v1alpha1.ForbidConcurrent {
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
		if len(running) > 1 {
			w.violate("Forbid: %s has %d Jobs running at once: %s", sj.Name, len(running), strings.Join(running, ", "))
		}
	}
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
	w.checkMissingJobEvents()
	w.checkTriggersHandled()
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
	if len(created[key]) > 0 || (sj.Status.LastMissedTime != nil && !sj.Status.LastMissedTime.Time.Before(t)) {
		return // started, or recorded as missed
	}
	end := runs.Next(t)
	if end.IsZero() || end.After(w.now()) {
		end = w.now()
	}
	if d := sj.Spec.StartingDeadlineSeconds; d != nil && t.Add(time.Duration(*d)*time.Second).Before(end) {
		end = t.Add(time.Duration(*d) * time.Second)
	}
	from := t
	if sj.Spec.ConcurrencyPolicy == v1alpha1.ForbidConcurrent {
		if from = w.freeFrom(sj.Name, created, t); from.IsZero() || !from.Before(end) {
			return // held by a run before it
		}
	}
	if led := w.ledWithin(from, end); led >= w.leaderFor() {
		w.violate("lost: the run %s has no Job and is not recorded as missed, though a leader had the API server for %s from %s to %s",
			key, led, from.Format(time.TimeOnly), end.Format(time.TimeOnly))
	}
}

// freeFrom is when, from t on, none of the ScheduledJob's Jobs was running
// any more (zero: never): when a Forbid run at t could start.
func (w *world) freeFrom(name string, created map[string][]creation, t time.Time) time.Time {
	from := t
	for moved := true; moved; {
		moved = false
		for _, creations := range created {
			for _, c := range creations {
				if !ownedBy(c.job, name) || c.at.After(from) {
					continue
				}
				finished := w.finishedAt(c.job)
				if finished.IsZero() && !w.deletedAt(c.job).IsZero() {
					finished = w.deletedAt(c.job)
				}
				switch {
				case finished.IsZero():
					return time.Time{}
				case finished.After(from):
					from, moved = finished, true
				}
			}
		}
	}
	return from
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
