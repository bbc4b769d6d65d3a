package planner

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Event is a Kubernetes event to record on the ScheduledJob: warm-up's
// type, so that the planner passes warm-up's events on as they are.
type Event = warmup.Event

func newEvent(eventType, reason, message string) Event {
	return Event{Type: eventType, Reason: reason, Message: message}
}

// Every event the ScheduledJob controller emits is built here, one
// constructor each, so that what it can say, and in which words, has one
// answer. Reasons are declared in api/v1alpha1; the messages are upstream's
// where upstream has the event.

func sawCompletedJobEvent(job *batchv1.Job, condition batchv1.JobConditionType) Event {
	return newEvent(corev1.EventTypeNormal, v1alpha1.ReasonSawCompletedJob, fmt.Sprintf("Saw completed job: %s, condition: %s", job.Name, condition))
}

func missingJobEvent(name string) Event {
	return newEvent(corev1.EventTypeNormal, v1alpha1.ReasonMissingJob, "Active job went missing: "+name)
}

func unexpectedJobEvent(name string) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonUnexpectedJob, "Saw a job that the controller did not create or forgot: "+name)
}

// jobAlreadyActiveEvent: a due run waits at the active limit, with active
// runs counting against it; under Forbid in the CronJob controller's words.
func jobAlreadyActiveEvent(sj *v1alpha1.ScheduledJob, active int) Event {
	return newEvent(corev1.EventTypeNormal, v1alpha1.ReasonJobAlreadyActive, "Not starting job because "+limitReached(sj, active))
}

func triggerRefusedEvent(sj *v1alpha1.ScheduledJob, active int) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonJobAlreadyActive, "Not starting triggered job because "+limitReached(sj, active))
}

// limitReached says which limit the active runs reached.
func limitReached(sj *v1alpha1.ScheduledJob, active int) string {
	if limit, _ := sj.ActiveLimit(); sj.Spec.ConcurrencyPolicy != v1alpha1.ForbidConcurrent {
		return fmt.Sprintf("%d prior executions are running and maxActive is %d", active, limit)
	}
	return "prior execution is running and concurrency policy is Forbid"
}

func missScheduleEvent(scheduled time.Time) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonMissSchedule, "Missed scheduled time to start a job: "+scheduled.UTC().Format(time.RFC1123Z))
}

func tooManyMissedTimesEvent(missed int) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonTooManyMissedTimes,
		fmt.Sprintf("too many missed start times (%d). Set or decrease .spec.startingDeadlineSeconds or check clock skew", missed))
}

// catchUpEvent announces a catch-up: the runs it starts, and those
// dropped beyond spec.catchUp.maxRuns or the deadline.
func catchUpEvent(c *v1alpha1.CatchUpStatus) Event {
	message := fmt.Sprintf("catching up %d missed runs, oldest first, from %s through %s", c.Runs,
		c.From.UTC().Format(time.RFC3339), c.Through.UTC().Format(time.RFC3339))
	if c.Dropped > 0 {
		message += fmt.Sprintf("; %d older missed runs dropped (spec.catchUp.maxRuns, startingDeadlineSeconds)", c.Dropped)
	}
	return newEvent(corev1.EventTypeNormal, v1alpha1.ReasonCatchUp, message)
}

// UndecodableEvent reports a stored ScheduledJob that could not be decoded
// (v1alpha1.ScheduledJob.DecodeError); the controller emits it without
// planning, as nothing about the object but its name is known.
func UndecodableEvent(decodeError string) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonUndecodable,
		fmt.Sprintf("Cannot decode the stored object: %s. It does not run, and its Jobs are left alone, until it is fixed (kubectl edit) or deleted", decodeError))
}

func unknownTimeZoneEvent(message string) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonUnknownTimeZone, message)
}

func unparseableScheduleEvent(message string) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonUnparseableSchedule, message)
}

func invalidScheduleEvent(message string) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonInvalidSchedule, message)
}

func spreadPendingEvent(message string) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonSpreadPending, message)
}

func unsupportedScheduleEvent(schedule string) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonUnsupportedSchedule,
		fmt.Sprintf("CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", schedule))
}

func successfulCreateEvent(job *batchv1.Job) Event {
	return newEvent(corev1.EventTypeNormal, v1alpha1.ReasonSuccessfulCreate, "Created job "+job.Name)
}

func triggeredEvent(job *batchv1.Job) Event {
	return newEvent(corev1.EventTypeNormal, v1alpha1.ReasonTriggered,
		fmt.Sprintf("Started job %s on request %q", job.Name, job.Annotations[v1alpha1.TriggeredAnnotation]))
}

func failedCreateEvent(err error) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonFailedCreate, fmt.Sprintf("Error creating job: %v", err))
}

func jobNameConflictEvent(message string) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonJobNameConflict, message)
}

func successfulDeleteEvent(job *batchv1.Job) Event {
	return newEvent(corev1.EventTypeNormal, v1alpha1.ReasonSuccessfulDelete, "Deleted job "+job.Name)
}

func failedDeleteEvent(err error) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonFailedDelete, fmt.Sprintf("Deleted job: %v", err))
}

// FailedGetEvent reports that reading a Job listed in status.active from
// the API server failed, while gathering the planner's input.
func FailedGetEvent(err error) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonFailedGet, fmt.Sprintf("Get job: %v", err))
}
