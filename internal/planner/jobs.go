package planner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// observeJobs rebuilds active, lastScheduleTime and lastSuccessfulTime from
// the Jobs, so that status survives a crash between creating a Job and
// writing status, and returns the finished Jobs.
func (p *planning) observeJobs() []*batchv1.Job {
	status := &p.plan.Status
	wasActive := map[string]bool{}
	recorded := map[string]corev1.ObjectReference{}
	for _, ref := range status.Active {
		wasActive[string(ref.UID)] = true
		recorded[string(ref.UID)] = ref
	}
	jobs := slices.Clone(p.in.Jobs)
	slices.SortFunc(jobs, func(a, b *batchv1.Job) int { return strings.Compare(a.Name, b.Name) })

	var finished []*batchv1.Job
	present := map[string]bool{}
	status.Active = nil
	for _, job := range jobs {
		present[string(job.UID)] = true
		if scheduled, ok := ScheduledTime(job); ok && !isTriggered(job) {
			status.LastScheduleTime = later(status.LastScheduleTime, scheduled)
		}
		condition, done := finishedCondition(job)
		if !done {
			if !wasActive[string(job.UID)] && job.Annotations[v1alpha1.ScheduledTimestampAnnotation] == "" {
				// Jobs this controller creates always carry the scheduled
				// time; this one was made by someone else with a controller
				// reference to us. It counts as active all the same.
				p.event(corev1.EventTypeWarning, ReasonUnexpectedJob, "Saw a job that the controller did not create or forgot: "+job.Name)
			}
			// Keep a reference as it was recorded, as upstream does: its
			// resourceVersion would otherwise change with every update of
			// the Job (pod counts, conditions) and force a status write.
			ref, ok := recorded[string(job.UID)]
			if !ok {
				ref = refOf(job)
			}
			status.Active = append(status.Active, ref)
			p.active = append(p.active, job)
			continue
		}
		finished = append(finished, job)
		if wasActive[string(job.UID)] {
			p.event(corev1.EventTypeNormal, ReasonSawCompletedJob, fmt.Sprintf("Saw completed job: %s, condition: %s", job.Name, condition))
		}
		if condition == batchv1.JobComplete && job.Status.CompletionTime != nil {
			status.LastSuccessfulTime = later(status.LastSuccessfulTime, job.Status.CompletionTime.Time)
		}
	}
	for _, ref := range p.sj.Status.Active {
		if !present[string(ref.UID)] {
			p.event(corev1.EventTypeNormal, ReasonMissingJob, "Active job went missing: "+ref.Name)
		}
	}
	return finished
}

// finishedCondition returns Complete or Failed for a finished Job.
func finishedCondition(job *batchv1.Job) (batchv1.JobConditionType, bool) {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type, true
		}
	}
	return "", false
}

// isTriggered reports whether a Job was started by the trigger annotation.
// Such runs are recorded like scheduled ones (active, events, history) but do
// not move lastScheduleTime, so they neither hide a due run nor shift an
// @every schedule.
func isTriggered(job *batchv1.Job) bool {
	_, ok := job.Annotations[v1alpha1.TriggeredAnnotation]
	return ok
}

// ScheduledTime reads the scheduled time a Job was created for.
func ScheduledTime(job *batchv1.Job) (time.Time, bool) {
	value, ok := job.Annotations[v1alpha1.ScheduledTimestampAnnotation]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, value)
	return t, err == nil
}

func later(current *metav1.Time, t time.Time) *metav1.Time {
	if current == nil || t.After(current.Time) {
		return &metav1.Time{Time: t}
	}
	return current
}

// cleanupHistory deletes the oldest finished Jobs beyond the history
// limits, successful and failed separately, oldest start time first (Jobs
// that never started count as newest; ties go by name), as the CronJob
// controller does. Jobs already being deleted are neither counted nor
// deleted again (upstream would emit FailedDelete for them).
func (p *planning) cleanupHistory(finished []*batchv1.Job) {
	var succeeded, failed []*batchv1.Job
	for _, job := range finished {
		if job.DeletionTimestamp != nil {
			continue
		}
		if condition, _ := finishedCondition(job); condition == batchv1.JobComplete {
			succeeded = append(succeeded, job)
		} else {
			failed = append(failed, job)
		}
	}
	p.deleteOldest(succeeded, p.sj.Spec.SuccessfulJobsHistoryLimit)
	p.deleteOldest(failed, p.sj.Spec.FailedJobsHistoryLimit)
}

func (p *planning) deleteOldest(jobs []*batchv1.Job, limit *int32) {
	if limit == nil || len(jobs) <= int(*limit) {
		return
	}
	slices.SortFunc(jobs, byStartTime)
	for _, job := range jobs[:len(jobs)-int(*limit)] {
		p.plan.Deletes = append(p.plan.Deletes, Deletion{Job: job, Reason: DeleteForHistoryLimit})
	}
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
