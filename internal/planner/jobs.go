package planner

import (
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// observation is what a ScheduledJob's Jobs say, so that status survives a
// crash between creating a Job and writing status.
type observation struct {
	// active and finished are the Jobs, sorted by name.
	active, finished []*batchv1.Job
	// activeRefs is status.active rebuilt: the active Jobs and the claims
	// whose Jobs do not exist yet.
	activeRefs []corev1.ObjectReference
	// claims are the claimed runs whose Jobs do not exist (yet), by Job
	// name.
	claims []string
	// missed are the Jobs whose runs waited in their concurrency group
	// past their starting deadline and were marked missed: they never
	// ran, are not active, and go at once (history keeps none);
	// lastMissed is the latest of their scheduled times.
	missed       []*batchv1.Job
	lastMissed   time.Time
	lastSchedule *metav1.Time
	lastSuccess  *metav1.Time
	events       []Event
}

// record writes what the Jobs say into status.
func (o observation) record(status *v1alpha1.ScheduledJobStatus) {
	setActive(status, o.activeRefs)
	setLastScheduleTime(status, o.lastSchedule)
	setLastSuccessfulTime(status, o.lastSuccess)
}

// observeJobs rebuilds active, lastScheduleTime and lastSuccessfulTime from
// the Jobs and the status last written, and sees which Jobs finished or went
// missing. A Job created early for a run still to come (EarlyStart) is
// active, but does not move lastScheduleTime before its time.
func observeJobs(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, deleted map[types.UID]bool, now time.Time) observation {
	recorded := map[string]corev1.ObjectReference{}
	claims := map[string]bool{}
	for _, ref := range sj.Status.Active {
		if isClaim(ref) {
			claims[ref.Name] = true
		} else {
			recorded[string(ref.UID)] = ref
		}
	}
	jobs = slices.Clone(jobs)
	slices.SortFunc(jobs, func(a, b *batchv1.Job) int { return strings.Compare(a.Name, b.Name) })

	o := observation{lastSchedule: sj.Status.LastScheduleTime, lastSuccess: sj.Status.LastSuccessfulTime}
	present := map[string]bool{}
	for _, job := range jobs {
		present[string(job.UID)] = true
		if scheduled, ok := v1alpha1.ScheduledTime(job); ok && !v1alpha1.IsTriggered(job) && (!scheduled.After(now) || !createdEarly(job)) {
			o.lastSchedule = later(o.lastSchedule, scheduled)
		}
		ref, wasActive := recorded[string(job.UID)]
		if claims[job.Name] {
			// The claimed run's Job: it was active from its claim on.
			delete(claims, job.Name)
			wasActive = true
		}
		if at, missed := v1alpha1.MissedInGroup(job); missed && suspendedJob(job) {
			o.missed = append(o.missed, job)
			o.lastMissed = latest(o.lastMissed, at)
			continue
		}
		condition, done := v1alpha1.JobFinished(job)
		if !done {
			o.observeActive(job, ref, wasActive)
			continue
		}
		if wasActive {
			o.events = append(o.events, sawCompletedJobEvent(job, condition))
		}
		o.finished = append(o.finished, job)
		if condition == batchv1.JobComplete && job.Status.CompletionTime != nil {
			o.lastSuccess = later(o.lastSuccess, job.Status.CompletionTime.Time)
		}
	}
	o.observeGone(sj, jobs, present, claims, deleted, now)
	return o
}

// observeGone looks at the entries of status.active without a Job: claims
// whose Job does not exist yet stay active; a Job gone that this
// controller did not delete, nor a later run replaced, is reported
// missing.
func (o *observation) observeGone(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, present, claims map[string]bool, deleted map[types.UID]bool, now time.Time) {
	for _, ref := range sj.Status.Active {
		switch {
		case isClaim(ref) && claims[ref.Name]:
			o.claims = append(o.claims, ref.Name)
			o.activeRefs = append(o.activeRefs, ref)
		case !isClaim(ref) && !present[string(ref.UID)] && !deleted[ref.UID] && !replacedByLaterRun(sj, ref, jobs, now):
			o.events = append(o.events, missingJobEvent(ref.Name))
		}
	}
}

// replacedByLaterRun reports whether a Job status.active names, gone,
// was replaced: under concurrencyPolicy Replace a later run's Job exists,
// or a later scheduled run came due by now. A leader that replaced it may
// have died before writing the status without it, or, since it deletes
// before it creates, before creating the later run's Job (an API outage
// between the two, and the later run's deadline passed meanwhile). A Job
// deleted by hand once a later run came due is one Replace would have
// deleted: it is not reported either.
func replacedByLaterRun(sj *v1alpha1.ScheduledJob, ref corev1.ObjectReference, jobs []*batchv1.Job, now time.Time) bool {
	if sj.Spec.ConcurrencyPolicy != v1alpha1.ReplaceConcurrent {
		return false
	}
	gone, scheduled := claimMinute(sj, ref.Name)
	for _, job := range jobs {
		at, ok := v1alpha1.ScheduledTime(job)
		if job.Name != ref.Name && (!scheduled || (ok && at.After(gone))) {
			return true
		}
	}
	return scheduled && laterRunCameDue(sj, gone, now)
}

// laterRunCameDue reports whether sj's schedule has a run after at that
// came due by now. It reads the schedule as the status last recorded it
// (its last scheduled time, its spread placement); asked only for a Job
// gone under Replace without a later one, it costs a normal reconcile
// nothing.
func laterRunCameDue(sj *v1alpha1.ScheduledJob, at, now time.Time) bool {
	spec := scheduleOf(sj, timeOf(sj.Status.LastScheduleTime), sj.RecordedPlacement())
	if spec.schedule == nil {
		return false
	}
	next := spec.schedule.Next(at)
	return !next.IsZero() && !next.After(now)
}

// observeActive adds an unfinished Job. ref is its status.active entry, if
// it was listed there.
func (o *observation) observeActive(job *batchv1.Job, ref corev1.ObjectReference, wasActive bool) {
	if !wasActive && job.Annotations[v1alpha1.ScheduledTimestampAnnotation] == "" {
		// Jobs this controller creates always carry the scheduled time; this
		// one was made by someone else with a controller reference to us. It
		// counts as active all the same.
		o.events = append(o.events, unexpectedJobEvent(job.Name))
	}
	// Keep a reference as it was recorded, as upstream does: its
	// resourceVersion would otherwise change with every update of the Job
	// (pod counts, conditions) and force a status write. A claim gets the
	// Job's reference.
	if !wasActive || isClaim(ref) {
		ref = refOf(job)
	}
	o.activeRefs = append(o.activeRefs, ref)
	o.active = append(o.active, job)
}

// suspendedJob reports whether a Job is suspended (a run waiting in its
// concurrency group).
func suspendedJob(job *batchv1.Job) bool {
	return job.Spec.Suspend != nil && *job.Spec.Suspend
}

// createdEarly reports whether a Job was created ahead of its run by
// EarlyStart warm-up: its pods wait for their release time.
func createdEarly(job *batchv1.Job) bool {
	return job.Spec.Template.Annotations[v1alpha1.ReleaseAtAnnotation] != ""
}

// historyDeletions are the oldest finished Jobs beyond the history limits,
// successful and failed separately, oldest start time first (Jobs that
// never started count as newest; ties go by name), as the CronJob
// controller deletes them. Jobs already being deleted are neither counted
// nor deleted again (upstream would emit FailedDelete for them). A Job
// whose deletion could let its run start again is kept, and wake says when
// to look again: a run's Job before its historyFence, and a trigger's Job
// while the trigger annotation still asks for it (its request is recorded
// as handled by the annotation's removal). A run status.failures has not
// counted yet is kept until it is.
func historyDeletions(sj *v1alpha1.ScheduledJob, sched schedule, finished, missed []*batchv1.Job, streak *v1alpha1.FailureStreak, now time.Time) (deletions []Deletion, wake []time.Time) {
	var succeeded, failed []*batchv1.Job
	for _, job := range finished {
		if job.DeletionTimestamp != nil {
			continue
		}
		if condition, _ := v1alpha1.JobFinished(job); condition == batchv1.JobComplete {
			succeeded = append(succeeded, job)
		} else {
			failed = append(failed, job)
		}
	}
	request := sj.Annotations[v1alpha1.TriggerAnnotation]
	beyond := append(oldestBeyond(succeeded, sj.Spec.SuccessfulJobsHistoryLimit), oldestBeyond(failed, sj.Spec.FailedJobsHistoryLimit)...)
	for _, job := range missed {
		if job.DeletionTimestamp == nil {
			// A missed run never ran: no history limit keeps its Job.
			beyond = append(beyond, Deletion{Job: job, Reason: DeleteForHistoryLimit})
		}
	}
	for _, deletion := range beyond {
		job := deletion.Job
		if awaitsCount(job, streak) {
			continue // counted first (spec.suspendAfterFailures), then deleted after the status that counts it
		}
		if fence := historyFence(sched, job); fence.After(now) {
			wake = append(wake, fence)
			continue
		}
		if value, ok := job.Annotations[v1alpha1.TriggeredAnnotation]; ok && value == request {
			continue
		}
		deletions = append(deletions, deletion)
	}
	return deletions, wake
}

func oldestBeyond(jobs []*batchv1.Job, limit *int32) []Deletion {
	if limit == nil || len(jobs) <= int(*limit) {
		return nil
	}
	slices.SortFunc(jobs, byStartTime)
	var deletes []Deletion
	for _, job := range jobs[:len(jobs)-int(*limit)] {
		deletes = append(deletes, Deletion{Job: job, Reason: DeleteForHistoryLimit})
	}
	return deletes
}

// byStartTime orders Jobs by status.startTime, nil last, then by name.
func byStartTime(a, b *batchv1.Job) int {
	switch {
	case a.Status.StartTime == nil && b.Status.StartTime == nil:
		return strings.Compare(a.Name, b.Name)
	case a.Status.StartTime == nil:
		return 1
	case b.Status.StartTime == nil:
		return -1
	case !a.Status.StartTime.Equal(b.Status.StartTime):
		return a.Status.StartTime.Compare(b.Status.StartTime.Time)
	}
	return strings.Compare(a.Name, b.Name)
}
