package planner

// Event reasons. They are the CronJob controller's (research §2.11), so
// alerts and dashboards written for CronJobs keep working, plus
// JobNameConflict and Triggered.
const (
	ReasonSuccessfulCreate    = "SuccessfulCreate"
	ReasonFailedCreate        = "FailedCreate"
	ReasonSawCompletedJob     = "SawCompletedJob"
	ReasonMissingJob          = "MissingJob"
	ReasonUnexpectedJob       = "UnexpectedJob"
	ReasonJobAlreadyActive    = "JobAlreadyActive"
	ReasonSuccessfulDelete    = "SuccessfulDelete"
	ReasonFailedDelete        = "FailedDelete"
	ReasonFailedGet           = "FailedGet"
	ReasonMissSchedule        = "MissSchedule"
	ReasonTooManyMissedTimes  = "TooManyMissedTimes"
	ReasonUnparseableSchedule = "UnparseableSchedule"
	ReasonInvalidSchedule     = "InvalidSchedule"
	ReasonUnknownTimeZone     = "UnknownTimeZone"
	ReasonUnsupportedSchedule = "UnsupportedSchedule"
	// ReasonJobNameConflict: a Job of a run's name exists and is not ours.
	ReasonJobNameConflict = "JobNameConflict"
	// ReasonTriggered: a run was started by the trigger annotation.
	ReasonTriggered = "Triggered"
)
