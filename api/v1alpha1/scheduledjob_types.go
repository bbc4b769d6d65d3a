package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScheduledJobSpec says when to run a Job and how. It has every field of a
// batch/v1 CronJobSpec with the same name, type, default and validation, so
// a CronJob moves to ontime by changing its apiVersion and kind, plus runAt
// and dstPolicy.
type ScheduledJobSpec struct {
	// schedule is when to run, in cron format: five fields (minute hour
	// day-of-month month day-of-week) or a descriptor (@hourly, @daily,
	// @weekly, @monthly, @yearly, @every 90m). Every schedule a batch/v1
	// CronJob accepts means the same here, for example "30 2 * * 1-5" for
	// 02:30 on weekdays. It also accepts extensions: H for "any value, the
	// same every time" ("H * * * *" is once an hour at a minute of its own;
	// H/15, H(0-29), H(9-17)/2), chosen by spec.spread; L, LW, L-n and nW in
	// the day of month; dL and d#n in the day of week; 7 for Sunday.
	// status.effectiveSchedule shows the schedule with H replaced. See
	// docs/schedules.md and docs/spreading.md. Set exactly one of
	// schedule, schedules and runAt.
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// schedules runs the Job at the times of every schedule in the list,
	// each written as schedule is (H, L, W and # included; not @every, whose
	// runs count from the last run): ["*/15 * * * 1-5", "0 * * * 0,6"] runs
	// every 15 minutes on weekdays and hourly at weekends. A time that
	// several entries have is one run. Every entry runs in timeZone.
	// status.effectiveSchedule lists them, H replaced, separated by "; ".
	// Set exactly one of schedule, schedules and runAt; not with a
	// Balanced spread.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	Schedules []string `json:"schedules,omitempty"`

	// runAt runs the Job once, at this time (RFC 3339, for example
	// "2026-12-24T18:00:00Z"), instead of on a schedule. If the time has
	// already passed when the ScheduledJob is created, the Job runs at once,
	// unless startingDeadlineSeconds says that is too late. Changing runAt
	// to another time runs the Job again then. Set exactly one of schedule,
	// schedules and runAt. It must be from 1970-01-01T00:00:00Z to before
	// 2100-01-01T00:00:00Z.
	// +optional
	RunAt *metav1.Time `json:"runAt,omitempty"`

	// timeZone is the IANA time zone the schedule is evaluated in, such as
	// "Europe/Amsterdam". Unset means UTC (a CronJob uses the zone of
	// kube-controller-manager, which is UTC in most clusters). "Local" is
	// not allowed.
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// startingDeadlineSeconds is how late, in seconds, a run may still
	// start. A run that cannot start within it (the controller was down, or
	// concurrencyPolicy Forbid held it back) is skipped and recorded: a
	// MissSchedule event, status.lastMissedTime and the
	// ontime_missed_runs_total metric. For example, with 300 a 10:00 run
	// still starts at 10:04:59, not at 10:05:01. 0 means within the
	// scheduled second. Unset means no deadline: after an outage the most
	// recent missed run starts as soon as the controller is back.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// concurrencyPolicy says what to do when a run is due while an earlier
	// Job is still active: Allow (default) starts it anyway; Forbid skips it
	// until the active Job finishes (it then starts late, within
	// startingDeadlineSeconds); Replace deletes the active Jobs and starts
	// the new one.
	// +kubebuilder:default=Allow
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// maxActive, with concurrencyPolicy Allow, is the most runs that may be
	// active at once: a run due while that many Jobs are active waits
	// until one finishes, and then starts, within startingDeadlineSeconds
	// (as Forbid, which is maxActive 1, holds a run). While it waits, a
	// newer run that comes due takes its place and it is recorded as
	// missed. A run asked for by hand (ontime trigger) is refused at the
	// limit. Unset: no limit.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxActive *int32 `json:"maxActive,omitempty"`

	// concurrencyGroup, when set, counts this ScheduledJob's runs in a
	// group that bounds the active runs of all its members (a
	// ConcurrencyGroup in this namespace, or a ClusterConcurrencyGroup):
	// each run's Job is created suspended and started when the group has
	// room, in order of priority and scheduled time; a run that waits
	// past startingDeadlineSeconds is missed (status.lastMissedTime, event
	// MissedWaitingForGroup). A waiting run is active for
	// concurrencyPolicy and maxActive. Not with warmUp strategy
	// EarlyStart. See docs/concurrency-groups.md.
	// +optional
	ConcurrencyGroup *ConcurrencyGroupRef `json:"concurrencyGroup,omitempty"`

	// catchUp, when set, starts the runs missed while none could start
	// (the controller was down, or concurrencyPolicy Forbid or maxActive
	// held them back), oldest first, instead of only the most recent one
	// as a CronJob does. Runs later than startingDeadlineSeconds are not
	// started, and of the rest at most catchUp.maxRuns, the most recent
	// ones; the others are recorded as missed. Each Job carries its
	// scheduled time in the annotation
	// batch.kubernetes.io/cronjob-scheduled-timestamp. Runs due while
	// the ScheduledJob was suspended are not caught up. Not with
	// concurrencyPolicy Replace. See docs/scheduledjob.md.
	// +optional
	CatchUp *CatchUp `json:"catchUp,omitempty"`

	// suspend stops new runs while true; Jobs already running continue.
	// When it is set back to false, the most recent run missed meanwhile
	// starts at once unless startingDeadlineSeconds excludes it, as with a
	// CronJob. Default false.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// jobTemplate is the Job to create for each run. Its labels and
	// annotations are copied to each Job, which also gets the annotation
	// batch.kubernetes.io/cronjob-scheduled-timestamp with the run's
	// scheduled time and is owned by this ScheduledJob. It is validated as
	// a Job would be; jobTemplate.spec.selector must be unset.
	JobTemplate batchv1.JobTemplateSpec `json:"jobTemplate"`

	// successfulJobsHistoryLimit is how many finished successful Jobs to
	// keep; older ones are deleted, oldest first. Default 3; 0 deletes each
	// as soon as it succeeds.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// failedJobsHistoryLimit is how many failed Jobs to keep. Default 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`

	// dstPolicy says what happens when a daylight-saving change in timeZone
	// skips or repeats the local time a run is scheduled at. Cron (default)
	// follows ISC cron: a run whose time is skipped starts right after the
	// jump, a run whose time repeats starts once; schedules whose minute or
	// hour field starts with * (such as "*/15 * * * *") follow elapsed time.
	// Kubernetes reproduces the CronJob controller: a skipped time does not
	// run, a repeated time runs twice.
	// +kubebuilder:default=Cron
	// +optional
	DSTPolicy DSTPolicy `json:"dstPolicy,omitempty"`

	// warmUp brings capacity up ahead of each run, so that the run's pods
	// start on time instead of waiting minutes for the autoscaler to add a
	// node: with lead 10m, capacity for a 10:00 run is requested at 09:50.
	// Unset means no warm-up. See docs/warmup.md.
	// +optional
	WarmUp *WarmUp `json:"warmUp,omitempty"`

	// spread says how the H fields of schedule get their values: hashed
	// from namespace/name (the default), or balanced across a group of
	// ScheduledJobs so that as few as possible start in the same minute.
	// +optional
	Spread *Spread `json:"spread,omitempty"`

	// suspendAfterFailures, when set, suspends the ScheduledJob (sets
	// suspend to true) once that many of its runs have failed in a row, so
	// that a job that keeps failing stops until someone looks at it. Jobs
	// already running continue. The Ready condition says why (reason
	// SuspendedAfterFailures), a SuspendedAfterFailures event names the
	// failed Jobs, and setting suspend back to false resumes it with the
	// count at 0. A run that succeeds sets the count back to 0. "In a
	// row" is in the order the runs were scheduled, whatever order their
	// Jobs finish in; runs asked for by hand (ontime trigger) do not count
	// (status.failures). Unset: never.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	SuspendAfterFailures *int32 `json:"suspendAfterFailures,omitempty"`

	// startObjective, when set, is what share of runs should start within
	// a time of their scheduled time, such as 99 % within 30s over 7 days.
	// status.startObjective counts how the runs met it, a run late beyond
	// it gets a LateStart event naming where its time went, and the
	// ontime_start_objective_* metrics feed the chart's burn-rate alerts.
	// Unset: runs are measured (status.lastRunStart) but not judged.
	// +optional
	StartObjective *StartObjective `json:"startObjective,omitempty"`

	// deadline, when set, is when each run must have succeeded: after a
	// time past its scheduled time, or at a time of day. The controller
	// learns the runs' times from the Jobs that succeeded
	// (status.deadline), predicts when the latest run will succeed, and
	// sets the DeadlineAtRisk condition, with an event, as soon as that
	// prediction passes the deadline, and again (reason DeadlineMissed)
	// once the deadline passes without success. It says so up front
	// (reason DeadlineInfeasible) when the next run cannot succeed in
	// time even if it starts as soon as it can: runs take longer than the
	// deadline allows, Forbid or maxActive holds it behind the run
	// before it, Replace replaces each run first, or the concurrency
	// group's queue admits it too late.
	// +optional
	Deadline *Deadline `json:"deadline,omitempty"`
}

// CatchUp says how many missed runs to start after an outage.
type CatchUp struct {
	// maxRuns is the most missed runs started: after an outage that
	// missed more, the most recent maxRuns start, one after another as
	// the concurrency policy allows, and the older ones are recorded as
	// missed. It bounds the burst a long outage would otherwise cause.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxRuns int32 `json:"maxRuns"`
}

// ConcurrencyPolicy says how to treat a run that is due while an earlier
// Job is still active.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// AllowConcurrent starts the run anyway.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips the run while an earlier Job is active.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent deletes the active Jobs and starts the run.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// ActiveLimit is the most runs of the ScheduledJob that may be active at
// once, counting claimed runs whose Jobs are being created: 1 under
// Forbid, spec.maxActive under Allow. ok is false when nothing limits
// them (Allow without maxActive, and Replace, which replaces them).
func (sj *ScheduledJob) ActiveLimit() (limit int, ok bool) {
	switch {
	case sj.Spec.ConcurrencyPolicy == ForbidConcurrent:
		return 1, true
	case sj.Spec.ConcurrencyPolicy != ReplaceConcurrent && sj.Spec.MaxActive != nil:
		return max(1, int(*sj.Spec.MaxActive)), true
	}
	return 0, false
}

// DSTPolicy says what a daylight-saving change does to a schedule.
// +kubebuilder:validation:Enum=Cron;Kubernetes
type DSTPolicy string

const (
	// DSTCron follows ISC/Vixie cron: skipped times run once right after
	// the jump, repeated times run once, wildcard schedules follow elapsed
	// time.
	DSTCron DSTPolicy = "Cron"
	// DSTKubernetes reproduces the CronJob controller (robfig/cron):
	// skipped times do not run, repeated times run twice.
	DSTKubernetes DSTPolicy = "Kubernetes"
)

// ScheduledJobStatus is what the controller observed and decided. It is
// rebuilt from the ScheduledJob's Jobs on every reconcile.
type ScheduledJobStatus struct {
	// active lists the Jobs of this ScheduledJob that have not finished.
	// +listType=atomic
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// activeCount is the number of entries in active, for the ACTIVE
	// column of kubectl get.
	// +optional
	ActiveCount int32 `json:"activeCount"`

	// lastScheduleTime is the scheduled (not actual) time of the most
	// recently started run.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// lastSuccessfulTime is when the most recently successful Job completed.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// nextScheduleTime is the scheduled time of the next run. When it is in
	// the past, that run is due and waiting (for an active Job under
	// concurrencyPolicy Forbid). Unset while suspended, after a runAt run,
	// and while the schedule is invalid.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// effectiveSchedule is spec.schedule with every H field replaced by
	// the value it took, such as "37 * * * *" for "H * * * *": the
	// schedule runs follow. Unset for runAt and while the schedule is
	// invalid.
	// +optional
	EffectiveSchedule string `json:"effectiveSchedule,omitempty"`

	// spread is where a Balanced spread placed the ScheduledJob.
	// +optional
	Spread *SpreadStatus `json:"spread,omitempty"`

	// lastMissedTime is the scheduled time of the most recent run that did
	// not start: too late for startingDeadlineSeconds, skipped because a
	// later run was started in its place after an outage, or blocked by a
	// Job of the same name that this ScheduledJob does not own.
	// +optional
	LastMissedTime *metav1.Time `json:"lastMissedTime,omitempty"`

	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// nextWarmUpTime is when warm-up for the next run begins (the next run's
	// time minus spec.warmUp.lead). Unset without warm-up, and while no run
	// is coming.
	// +optional
	NextWarmUpTime *metav1.Time `json:"nextWarmUpTime,omitempty"`

	// warmUp describes the most recent warm-up: the run it was for, when it
	// began, and whether and when the capacity was ready.
	// +optional
	WarmUp *WarmUpStatus `json:"warmUp,omitempty"`

	// lastRunStart is when the most recent scheduled run actually started:
	// its first pod running, and how late that was.
	// +optional
	LastRunStart *RunStart `json:"lastRunStart,omitempty"`

	// recentRunStarts are the latest scheduled runs whose start was
	// measured, newest first (the first is lastRunStart), at most
	// MaxRecentRunStarts: enough to tell one late run from a pattern,
	// small enough to keep the object small. Every run is also in the
	// ontime_run_start_phase_seconds histogram.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5
	RecentRunStarts []RunStart `json:"recentRunStarts,omitempty"`

	// deadline is, under spec.deadline, the runs' learned times and the
	// prediction for the latest run. Unset without spec.deadline.
	// +optional
	Deadline *DeadlineStatus `json:"deadline,omitempty"`

	// startObjective is how the runs met spec.startObjective over its
	// window. Unset without spec.startObjective.
	// +optional
	StartObjective *StartObjectiveStatus `json:"startObjective,omitempty"`

	// failures counts the runs that failed in a row, with
	// spec.suspendAfterFailures: since the last run that succeeded, or the
	// last resume. Unset without spec.suspendAfterFailures.
	// +optional
	Failures *FailureStreak `json:"failures,omitempty"`

	// catchUp describes the most recent catch-up (spec.catchUp): the
	// missed runs it started, oldest first, and those it dropped.
	// +optional
	CatchUp *CatchUpStatus `json:"catchUp,omitempty"`

	// conditions: Ready is True while runs are being scheduled and False
	// with a reason (InvalidSchedule, UnknownTimeZone, Suspended,
	// SuspendedAfterFailures, JobNameConflict) when they are not;
	// CapacityReady, with warm-up, says whether capacity for the coming
	// run has arrived (reasons WarmingUp, CapacityReady, CapacityLate,
	// WarmUpFailed); DeadlineAtRisk, with a deadline, whether runs will
	// succeed by it (reasons OnTrack, RunSucceeded, DeadlineAtRisk,
	// DeadlineMissed, DeadlineInfeasible); see docs/scheduledjob.md,
	// docs/warmup.md and docs/observability.md.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// FailureStreak is the runs of a ScheduledJob that failed in a row, as
// spec.suspendAfterFailures counts them.
type FailureStreak struct {
	// count is how many runs failed in a row.
	Count int32 `json:"count"`

	// jobs are the Jobs of the last of those runs, latest last (at most
	// 10): the ones to look at.
	// +listType=atomic
	// +optional
	Jobs []string `json:"jobs,omitempty"`

	// countedThrough is the scheduled time of the latest run counted:
	// runs are counted in the order they were scheduled, each once, and a
	// run scheduled later counts when its Job finishes (runs asked for by
	// hand do not count).
	// +optional
	CountedThrough *metav1.Time `json:"countedThrough,omitempty"`

	// suspended is true once the streak has suspended the ScheduledJob:
	// when spec.suspend is false again, someone resumed it, and the count
	// starts again from 0.
	// +optional
	Suspended bool `json:"suspended,omitempty"`
}

// CatchUpStatus is one catch-up after an outage: which missed runs it
// starts.
type CatchUpStatus struct {
	// from and through are the scheduled times of the oldest and the most
	// recent run it starts.
	From    metav1.Time `json:"from"`
	Through metav1.Time `json:"through"`

	// runs is how many runs it starts.
	Runs int32 `json:"runs"`

	// dropped is how many older missed runs it does not start: beyond
	// catchUp.maxRuns, or later than startingDeadlineSeconds.
	// +optional
	Dropped int32 `json:"dropped,omitempty"`
}

// ScheduledJob runs a Job on a schedule, like a batch/v1 CronJob, or once at
// a given time. It keeps CronJob's semantics where they are right and fixes
// its known defects: runs are never silently stalled, missed runs are
// visible, editing the schedule does not start a retroactive run, and
// daylight-saving changes follow a declared policy.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sj,categories=all
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Effective",type=string,JSONPath=`.status.effectiveSchedule`
// +kubebuilder:printcolumn:name="Time Zone",type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.activeCount`
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Next Schedule",type=string,JSONPath=`.status.nextScheduleTime`
// +kubebuilder:printcolumn:name="Next Warm-Up",type=string,JSONPath=`.status.nextWarmUpTime`,priority=1
// +kubebuilder:printcolumn:name="Lateness",type=string,JSONPath=`.status.lastRunStart.lateness`,priority=1,description="How late the last measured run started: from its scheduled time to its first container running"
// +kubebuilder:printcolumn:name="Capacity",type=string,JSONPath=`.status.conditions[?(@.type=="CapacityReady")].reason`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Deadline",type=string,JSONPath=`.status.conditions[?(@.type=="DeadlineAtRisk")].reason`,priority=1,description="Whether runs will succeed by spec.deadline: OnTrack, RunSucceeded, DeadlineAtRisk, DeadlineMissed or DeadlineInfeasible"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ScheduledJob struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says when to run the Job and how.
	Spec ScheduledJobSpec `json:"spec"`

	// status is what the controller observed.
	// +optional
	Status ScheduledJobStatus `json:"status,omitempty"`

	// DecodeError, never serialized, says why this object's spec or status
	// could not be decoded (UnmarshalJSON); then only its type and metadata
	// are set. Empty for every object that decoded.
	DecodeError string `json:"-"`
}

// ScheduledJobList is a list of ScheduledJobs.
//
// +kubebuilder:object:root=true
type ScheduledJobList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ScheduledJob `json:"items"`
}

func init() {
	register(&ScheduledJob{}, &ScheduledJobList{})
}
