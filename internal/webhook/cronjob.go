package webhook

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// The API server calls it only for CronJobs that carry one of ontime's
// annotations (the configuration's matchConditions on
// v1alpha1.CronJobAnnotations, added by config/webhook and the chart:
// controller-gen has no marker for them), so no other CronJob of the
// cluster waits for ontime; and admits the CronJob when no replica answers
// (failurePolicy Ignore): ontime's absence must not stop anyone writing
// CronJobs. What is stored past it is reported by the runtime, with the
// same rules: a WarmUpFailed or InvalidConcurrencyGroup event on the
// CronJob, and its runs refused by the Job webhook while its group
// annotations are wrong.
// +kubebuilder:webhook:path=/validate-batch-v1-cronjob,mutating=false,failurePolicy=ignore,sideEffects=None,groups=batch,resources=cronjobs,verbs=create;update,versions=v1,name=vcronjob.ontime.dev,admissionReviewVersions=v1,timeoutSeconds=5

// CronJobValidator refuses a CronJob whose ontime annotations ask for
// something ontime cannot do (v1alpha1.CronJobAnnotationErrors): a group
// name that is not a DNS label, both group annotations, a priority that is
// not a whole number from -1000 to 1000, a warm-up lead that is not a
// duration from 30s to 24h, a strategy other than Placeholder and
// CapacityBuffer.
type CronJobValidator struct{}

var _ admission.Validator[*batchv1.CronJob] = CronJobValidator{}

// RegisterCronJobValidator serves the validator on mgr's webhook server.
func RegisterCronJobValidator(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &batchv1.CronJob{}).WithValidator(CronJobValidator{}).Complete()
}

// ValidateCreate checks a new CronJob's annotations.
func (CronJobValidator) ValidateCreate(_ context.Context, cj *batchv1.CronJob) (admission.Warnings, error) {
	return nil, invalidCronJob(cj, v1alpha1.CronJobAnnotationErrors(cj))
}

// ValidateUpdate checks a changed CronJob's annotations, refusing only
// errors the old CronJob did not have: a CronJob stored with a bad
// annotation (before this webhook, or while it did not answer) can still
// be suspended, edited or have its annotation removed, and ontime's own
// state writes on it are never refused.
func (CronJobValidator) ValidateUpdate(_ context.Context, old, cj *batchv1.CronJob) (admission.Warnings, error) {
	had := map[string]bool{}
	for _, err := range v1alpha1.CronJobAnnotationErrors(old) {
		had[err.Error()] = true
	}
	var added field.ErrorList
	for _, err := range v1alpha1.CronJobAnnotationErrors(cj) {
		if !had[err.Error()] {
			added = append(added, err)
		}
	}
	return nil, invalidCronJob(cj, added)
}

// ValidateDelete allows every deletion.
func (CronJobValidator) ValidateDelete(context.Context, *batchv1.CronJob) (admission.Warnings, error) {
	return nil, nil
}

func invalidCronJob(cj *batchv1.CronJob, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(batchv1.SchemeGroupVersion.WithKind("CronJob").GroupKind(), cj.Name, errs)
}
