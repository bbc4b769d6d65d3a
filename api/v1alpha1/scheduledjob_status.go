package v1alpha1

// Condition types.
const (
	// ConditionReady is True while the ScheduledJob is scheduling runs.
	ConditionReady = "Ready"
)

// Reasons of the Ready condition. They are API: tools match on them.
const (
	// ReasonScheduled: runs are being scheduled; the message says when
	// the next one is.
	ReasonScheduled = "Scheduled"
	// ReasonCompleted: a runAt ScheduledJob has started its one run.
	ReasonCompleted = "Completed"
	// ReasonSuspended: spec.suspend is true.
	ReasonSuspended = "Suspended"
	// ReasonInvalidSchedule: spec.schedule cannot be parsed or never fires.
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonUnknownTimeZone: spec.timeZone is not a zone the controller
	// knows.
	ReasonUnknownTimeZone = "UnknownTimeZone"
	// ReasonJobNameConflict: a Job with the name of a run exists and is
	// not owned by this ScheduledJob, so that run could not start.
	ReasonJobNameConflict = "JobNameConflict"
	// ReasonTerminating: the ScheduledJob is being deleted.
	ReasonTerminating = "Terminating"
)

// Annotations.
const (
	// ScheduledTimestampAnnotation is set on every Job to its run's
	// scheduled time (RFC 3339, in spec.timeZone), as the CronJob
	// controller does.
	ScheduledTimestampAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"
	// TriggerAnnotation asks for a run now: set it (ontime trigger does)
	// to any value that identifies the request, such as the time. The
	// controller starts one Job per value, obeying concurrencyPolicy, and
	// removes the annotation.
	TriggerAnnotation = "ontime.dev/trigger"
	// TriggeredAnnotation marks a Job started by TriggerAnnotation; its
	// value is the trigger's value.
	TriggeredAnnotation = "ontime.dev/triggered-by"
)
