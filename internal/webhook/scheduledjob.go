// Package webhook validates ScheduledJobs at admission, for what the CRD's
// schema and CEL rules cannot check: the cron grammar, time zone names, and
// the Job template, which the API server itself validates by a dry run.
package webhook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/validation"
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
	return ctrl.NewWebhookManagedBy(mgr, &v1alpha1.ScheduledJob{}).WithValidator(v).Complete()
}

var _ admission.Validator[*v1alpha1.ScheduledJob] = &Validator{}

// ValidateCreate validates a new ScheduledJob.
func (v *Validator) ValidateCreate(ctx context.Context, sj *v1alpha1.ScheduledJob) (admission.Warnings, error) {
	if err := decoded(sj); err != nil {
		return nil, err
	}
	return v.validate(ctx, sj, nil)
}

// ValidateUpdate validates a changed ScheduledJob.
func (v *Validator) ValidateUpdate(ctx context.Context, old, sj *v1alpha1.ScheduledJob) (admission.Warnings, error) {
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
func (v *Validator) ValidateDelete(context.Context, *v1alpha1.ScheduledJob) (admission.Warnings, error) {
	return nil, nil
}

func (v *Validator) validate(ctx context.Context, sj, old *v1alpha1.ScheduledJob) (admission.Warnings, error) {
	now := time.Now()
	errs, found := validation.Validate(sj, old, now)
	warnings := admission.Warnings(found)
	if len(errs) == 0 && v.client != nil {
		errs = append(errs, v.dryRunCronJob(ctx, sj)...)
	}
	if len(errs) == 0 && v.client != nil {
		errs = append(errs, v.dryRunJob(ctx, sj)...)
		warnings = append(warnings, v.priorityWarnings(ctx, sj)...)
		groupWarnings, groupErrs := checkGroup(ctx, v.client, sj, old)
		warnings, errs = append(warnings, groupWarnings...), append(errs, groupErrs...)
		if meaning, err := validation.MeaningOf(sj); err == nil {
			warnings = append(warnings, v.crowdWarnings(sj, meaning, now)...)
		}
	}
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("ScheduledJob").GroupKind(), sj.Name, errs)
	}
	return warnings, nil
}

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
