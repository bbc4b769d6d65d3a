// Package backfillplan decides what a Backfill does next: a pure function of
// the Backfill, its ScheduledJob, the Jobs named for the ScheduledJob's
// runs, and now. The reconciler (internal/controller/backfill) reads and
// writes.
//
// Each time is started at most once (docs/reliability.md, "A backfill
// starts each time once"):
//
//   - A time is claimed in the Backfill's status (listed in status.active
//     by its Job's name, without a UID, and status.next moved past it)
//     before its Job is created. The status write is conditional on the
//     resourceVersion it was planned from, so two actors never claim the
//     same time, whatever their caches showed.
//   - A claim whose Job does not exist is created by whoever plans next,
//     from a Backfill and Jobs read from the API server, not a cache; a
//     claim that once had its Job (its UID is recorded) is never created
//     again.
//   - The backfill's own Jobs are deleted (for the history limits) only
//     once a status without their claim has been written, and their
//     ttlSecondsAfterFinished is at least MinJobTTL, longer than any
//     takeover: a Job is never gone while a claim still stands for it
//     without its UID.
//   - A time is the backfill's only once the live schedule can no longer
//     be starting it: SettleAfter past it, and before the ScheduledJob's
//     status.nextScheduleTime (which a catch-up holds in the past).
package backfillplan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/warmup"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// SettleAfter is how long after a time the backfill may take it: past the
// standby's window and a request's bound, no actor of the live schedule can
// still be creating its Job.
const SettleAfter = planner.StandbyWindow + planner.RequestBound

// MinJobTTL is the least ttlSecondsAfterFinished a backfill's Job gets: a
// Job deleted by its TTL before a successor recorded its UID would be
// created again.
const MinJobTTL int32 = 60

// stepsPerPass bounds the times one plan walks past (skipped ones), so
// that a reconcile stays short; the next pass goes on at once.
const stepsPerPass = 1000

// Event is an event to record on the Backfill.
type Event = warmup.Event

// Input is what a plan is made from.
type Input struct {
	Backfill *v1alpha1.Backfill
	// ScheduledJob is the one backfilled; nil when it does not exist.
	ScheduledJob *v1alpha1.ScheduledJob
	// Jobs are the Jobs with the ScheduledJob's label, by name: its runs'
	// and every backfill's of it. The Jobs of claims without a UID are
	// read from the API server.
	Jobs map[string]*batchv1.Job
	Now  time.Time
}

// Step is what to do: write Status (if it changed), then delete and
// create.
type Step struct {
	Status  v1alpha1.BackfillStatus
	Creates []*batchv1.Job
	// Deletes are Jobs to delete, each with its UID as precondition: a
	// time redo reruns (not the backfill's own Job), or a Job of the
	// backfill beyond the history limits.
	Deletes []*batchv1.Job
	Events  []Event
	// Wake is when to plan again if nothing changes (zero: on a change).
	Wake time.Time
}

// planning is one plan being made.
type planning struct {
	in     Input
	bf     *v1alpha1.Backfill
	sj     *v1alpha1.ScheduledJob
	runs   cron.Runs
	loc    *time.Location
	status *v1alpha1.BackfillStatus
	plan   *Step
}

// Decide plans the Backfill's next step.
func Decide(in Input) Step {
	plan := Step{Status: *in.Backfill.Status.DeepCopy()}
	p := &planning{in: in, bf: in.Backfill, sj: in.ScheduledJob, status: &plan.Status, plan: &plan}
	if meta.IsStatusConditionTrue(p.status.Conditions, v1alpha1.BackfillComplete) {
		if p.sj != nil {
			p.history() // the last runs, counted by the status that completed it
		}
		return plan
	}
	reason, message := p.read()
	p.observe()
	if reason != "" {
		p.waiting(reason, message)
	} else {
		p.advance()
	}
	p.finish(reason == "")
	if p.sj != nil {
		p.history()
	}
	return plan
}

// read finds the ScheduledJob's times; a reason when there are none to
// take.
func (p *planning) read() (reason, message string) {
	if p.sj == nil {
		return v1alpha1.ReasonScheduledJobNotFound, fmt.Sprintf("spec.scheduledJobName: ScheduledJob %q not found in namespace %q", p.bf.Spec.ScheduledJobName, p.bf.Namespace)
	}
	m, err := p.sj.Meaning(v1alpha1.PlacementChoices(p.sj.RecordedPlacement()))
	switch {
	case err != nil:
		return v1alpha1.ReasonNotBackfillable, fmt.Sprintf("ScheduledJob %s: %v", p.sj.Name, err)
	case !m.RunAt.IsZero():
		return v1alpha1.ReasonNotBackfillable, fmt.Sprintf("ScheduledJob %s runs once (spec.runAt): it has no schedule to backfill", p.sj.Name)
	case m.Schedule != nil && m.Schedule.Interval() > 0:
		return v1alpha1.ReasonNotBackfillable, fmt.Sprintf("ScheduledJob %s runs @every: its times count from its last run, so past ones are not known", p.sj.Name)
	}
	p.runs, p.loc = m.Runs(time.Time{}), m.Location
	if p.status.Total == 0 {
		total := count(p.runs, p.bf.Spec.From.Time, p.bf.Spec.To.Time)
		if total > v1alpha1.BackfillMaxTimes {
			return v1alpha1.ReasonBackfillTooManyTimes, fmt.Sprintf("spec.from to spec.to holds more than %d times of %q; split it into several Backfills", v1alpha1.BackfillMaxTimes, m.Effective())
		}
		p.status.Total = int32(total)
		if p.status.Next == nil {
			p.status.Next = timeOrNil(p.runs.Next(p.bf.Spec.From.Add(-time.Nanosecond)), p.bf.Spec.To.Time)
		}
	}
	if p.sj.Spec.Suspend != nil && *p.sj.Spec.Suspend {
		return v1alpha1.ReasonSuspended, fmt.Sprintf("ScheduledJob %s is suspended: its backfill waits for it to resume", p.sj.Name)
	}
	return "", ""
}

// count is how many times runs has from from to to, both included, up to
// one more than BackfillMaxTimes.
func count(runs cron.Runs, from, to time.Time) int {
	n := 0
	for t := runs.Next(from.Add(-time.Nanosecond)); !t.IsZero() && !t.After(to) && n <= v1alpha1.BackfillMaxTimes; t = runs.Next(t) {
		n++
	}
	return n
}

// timeOrNil is t, or nil if t is zero or after to: no time is left.
func timeOrNil(t, to time.Time) *metav1.Time {
	if t.IsZero() || t.After(to) {
		return nil
	}
	return &metav1.Time{Time: t}
}

// observe looks at every claimed run: records its Job's UID, counts it
// once finished, or decides what its time needs next.
func (p *planning) observe() {
	active := p.status.Active[:0:0]
	for _, ref := range p.status.Active {
		if p.observeRun(ref) {
			if job := p.in.Jobs[ref.Name]; job != nil && p.ours(job) {
				ref.UID = job.UID
			}
			active = append(active, ref)
		}
	}
	p.status.Active = active
}

// observeRun reports whether the run claimed by ref is still active.
func (p *planning) observeRun(ref corev1.ObjectReference) (active bool) {
	job := p.in.Jobs[ref.Name]
	switch {
	case job == nil && ref.UID != "":
		// Its Job existed and is gone (deleted by hand, or its TTL)
		// before the backfill saw it finish: counted as failed, not run
		// again.
		p.status.Failed++
		p.event(corev1.EventTypeWarning, v1alpha1.ReasonMissingJob, fmt.Sprintf("backfill Job %s was deleted before it finished; counted as failed, not run again", ref.Name))
		return false
	case job == nil:
		p.create(ref.Name)
		return true
	case p.ours(job):
		if ref.UID == "" {
			p.status.Started++
		}
		condition, finished := v1alpha1.JobFinished(job)
		if !finished {
			return true
		}
		if condition == batchv1.JobComplete {
			p.status.Succeeded++
		} else {
			p.status.Failed++
		}
		return false
	}
	return p.redo(job)
}

// redo handles a claimed time whose Job is not the backfill's own (the
// live schedule's, an earlier backfill's): rerun (delete it first), wait
// for it to finish, or skip the time.
func (p *planning) redo(job *batchv1.Job) (active bool) {
	if job.DeletionTimestamp != nil {
		return true // being deleted: created once it is gone
	}
	condition, finished := v1alpha1.JobFinished(job)
	switch p.bf.Spec.Redo {
	case v1alpha1.RedoAll:
		if finished {
			p.plan.Deletes = append(p.plan.Deletes, job)
		}
		return true
	case v1alpha1.RedoFailed:
		if finished && condition == batchv1.JobFailed {
			p.plan.Deletes = append(p.plan.Deletes, job)
			return true
		}
	}
	p.status.Skipped++
	return false
}

// wantsRun reports whether a time whose Job is job (nil: none) is to be
// claimed, as spec.redo says: Missing runs it if it has no Job, Failed
// also if its Job failed, All whatever its Job.
func (p *planning) wantsRun(job *batchv1.Job) bool {
	switch {
	case job == nil:
		return true
	case p.ours(job):
		return false
	case p.bf.Spec.Redo == v1alpha1.RedoAll:
		return true
	case p.bf.Spec.Redo == v1alpha1.RedoFailed:
		condition, finished := v1alpha1.JobFinished(job)
		return finished && condition == batchv1.JobFailed
	}
	return false
}

// advance claims the next times while fewer than maxActive runs are active,
// and skips those spec.redo does not ask for.
func (p *planning) advance() {
	if reason, message := p.liveRunActive(); reason != "" {
		p.waiting(reason, message)
		return
	}
	room := max(1, int(p.bf.Spec.MaxActive)) - len(p.status.Active)
	for steps := 0; room > 0 && p.status.Next != nil; steps++ {
		if steps == stepsPerPass {
			p.wake(p.in.Now)
			return
		}
		t := p.status.Next.Time
		if reason, message := p.liveOwns(t); reason != "" {
			p.waiting(reason, message)
			return
		}
		name := p.sj.JobName(t)
		if p.wantsRun(p.in.Jobs[name]) {
			p.status.Active = append(p.status.Active, corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: p.bf.Namespace, Name: name})
			p.create(name)
			room--
		} else {
			p.status.Skipped++
		}
		p.status.Next = timeOrNil(p.runs.Next(t), p.bf.Spec.To.Time)
	}
	p.progressing()
}

// liveRunActive is why no backfill run may start now: under an active limit
// (Forbid, Replace's one run, maxActive), the ScheduledJob's own runs come
// first, and a backfill run starts only while none is active.
func (p *planning) liveRunActive() (reason, message string) {
	_, limited := p.sj.ActiveLimit()
	limited = limited || p.sj.Spec.ConcurrencyPolicy == v1alpha1.ReplaceConcurrent
	if !limited || len(p.sj.Status.Active) == 0 {
		return "", ""
	}
	return v1alpha1.ReasonWaitingForLiveRun, fmt.Sprintf("ScheduledJob %s has a run of its own active (concurrencyPolicy %s): backfill runs start between its runs",
		p.sj.Name, p.sj.Spec.ConcurrencyPolicy)
}

// liveOwns is why the time t is not the backfill's yet: the live schedule
// may still start it.
func (p *planning) liveOwns(t time.Time) (reason, message string) {
	if settled := t.Add(SettleAfter); p.in.Now.Before(settled) {
		p.wake(settled)
		return v1alpha1.ReasonWaitingForLiveSchedule, fmt.Sprintf("the run at %s is the live schedule's until %s", utc(t), utc(settled))
	}
	if next := p.sj.Status.NextScheduleTime; next != nil && !t.Before(next.Time) {
		return v1alpha1.ReasonWaitingForLiveSchedule, fmt.Sprintf("the live schedule has not passed %s yet (its next run is at %s)", utc(t), utc(next.Time))
	}
	return "", ""
}

// create plans the creation of the claimed time's Job.
func (p *planning) create(name string) {
	if p.runs == nil {
		return // created once the ScheduledJob can be read again
	}
	t, ok := v1alpha1.RunTimeOfJobName(p.sj.Name, name)
	if !ok {
		return
	}
	job := planner.RunJob(p.sj, t, p.loc)
	job.Labels[v1alpha1.BackfillLabel] = p.bf.Name
	// In a concurrency group, a backfill run waits as long as it takes:
	// its scheduled time is long past.
	delete(job.Annotations, v1alpha1.StartByAnnotation)
	job.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(p.bf, v1alpha1.GroupVersion.WithKind("Backfill"))}
	if ttl := job.Spec.TTLSecondsAfterFinished; ttl != nil && *ttl < MinJobTTL {
		job.Spec.TTLSecondsAfterFinished = ptr.To(MinJobTTL)
	}
	p.plan.Creates = append(p.plan.Creates, job)
}

// ours reports whether job is one this Backfill created.
func (p *planning) ours(job *batchv1.Job) bool {
	owner := metav1.GetControllerOf(job)
	return owner != nil && owner.UID == p.bf.UID && job.Labels[v1alpha1.BackfillLabel] == p.bf.Name
}

// finish counts what is done, and completes the backfill once every time
// is done and no run is active (only when its times could be read).
func (p *planning) finish(read bool) {
	p.status.ActiveCount = int32(len(p.status.Active))
	done := p.status.Succeeded + p.status.Failed + p.status.Skipped
	p.status.Done = fmt.Sprintf("%d/%d", done, p.status.Total)
	if !read {
		return
	}
	if p.status.Next != nil || len(p.status.Active) > 0 {
		p.setCondition(v1alpha1.BackfillComplete, metav1.ConditionFalse, v1alpha1.ReasonBackfilling, p.status.Done+" times done")
		return
	}
	p.status.CompletionTime = &metav1.Time{Time: p.in.Now}
	message := fmt.Sprintf("%d times: %d succeeded, %d failed, %d skipped (their Job existed)", p.status.Total, p.status.Succeeded, p.status.Failed, p.status.Skipped)
	p.setCondition(v1alpha1.BackfillComplete, metav1.ConditionTrue, v1alpha1.ReasonCompleted, message)
	p.setCondition(v1alpha1.BackfillProgressing, metav1.ConditionFalse, v1alpha1.ReasonCompleted, message)
	p.event(corev1.EventTypeNormal, v1alpha1.ReasonBackfillCompleted, "backfill of "+p.sj.Name+" complete: "+message)
}

// history deletes the backfill's finished Jobs beyond the ScheduledJob's
// history limits, oldest time first. Only Jobs no claim stands for are
// deleted: a status that counted them has been written.
func (p *planning) history() {
	var succeeded, failed []*batchv1.Job
	for _, job := range p.in.Jobs {
		condition, finished := v1alpha1.JobFinished(job)
		if !p.ours(job) || !finished || job.DeletionTimestamp != nil || slices.ContainsFunc(p.bf.Status.Active, func(ref corev1.ObjectReference) bool { return ref.Name == job.Name }) {
			continue
		}
		if condition == batchv1.JobComplete {
			succeeded = append(succeeded, job)
		} else {
			failed = append(failed, job)
		}
	}
	p.plan.Deletes = append(p.plan.Deletes, beyond(succeeded, p.sj.Spec.SuccessfulJobsHistoryLimit)...)
	p.plan.Deletes = append(p.plan.Deletes, beyond(failed, p.sj.Spec.FailedJobsHistoryLimit)...)
}

// beyond are the oldest Jobs past limit (nil: no limit), by name, which
// orders a ScheduledJob's runs by time.
func beyond(jobs []*batchv1.Job, limit *int32) []*batchv1.Job {
	if limit == nil || len(jobs) <= int(*limit) {
		return nil
	}
	slices.SortFunc(jobs, func(a, b *batchv1.Job) int { return compareRuns(a.Name, b.Name) })
	return jobs[:len(jobs)-int(*limit)]
}

// compareRuns orders two run Job names of one ScheduledJob by time: the
// longer suffix is the later.
func compareRuns(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

// waiting records why the backfill waits.
func (p *planning) waiting(reason, message string) {
	p.setCondition(v1alpha1.BackfillProgressing, metav1.ConditionFalse, reason, message)
	p.setCondition(v1alpha1.BackfillComplete, metav1.ConditionFalse, reason, message)
	p.wake(p.in.Now.Add(time.Minute))
}

// progressing records that the backfill is under way.
func (p *planning) progressing() {
	p.setCondition(v1alpha1.BackfillProgressing, metav1.ConditionTrue, v1alpha1.ReasonBackfilling,
		fmt.Sprintf("%d runs active (at most %d)", len(p.status.Active), max(1, p.bf.Spec.MaxActive)))
}

func (p *planning) setCondition(kind string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&p.status.Conditions, metav1.Condition{Type: kind, Status: status, Reason: reason, Message: message,
		ObservedGeneration: p.bf.Generation, LastTransitionTime: metav1.Time{Time: p.in.Now}})
}

func (p *planning) event(kind, reason, message string) {
	p.plan.Events = append(p.plan.Events, Event{Type: kind, Reason: reason, Message: message})
}

// wake has the plan made again at t at the latest.
func (p *planning) wake(t time.Time) {
	if p.plan.Wake.IsZero() || t.Before(p.plan.Wake) {
		p.plan.Wake = t
	}
}

func utc(t time.Time) string { return t.UTC().Format(time.RFC3339) }
