// Package validation holds the rules a ScheduledJob's spec must follow
// beyond what the CRD's schema checks: the cron grammar, time zone names,
// runAt, the Job template's fields CronJob validation refuses, warm-up
// and spread settings. They are pure functions of the object: the
// admission webhook (internal/webhook) refuses what breaks them, and the
// controller's planner reports them on an object stored anyway.
package validation

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Validate checks a ScheduledJob as the CronJob API validates a CronJob
// (pkg/apis/batch/validation), plus runAt and warmUp, and returns errors
// and warnings. old is nil on create; now starts the look at the coming
// runs. The admission webhook refuses what it finds wrong; the controller
// reports it on a ScheduledJob stored anyway (the webhook bypassed), as
// the object written again as it is (old: itself) would be checked.
func Validate(sj, old *v1alpha1.ScheduledJob, now time.Time) (field.ErrorList, []string) {
	meaning, err := MeaningOf(sj)
	return validate(sj, old, meaning, err, now)
}

// MeaningOf is what the ScheduledJob's spec means, read as the controller
// will read it: with the placement status.spread records for a Balanced
// spread (a new object has none yet, and its H fields take their hashed
// values).
func MeaningOf(sj *v1alpha1.ScheduledJob) (v1alpha1.Meaning, error) {
	return sj.Meaning(v1alpha1.PlacementChoices(sj.RecordedPlacement()))
}

// validate is Validate with the spec's meaning and the error it came
// with (v1alpha1.SpecErrors).
func validate(sj, old *v1alpha1.ScheduledJob, meaning v1alpha1.Meaning, meaningErr error, now time.Time) (field.ErrorList, []string) {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	var warnings []string
	if old == nil {
		nameErrs, nameWarnings := validateName(sj.Name)
		errs, warnings = append(errs, nameErrs...), append(warnings, nameWarnings...)
	}
	errs = append(errs, validateWhen(sj, old, meaningErr, spec)...)
	if tz := sj.Spec.TimeZone; tz != nil && (old == nil || old.Spec.TimeZone == nil || *old.Spec.TimeZone != *tz) {
		// Like Kubernetes, a time zone is checked when it changes, so that
		// objects stay editable if the zone database drops a name.
		errs = append(errs, validateTimeZone(*tz, spec.Child("timeZone"))...)
	}
	deadlineErrs, deadlineWarnings := validateDeadline(sj.Spec.StartingDeadlineSeconds, spec.Child("startingDeadlineSeconds"))
	errs, warnings = append(errs, deadlineErrs...), append(warnings, deadlineWarnings...)
	errs = append(errs, validateTemplateSelector(sj.Spec.JobTemplate.Spec, spec.Child("jobTemplate", "spec"))...)
	errs = append(errs, validateActiveDeadline(sj.Spec.JobTemplate.Spec, spec.Child("jobTemplate", "spec", "activeDeadlineSeconds"))...)
	warmUpErrs, warmUpWarnings := validateWarmUp(sj, meaning, now, spec.Child("warmUp"))
	errs, warnings = append(errs, warmUpErrs...), append(warnings, warmUpWarnings...)
	spreadErrs, spreadWarnings := validateSpread(sj, meaning, spec.Child("spread"))
	errs, warnings = append(errs, spreadErrs...), append(warnings, spreadWarnings...)
	failureErrs, failureWarnings := validateSuspendAfterFailures(sj.Spec, spec.Child("suspendAfterFailures"))
	errs, warnings = append(errs, failureErrs...), append(warnings, failureWarnings...)
	errs = append(errs, validateMaxActive(sj.Spec, spec.Child("maxActive"))...)
	errs = append(errs, validateCatchUp(sj.Spec, spec.Child("catchUp"))...)
	errs = append(errs, validateConcurrencyGroup(sj.Spec, spec.Child("concurrencyGroup"))...)
	errs = append(errs, validateStartObjective(sj.Spec.StartObjective, spec.Child("startObjective"))...)
	runDeadlineErrs, runDeadlineWarnings := validateRunDeadline(sj.Spec, spec.Child("deadline"))
	errs, warnings = append(errs, runDeadlineErrs...), append(warnings, runDeadlineWarnings...)
	return errs, warnings
}

// MaxCatchUpRuns bounds spec.catchUp.maxRuns (the CRD's bound too): a
// catch-up is bounded, so that an outage does not end in a flood.
const MaxCatchUpRuns = 1000

// validateCatchUp checks the bound, and that runs can be caught up: a
// runAt runs once, and under Replace each run would replace the one
// before it.
func validateCatchUp(spec v1alpha1.ScheduledJobSpec, path *field.Path) field.ErrorList {
	c := spec.CatchUp
	switch {
	case c == nil:
		return nil
	case c.MaxRuns < 1 || c.MaxRuns > MaxCatchUpRuns:
		return field.ErrorList{field.Invalid(path.Child("maxRuns"), c.MaxRuns, fmt.Sprintf("must be between 1 and %d", MaxCatchUpRuns))}
	case spec.ConcurrencyPolicy == v1alpha1.ReplaceConcurrent:
		return field.ErrorList{field.Invalid(path, "maxRuns: "+strconv.Itoa(int(c.MaxRuns)), "not with concurrencyPolicy Replace: each run caught up would replace the one before it")}
	case spec.RunAt != nil:
		return field.ErrorList{field.Invalid(path, "maxRuns: "+strconv.Itoa(int(c.MaxRuns)), "not with runAt, which runs once")}
	}
	return nil
}

// MaxMaxActive bounds spec.maxActive (the CRD's bound too).
const MaxMaxActive = 1000

// validateMaxActive checks the limit, which only Allow takes: Forbid is
// maxActive 1, and Replace keeps one run.
func validateMaxActive(spec v1alpha1.ScheduledJobSpec, path *field.Path) field.ErrorList {
	n := spec.MaxActive
	switch {
	case n == nil:
		return nil
	case *n < 1 || *n > MaxMaxActive:
		return field.ErrorList{field.Invalid(path, *n, fmt.Sprintf("must be between 1 and %d", MaxMaxActive))}
	case spec.ConcurrencyPolicy == v1alpha1.ForbidConcurrent || spec.ConcurrencyPolicy == v1alpha1.ReplaceConcurrent:
		return field.ErrorList{field.Invalid(path, *n, fmt.Sprintf("only with concurrencyPolicy Allow, not %s (Forbid is maxActive 1; Replace keeps one run)", spec.ConcurrencyPolicy))}
	}
	return nil
}

// MaxSuspendAfterFailures bounds spec.suspendAfterFailures (the CRD's
// bound too): a streak longer than that is not a streak worth waiting for.
const MaxSuspendAfterFailures = 1000

// validateSuspendAfterFailures checks the count, and warns when the failed
// Jobs that the suspension names are deleted at once.
func validateSuspendAfterFailures(spec v1alpha1.ScheduledJobSpec, path *field.Path) (field.ErrorList, []string) {
	n := spec.SuspendAfterFailures
	switch {
	case n == nil:
		return nil, nil
	case *n < 1 || *n > MaxSuspendAfterFailures:
		return field.ErrorList{field.Invalid(path, *n, fmt.Sprintf("must be between 1 and %d", MaxSuspendAfterFailures))}, nil
	case spec.FailedJobsHistoryLimit != nil && *spec.FailedJobsHistoryLimit == 0:
		return nil, []string{fmt.Sprintf("%s: with failedJobsHistoryLimit 0 the failed Jobs are deleted as they fail; the suspension names them, but their pods and logs are gone", path)}
	}
	return nil, nil
}

// MaxObjectiveWithin bounds spec.startObjective.within: a run is measured
// only within an hour of its time (startMeasureWindow), and a start a day
// late is not a start objective.
const MaxObjectiveWithin = time.Hour

// validateStartObjective checks within, percent and windowDays, each with
// its path and value (the CRD checks percent's form and windowDays' bounds
// too; this also reports a spec stored without admission).
func validateStartObjective(objective *v1alpha1.StartObjective, path *field.Path) field.ErrorList {
	if objective == nil {
		return nil
	}
	var errs field.ErrorList
	if within := objective.Within.Duration; within <= 0 || within > MaxObjectiveWithin {
		errs = append(errs, field.Invalid(path.Child("within"), within.String(), fmt.Sprintf("must be more than 0 and at most %s", MaxObjectiveWithin)))
	}
	if _, err := objective.Ratio(); err != nil {
		errs = append(errs, field.Invalid(path.Child("percent"), objective.Percent, "must be a number more than 0 and less than 100, such as \"99\" or \"99.5\""))
	}
	if days := objective.WindowDays; days != 0 && (days < 1 || days > v1alpha1.MaxObjectiveWindowDays) {
		errs = append(errs, field.Invalid(path.Child("windowDays"), days, fmt.Sprintf("must be between 1 and %d", v1alpha1.MaxObjectiveWindowDays)))
	}
	return errs
}

// validateRunDeadline checks spec.deadline: exactly one of after (more
// than 0, at most a week) and at (HH:MM); and warns when
// startingDeadlineSeconds lets a run start when no time is left before it.
func validateRunDeadline(spec v1alpha1.ScheduledJobSpec, path *field.Path) (field.ErrorList, []string) {
	d := spec.Deadline
	if d == nil {
		return nil, nil
	}
	switch {
	case d.After == nil && d.At == "":
		return field.ErrorList{field.Required(path, "set after (such as 4h after each run's time) or at (a time of day such as 07:00)")}, nil
	case d.After != nil && d.At != "":
		return field.ErrorList{field.Invalid(path, fmt.Sprintf("after: %s, at: %s", d.After.Duration, d.At), "set after or at, not both")}, nil
	case d.After != nil && (d.After.Duration <= 0 || d.After.Duration > v1alpha1.MaxDeadlineAfter):
		return field.ErrorList{field.Invalid(path.Child("after"), d.After.Duration.String(), fmt.Sprintf("must be more than 0 and at most %s", v1alpha1.MaxDeadlineAfter))}, nil
	case d.At != "":
		if _, err := time.Parse("15:04", d.At); err != nil || len(d.At) != len("15:04") {
			return field.ErrorList{field.Invalid(path.Child("at"), d.At, "must be a time of day as HH:MM, such as 07:00")}, nil
		}
	}
	if s := spec.StartingDeadlineSeconds; d.After != nil && s != nil && time.Duration(*s)*time.Second >= d.After.Duration {
		return nil, []string{fmt.Sprintf("%s: startingDeadlineSeconds %d lets a run start %s after its time, when its deadline (%s) has passed: such a run cannot succeed in time", path.Child("after"), *s, time.Duration(*s)*time.Second, d)}
	}
	return nil, nil
}

// validateName checks a new ScheduledJob's name, which every run's Job name
// starts with.
func validateName(name string) (field.ErrorList, []string) {
	var errs field.ErrorList
	var warnings []string
	if len(name) > v1alpha1.MaxNameLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, fmt.Sprintf("must be no more than %d characters", v1alpha1.MaxNameLength)))
	}
	if problems := validation.IsDNS1123Label(name); len(problems) > 0 {
		warnings = append(warnings, fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", problems))
	}
	return errs, warnings
}

// validateWhen checks that exactly one of schedule, schedules and runAt
// is set, and the one set.
func validateWhen(sj, old *v1alpha1.ScheduledJob, meaningErr error, spec *field.Path) field.ErrorList {
	list := sj.Spec.Schedules != nil
	switch {
	case sj.Spec.Schedule == "" && !list && sj.Spec.RunAt == nil:
		return field.ErrorList{field.Required(spec.Child("schedule"), "set schedule, schedules or runAt")}
	case sj.Spec.Schedule != "" && list:
		return field.ErrorList{field.Invalid(spec.Child("schedules"), sj.Spec.Schedules, "set schedule or schedules, not both")}
	case (sj.Spec.Schedule != "" || list) && sj.Spec.RunAt != nil:
		return field.ErrorList{field.Invalid(spec.Child("runAt"), sj.Spec.RunAt, "set schedule, schedules or runAt, only one")}
	case sj.Spec.Schedule != "":
		return validateSchedule(sj, old, meaningErr, spec.Child("schedule"))
	case list:
		return validateSchedules(sj, meaningErr, spec.Child("schedules"))
	}
	return validateRunAt(sj.Spec.RunAt.Time, spec.Child("runAt"))
}

// MaxSchedules bounds spec.schedules (the CRD's bound too).
const MaxSchedules = 20

// validateSchedules checks the list: from 1 to MaxSchedules entries, each
// readable (v1alpha1.Meaning refuses @every and TZ= in an entry), and no
// Balanced spread, which places one schedule in its group.
func validateSchedules(sj *v1alpha1.ScheduledJob, meaningErr error, path *field.Path) field.ErrorList {
	schedules := sj.Spec.Schedules
	if len(schedules) == 0 || len(schedules) > MaxSchedules {
		return field.ErrorList{field.Invalid(path, len(schedules), fmt.Sprintf("must list from 1 to %d schedules", MaxSchedules))}
	}
	var errs field.ErrorList
	for i, schedule := range schedules {
		errs = append(errs, specErrorsAt(meaningErr, path.Index(i), schedule)...)
	}
	if sj.SpreadOf().Strategy == v1alpha1.SpreadBalanced {
		errs = append(errs, field.Invalid(field.NewPath("spec", "spread", "strategy"), v1alpha1.SpreadBalanced,
			"not with spec.schedules: a Balanced spread places one schedule in its group; use Hash (H in each entry is hashed from namespace/name)"))
	}
	return errs
}

// Bounds of runAt. Job names count minutes since 1970, so an earlier run
// would get a negative number in its name; the webhook sizes Job names for
// runs up to 2100, and a run further ahead than that is a typo, not a plan.
var (
	earliestRunAt = time.Unix(0, 0).UTC()
	latestRunAt   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

func validateRunAt(runAt time.Time, path *field.Path) field.ErrorList {
	if runAt.Before(earliestRunAt) || !runAt.Before(latestRunAt) {
		return field.ErrorList{field.Invalid(path, runAt.UTC().Format(time.RFC3339),
			fmt.Sprintf("must be from %s to before %s", earliestRunAt.Format(time.RFC3339), latestRunAt.Format(time.RFC3339)))}
	}
	return nil
}

// validateActiveDeadline refuses a Job template that can never run:
// Kubernetes accepts activeDeadlineSeconds 0, and every such Job fails at
// once with DeadlineExceeded.
func validateActiveDeadline(template batchv1.JobSpec, path *field.Path) field.ErrorList {
	if seconds := template.ActiveDeadlineSeconds; seconds != nil && *seconds == 0 {
		return field.ErrorList{field.Invalid(path, *seconds, "must be greater than 0: a Job with no time to run fails as soon as it starts")}
	}
	return nil
}

func validateDeadline(seconds *int64, path *field.Path) (field.ErrorList, []string) {
	switch {
	case seconds == nil:
		return nil, nil
	case *seconds < 0:
		return field.ErrorList{field.Invalid(path, *seconds, "must be greater than or equal to 0")}, nil
	case *seconds < 10:
		return nil, []string{fmt.Sprintf("%s: %d leaves almost no time to create a Job; runs that start later are skipped and recorded as missed", path, *seconds)}
	}
	return nil, nil
}

// validateTemplateSelector refuses selectors, which the Job controller
// generates, as CronJob validation does.
func validateTemplateSelector(template batchv1.JobSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if template.Selector != nil {
		errs = append(errs, field.Invalid(path.Child("selector"), template.Selector, "`selector` will be auto-generated"))
	}
	if m := template.ManualSelector; m != nil && *m {
		errs = append(errs, field.NotSupported(path.Child("manualSelector"), *m, []string{"nil", "false"}))
	}
	return errs
}

// validateSchedule checks spec.schedule: the TZ rules Kubernetes applies,
// then what reading it in the spec's Meaning found (meaningErr): the
// extended language (H, L, W, #, 7) with the ScheduledJob's own hash key,
// in which every Kubernetes schedule means the same, and runs at least a
// minute apart. spec.timeZone's errors are validateTimeZone's.
func validateSchedule(sj, old *v1alpha1.ScheduledJob, meaningErr error, path *field.Path) field.ErrorList {
	schedule := sj.Spec.Schedule
	// Kubernetes rejects TZ in the schedule on new objects (since 1.27), and
	// keeps it editable only on objects that already had it.
	if strings.Contains(schedule, "TZ") {
		hadTZ := old != nil && strings.Contains(old.Spec.Schedule, "TZ")
		switch {
		case !hadTZ:
			return field.ErrorList{field.Invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")}
		case sj.Spec.TimeZone != nil:
			return field.ErrorList{field.Invalid(path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule")}
		}
	}
	return specErrorsAt(meaningErr, path, schedule)
}

// specErrorsAt are the errors of the spec's meaning (v1alpha1.SpecErrors)
// that name the field at path, whose value is value.
func specErrorsAt(meaningErr error, path *field.Path, value string) field.ErrorList {
	var errs field.ErrorList
	for _, e := range v1alpha1.SpecErrors(meaningErr) {
		if e.Field == path.String() {
			errs = append(errs, field.Invalid(path, value, e.Detail))
		}
	}
	return errs
}

// validTimeZoneComponent is the check Kubernetes applies to each
// "/"-separated part of a zone name before loading it.
var validTimeZoneComponent = regexp.MustCompile(`^[A-Za-z.\-_0-9+]{1,14}$`)

func validateTimeZone(tz string, path *field.Path) field.ErrorList {
	if tz == "" {
		return field.ErrorList{field.Invalid(path, tz, "timeZone must be nil or non-empty string")}
	}
	if strings.EqualFold(tz, "Local") {
		return field.ErrorList{field.Invalid(path, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")}
	}
	for _, part := range strings.Split(tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneComponent.MatchString(part) {
			return field.ErrorList{field.Invalid(path, tz, "unknown time zone")}
		}
	}
	if _, err := v1alpha1.LoadTimeZone(tz); err != nil {
		return field.ErrorList{field.Invalid(path, tz, err.Error())}
	}
	return nil
}

// The webhook creates CronJobs only with dryRun=All (below): RBAC has no
// verb for a dry run, which needs the permission of the real request.
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=create
