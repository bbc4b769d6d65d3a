// Package webhook validates ScheduledJobs at admission, for what the CRD's
// schema and CEL rules cannot check: the cron grammar, time zone names, and
// the Job template, which the API server itself validates by a dry run.
package webhook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// +kubebuilder:webhook:path=/validate-ontime-dev-v1alpha1-scheduledjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=ontime.dev,resources=scheduledjobs,verbs=create;update,versions=v1alpha1,name=vscheduledjob.ontime.dev,admissionReviewVersions=v1

// Validator validates ScheduledJobs.
type Validator struct {
	// client dry-runs the Job template and lists schedules; nil skips
	// those checks (unit tests).
	client client.Client
	// crowdThreshold is how many other schedules starting in one minute
	// make admission propose H; 0 turns the warning off.
	crowdThreshold int
	// defaults are the controller's, applied to warm-up settings.
	defaults v1alpha1.ControllerDefaults
	// starts is the cluster's schedules' starts for that warning.
	starts *startsIndex
}

// NewValidator returns a Validator that dry-runs Job templates with c and
// warns about schedules crowded by crowdThreshold others (0: never).
func NewValidator(c client.Client, crowdThreshold int) *Validator {
	return &Validator{client: c, crowdThreshold: crowdThreshold, starts: newStartsIndex()}
}

// WithDefaults has v check warm-up settings with the controller's defaults
// (its --placeholder-priority-class), as the controller will apply them.
func (v *Validator) WithDefaults(defaults v1alpha1.ControllerDefaults) *Validator {
	v.defaults = defaults
	return v
}

// Register serves the validator on mgr's webhook server.
func (v *Validator) Register(mgr ctrl.Manager) error {
	if v.crowdThreshold > 0 && v.client != nil {
		if err := v.starts.watch(context.Background(), mgr.GetCache()); err != nil {
			return err
		}
	}
	return ctrl.NewWebhookManagedBy(mgr).For(&v1alpha1.ScheduledJob{}).WithValidator(v).Complete()
}

var _ admission.CustomValidator = &Validator{}

// ValidateCreate validates a new ScheduledJob.
func (v *Validator) ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	sj, ok := obj.(*v1alpha1.ScheduledJob)
	if !ok {
		return nil, fmt.Errorf("expected a ScheduledJob, got %T", obj)
	}
	if err := decoded(sj); err != nil {
		return nil, err
	}
	return v.validate(ctx, sj, nil)
}

// ValidateUpdate validates a changed ScheduledJob.
func (v *Validator) ValidateUpdate(ctx context.Context, oldObj, newObj runtime.Object) (admission.Warnings, error) {
	sj, ok := newObj.(*v1alpha1.ScheduledJob)
	old, ok2 := oldObj.(*v1alpha1.ScheduledJob)
	if !ok || !ok2 {
		return nil, fmt.Errorf("expected ScheduledJobs, got %T and %T", oldObj, newObj)
	}
	if err := decoded(sj); err != nil {
		return nil, err
	}
	if equality.Semantic.DeepEqual(old.Spec, sj.Spec) {
		// Metadata only (labels, the trigger annotation): the spec was
		// validated when it was set.
		return nil, nil
	}
	return v.validate(ctx, sj, old)
}

// decoded refuses a ScheduledJob with a value this version cannot decode
// (one the CRD's schema let through: an older CRD without its bounds).
func decoded(sj *v1alpha1.ScheduledJob) error {
	if sj.DecodeError == "" {
		return nil
	}
	return apierrors.NewBadRequest(fmt.Sprintf("ScheduledJob %s cannot be decoded: %s", sj.Name, sj.DecodeError))
}

// ValidateDelete allows every deletion.
func (v *Validator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

func (v *Validator) validate(ctx context.Context, sj, old *v1alpha1.ScheduledJob) (admission.Warnings, error) {
	now := time.Now()
	meaning, meaningErr := meaningOf(sj)
	errs, warnings := validate(sj, old, meaning, meaningErr, now)
	if len(errs) == 0 && v.client != nil {
		errs = append(errs, v.dryRunCronJob(ctx, sj)...)
	}
	if len(errs) == 0 && v.client != nil {
		errs = append(errs, v.dryRunJob(ctx, sj)...)
		warnings = append(warnings, v.priorityWarnings(ctx, sj)...)
		warnings = append(warnings, v.crowdWarnings(sj, meaning, now)...)
	}
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("ScheduledJob").GroupKind(), sj.Name, errs)
	}
	return warnings, nil
}

// Validate checks a ScheduledJob as the CronJob API validates a CronJob
// (pkg/apis/batch/validation), plus runAt and warmUp, and returns errors
// and warnings. old is nil on create; now starts the look at the coming
// runs.
func Validate(sj, old *v1alpha1.ScheduledJob, now time.Time) (field.ErrorList, admission.Warnings) {
	meaning, err := meaningOf(sj)
	return validate(sj, old, meaning, err, now)
}

// meaningOf is what the ScheduledJob's spec means, read as the controller
// will read it: with the placement status.spread records for a Balanced
// spread (a new object has none yet, and its H fields take their hashed
// values).
func meaningOf(sj *v1alpha1.ScheduledJob) (v1alpha1.Meaning, error) {
	return sj.Meaning(v1alpha1.PlacementChoices(sj.RecordedPlacement()))
}

// validate is Validate with the spec's meaning and the error it came
// with (v1alpha1.SpecErrors).
func validate(sj, old *v1alpha1.ScheduledJob, meaning v1alpha1.Meaning, meaningErr error, now time.Time) (field.ErrorList, admission.Warnings) {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	var warnings admission.Warnings
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
	warnings = append(warnings, validateSpread(sj, meaning, spec.Child("spread"))...)
	return errs, warnings
}

// validateName checks a new ScheduledJob's name, which every run's Job name
// starts with.
func validateName(name string) (field.ErrorList, admission.Warnings) {
	var errs field.ErrorList
	var warnings admission.Warnings
	if len(name) > v1alpha1.MaxNameLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, fmt.Sprintf("must be no more than %d characters", v1alpha1.MaxNameLength)))
	}
	if problems := validation.IsDNS1123Label(name); len(problems) > 0 {
		warnings = append(warnings, fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", problems))
	}
	return errs, warnings
}

// validateWhen checks that exactly one of schedule and runAt is set, and
// the schedule.
func validateWhen(sj, old *v1alpha1.ScheduledJob, meaningErr error, spec *field.Path) field.ErrorList {
	switch {
	case sj.Spec.Schedule == "" && sj.Spec.RunAt == nil:
		return field.ErrorList{field.Required(spec.Child("schedule"), "set schedule or runAt")}
	case sj.Spec.Schedule != "" && sj.Spec.RunAt != nil:
		return field.ErrorList{field.Invalid(spec.Child("runAt"), sj.Spec.RunAt, "set schedule or runAt, not both")}
	case sj.Spec.Schedule != "":
		return validateSchedule(sj, old, meaningErr, spec.Child("schedule"))
	}
	return validateRunAt(sj.Spec.RunAt.Time, spec.Child("runAt"))
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

func validateDeadline(seconds *int64, path *field.Path) (field.ErrorList, admission.Warnings) {
	switch {
	case seconds == nil:
		return nil, nil
	case *seconds < 0:
		return field.ErrorList{field.Invalid(path, *seconds, "must be greater than or equal to 0")}, nil
	case *seconds < 10:
		return nil, admission.Warnings{fmt.Sprintf("%s: %d leaves almost no time to create a Job; runs that start later are skipped and recorded as missed", path, *seconds)}
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
	var errs field.ErrorList
	for _, e := range v1alpha1.SpecErrors(meaningErr) {
		if e.Field == path.String() {
			errs = append(errs, field.Invalid(path, schedule, e.Detail))
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

// dryRunCronJob asks the API server to validate (not create) the batch/v1
// CronJob with the ScheduledJob's spec, so that whatever a CronJob would be
// refused for, the ScheduledJob is refused for too, at the same field path
// and in the same words: the Job template as a CronJob's (which differs
// from a Job's: a template is not defaulted, so an Indexed template without
// completions is refused), history limits, deadlines, the concurrency
// policy. The schedule and time zone are checked by ontime above (its
// language is a superset), so the CronJob gets a fixed schedule. Only the
// API server's own validation answers (Invalid): a policy that refuses
// CronJobs as such, or a missing permission, does not refuse ScheduledJobs.
func (v *Validator) dryRunCronJob(ctx context.Context, sj *v1alpha1.ScheduledJob) field.ErrorList {
	cronJob := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: cmp.Or(sj.Name, "ontime-dry-run"), Namespace: sj.Namespace},
		Spec: batchv1.CronJobSpec{
			Schedule:                   "@daily",
			TimeZone:                   sj.Spec.TimeZone,
			StartingDeadlineSeconds:    sj.Spec.StartingDeadlineSeconds,
			ConcurrencyPolicy:          batchv1.ConcurrencyPolicy(sj.Spec.ConcurrencyPolicy),
			Suspend:                    sj.Spec.Suspend,
			JobTemplate:                *sj.Spec.JobTemplate.DeepCopy(),
			SuccessfulJobsHistoryLimit: sj.Spec.SuccessfulJobsHistoryLimit,
			FailedJobsHistoryLimit:     sj.Spec.FailedJobsHistoryLimit,
		},
	}
	err := v.client.Create(ctx, cronJob, client.DryRunAll)
	if !apierrors.IsInvalid(err) {
		return nil
	}
	return causes(err, nil)
}

// dryRunJob asks the API server to validate (not create) the Job a run
// would create, so that the template is checked exactly as the Job will be,
// and maps its errors to jobTemplate field paths.
func (v *Validator) dryRunJob(ctx context.Context, sj *v1alpha1.ScheduledJob) field.ErrorList {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			// The longest name a run can get, so length limits bite here.
			Name:        sj.JobName(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)),
			Namespace:   sj.Namespace,
			Labels:      sj.Spec.JobTemplate.Labels,
			Annotations: sj.Spec.JobTemplate.Annotations,
		},
		Spec: *sj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	err := v.client.Create(ctx, job, client.DryRunAll)
	if err == nil {
		return nil
	}
	path := field.NewPath("spec", "jobTemplate")
	if errs := causes(err, path); len(errs) > 0 {
		return errs
	}
	return field.ErrorList{field.InternalError(path, fmt.Errorf("validating the Job template with a dry run: %w", err))}
}

// causes turns the causes of an API error into field errors, their paths
// under prefix (nil: as they are), that print exactly as the API server
// printed them.
func causes(err error, prefix *field.Path) field.ErrorList {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var errs field.ErrorList
	for _, cause := range status.Status().Details.Causes {
		path := cause.Field
		if prefix != nil {
			path = prefix.String() + "." + path
		}
		errs = append(errs, causeError(path, cause))
	}
	return errs
}

// causeError is a field error whose text is the cause's: the cause's
// message is what field.Error prints after the path ("Invalid value: 0:
// must be …"), so it keeps the type and carries the rest as detail.
func causeError(path string, cause metav1.StatusCause) *field.Error {
	errorType := field.ErrorType(cause.Type)
	if !slices.Contains(knownErrorTypes, errorType) {
		errorType = field.ErrorTypeInvalid
	}
	detail, _ := strings.CutPrefix(cause.Message, errorType.String()+": ")
	return &field.Error{Type: errorType, Field: path, BadValue: field.OmitValueType{}, Detail: detail}
}

var knownErrorTypes = []field.ErrorType{field.ErrorTypeNotFound, field.ErrorTypeRequired, field.ErrorTypeDuplicate,
	field.ErrorTypeInvalid, field.ErrorTypeNotSupported, field.ErrorTypeForbidden, field.ErrorTypeTooLong,
	field.ErrorTypeTooMany, field.ErrorTypeInternal, field.ErrorTypeTypeInvalid}
