package v1alpha1

// Condition types.
const (
	// ConditionReady is True while the ScheduledJob is scheduling runs.
	ConditionReady = "Ready"
	// ConditionCapacityReady, with spec.warmUp, says whether the capacity
	// for the coming (or just started) run has arrived.
	ConditionCapacityReady = "CapacityReady"
	// ConditionDeadlineAtRisk, with spec.deadline, is True while the latest
	// run is predicted to succeed after its deadline, or has missed it, or
	// the next run cannot succeed by its own (DeadlineInfeasible). It is
	// kept apart from Ready: a deadline at risk stops no run.
	ConditionDeadlineAtRisk = "DeadlineAtRisk"
)

// Reasons of the CapacityReady condition.
const (
	// ReasonWarmingUp: warm-up has begun and not every warm-up pod has a
	// node yet; or, between runs, warm-up for the next run has not begun.
	ReasonWarmingUp = "WarmingUp"
	// ReasonCapacityReady: every warm-up pod of the coming run has a node.
	ReasonCapacityReady = "CapacityReady"
	// ReasonCapacityLate: the run started before its capacity was ready.
	ReasonCapacityLate = "CapacityLate"
	// ReasonWarmUpFailed: warm-up pods could not be created (for example,
	// the placeholder PriorityClass does not exist).
	ReasonWarmUpFailed = "WarmUpFailed"
	// ReasonInvalidWarmUp: spec.warmUp breaks a rule admission enforces
	// (the object was stored without the webhook); runs start at their
	// time without warm-up until it is fixed.
	ReasonInvalidWarmUp = "InvalidWarmUp"
	// ReasonCapacityBufferUnavailable: the strategy is CapacityBuffer and
	// the cluster does not serve the CapacityBuffer API.
	ReasonCapacityBufferUnavailable = "CapacityBufferUnavailable"
	// ReasonNotSelected (also an event reason of concurrency groups): the
	// ScheduledJob's ClusterConcurrencyGroup does not select its
	// namespace, so its runs are refused and none is warmed.
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
	// ReasonSuspendedAfterFailures: spec.suspendAfterFailures runs failed
	// in a row, and the controller suspended the ScheduledJob (Ready's
	// reason, and the event naming the failed Jobs).
	ReasonSuspendedAfterFailures = "SuspendedAfterFailures"
	// ReasonLateStart: a run started later than spec.startObjective.within
	// after its time, or had not started a minute after that (a Warning
	// event naming where most of its time went).
	ReasonLateStart = "LateStart"
	// ReasonDeadlineAtRisk: under spec.deadline, the latest run is
	// predicted to succeed after its deadline (DeadlineAtRisk's reason, and
	// an event once per run).
	ReasonDeadlineAtRisk = "DeadlineAtRisk"
	// ReasonDeadlineMissed: the latest run's deadline passed before it
	// succeeded (DeadlineAtRisk's reason, and an event once per run).
	ReasonDeadlineMissed = "DeadlineMissed"
	// ReasonDeadlineInfeasible: the next run cannot succeed by its
	// deadline even if it starts as soon as it can: runs take longer than
	// the deadline allows, the run before it holds it back (Forbid,
	// maxActive) or is replaced (Replace) first, or its concurrency group
	// predicts it is admitted too late (DeadlineAtRisk True, and an event
	// when it becomes so).
	ReasonDeadlineInfeasible = "DeadlineInfeasible"
	// ReasonOnTrack: the latest run succeeded, or is predicted to succeed,
	// by its deadline (DeadlineAtRisk False).
	ReasonOnTrack = "OnTrack"
	// ReasonRunSucceeded: the latest run succeeded; the message says
	// whether by its deadline (DeadlineAtRisk False).
	ReasonRunSucceeded = "RunSucceeded"
	// ReasonInvalidSchedule: spec.schedule cannot run: it never fires or
	// runs less than a minute apart (the condition's reason also when it
	// does not parse; the event then says UnparseableSchedule).
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonUnknownTimeZone: spec.timeZone is not a zone the controller
	// knows.
	ReasonUnknownTimeZone = "UnknownTimeZone"
	// ReasonJobNameConflict: a Job with the name of a run exists and is
	// not owned by this ScheduledJob, so that run could not start.
	ReasonJobNameConflict = "JobNameConflict"
	// ReasonTerminating: the ScheduledJob is being deleted.
	ReasonTerminating = "Terminating"
	// ReasonSpreadPending: under a Balanced spread, the ScheduledJob has
	// no place in its group yet (the controller could not update the
	// group's ConfigMap; it retries). No run starts before it has one.
	ReasonSpreadPending = "SpreadPending"
	// ReasonInvalidSpec: the spec breaks a rule admission enforces (the
	// object was stored without the webhook: not installed yet,
	// failurePolicy Ignore, an excluded namespace); no run starts until it
	// is fixed. The message names each field and value, as the webhook
	// would have.
	ReasonInvalidSpec = "InvalidSpec"
)

// Event reasons. They are API too: alerts and dashboards match on them.
// They are the CronJob controller's (kubernetes/kubernetes
// pkg/controller/cronjob/cronjob_controllerv2.go and utils.go), so
// that what was written for CronJobs keeps working, plus ReasonTriggered;
// ReasonInvalidSchedule, ReasonUnknownTimeZone and ReasonJobNameConflict
// above name an event as well as a condition.
const (
	// ReasonSuccessfulCreate: a run's Job was created.
	ReasonSuccessfulCreate = "SuccessfulCreate"
	// ReasonFailedCreate: creating a run's Job failed; it is retried.
	ReasonFailedCreate = "FailedCreate"
	// ReasonSawCompletedJob: an active Job finished.
	ReasonSawCompletedJob = "SawCompletedJob"
	// ReasonMissingJob: a Job listed in status.active no longer exists.
	ReasonMissingJob = "MissingJob"
	// ReasonUnexpectedJob: a Job controlled by the ScheduledJob that the
	// controller did not create.
	ReasonUnexpectedJob = "UnexpectedJob"
	// ReasonJobAlreadyActive: concurrencyPolicy Forbid holds a run back.
	ReasonJobAlreadyActive = "JobAlreadyActive"
	// ReasonSuccessfulDelete: a Job was deleted (history limit, Replace).
	ReasonSuccessfulDelete = "SuccessfulDelete"
	// ReasonFailedDelete: deleting a Job failed.
	ReasonFailedDelete = "FailedDelete"
	// ReasonFailedGet: reading a Job from the API server failed.
	ReasonFailedGet = "FailedGet"
	// ReasonMissSchedule: a run was later than startingDeadlineSeconds and
	// did not start.
	ReasonMissSchedule = "MissSchedule"
	// ReasonTooManyMissedTimes: more than 100 runs were missed at once.
	ReasonTooManyMissedTimes = "TooManyMissedTimes"
	// ReasonUnparseableSchedule: spec.schedule does not parse.
	ReasonUnparseableSchedule = "UnparseableSchedule"
	// ReasonUnsupportedSchedule: spec.schedule has a TZ= or CRON_TZ=
	// prefix, which Kubernetes only tolerates on old objects.
	ReasonUnsupportedSchedule = "UnsupportedSchedule"
	// ReasonCatchUp: after an outage, missed runs start oldest first
	// (spec.catchUp); the event says how many, and how many were dropped.
	ReasonCatchUp = "CatchUp"
	// ReasonTriggered: a run was started by TriggerAnnotation.
	ReasonTriggered = "Triggered"
	// ReasonUndecodable: the stored ScheduledJob has a value this version
	// cannot decode (ScheduledJob.DecodeError); the controller leaves it
	// and its Jobs alone until it is fixed or deleted.
	ReasonUndecodable = "Undecodable"
	// ReasonWarmUpStarted: warm-up for a run began.
	ReasonWarmUpStarted = "WarmUpStarted"
	// ReasonWarmUpReady: the capacity for a run is ready.
	ReasonWarmUpReady = "WarmUpReady"
	// ReasonWarmUpLate: a run started before its capacity was ready.
	ReasonWarmUpLate = "WarmUpLate"
	// ReasonWarmUpCanceled: warm-up pods were deleted before their run
	// started because it will not start (suspended, schedule edited,
	// concurrencyPolicy Forbid, past its deadline).
	ReasonWarmUpCanceled = "WarmUpCanceled"
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
	// WarmUpLeadAnnotation on a batch/v1 CronJob asks ontime for
	// Placeholder warm-up this long (a duration, such as "10m") before each
	// of its runs. ontime never changes the CronJob's spec; it records
	// the warm-up in WarmUpStateAnnotation.
	WarmUpLeadAnnotation = "warmup.ontime.dev/lead"
	// WarmUpStrategyAnnotation on an annotated CronJob chooses how its
	// capacity is brought up: Placeholder (default) or CapacityBuffer.
	// EarlyStart needs ontime to create the runs' Jobs, which only a
	// ScheduledJob does.
	WarmUpStrategyAnnotation = "warmup.ontime.dev/strategy"
	// WarmUpStateAnnotation on an annotated CronJob is written by ontime:
	// its warm-up state (CronJobWarmUpState, as JSON), which a CronJob has
	// no status field for. Kept on the CronJob so that it survives a
	// controller restart or failover and goes with the CronJob.
	WarmUpStateAnnotation = "warmup.ontime.dev/state"
	// ReleaseAtAnnotation on an EarlyStart pod is when `ontime-wait` lets
	// the run's commands start: the run's scheduled time (RFC 3339).
	ReleaseAtAnnotation = "ontime.dev/release-at"
	// DeadlineAnnotation is set on a scheduled run's Job, when its
	// ScheduledJob has spec.deadline, to the time the run must have
	// succeeded by (RFC 3339, UTC), as the deadline in force when the Job
	// was made says. The run is judged by it, whatever spec.deadline
	// later becomes: a changed deadline never reports an earlier run.
	DeadlineAnnotation = "ontime.dev/deadline"
)

// ScheduledJobLabel is on every Job ontime creates for a ScheduledJob; its
// value is the ScheduledJob's name. It lets the controller cache only the
// Jobs it owns (ontime controller --job-cache=owned), and lets users select
// a ScheduledJob's Jobs (kubectl get jobs -l ontime.dev/scheduledjob=NAME).
// It overrides a label of the same key in the Job template.
const ScheduledJobLabel = "ontime.dev/scheduledjob"

// Labels of warm-up pods (placeholders and EarlyStart pods), so that the
// controller watches them and nothing else.
const (
	// WarmUpLabel is "placeholder", "early-start" or, on a CapacityBuffer
	// and its PodTemplate, "capacity-buffer".
	WarmUpLabel = "ontime.dev/warm-up"
	// OwnerKindLabel, OwnerNameLabel and OwnerUIDLabel name the
	// ScheduledJob or CronJob a warm-up pod belongs to.
	OwnerKindLabel = "ontime.dev/owner-kind"
	OwnerNameLabel = "ontime.dev/owner-name"
	OwnerUIDLabel  = "ontime.dev/owner-uid"
	// RunLabel is the run's scheduled time in minutes since the epoch, as
	// in its Job's name.
	RunLabel = "ontime.dev/run"
)

// Values of WarmUpLabel.
const (
	WarmUpPlaceholderPod       = "placeholder"
	WarmUpEarlyStartPod        = "early-start"
	WarmUpCapacityBufferObject = "capacity-buffer"
)
