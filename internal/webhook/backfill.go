package webhook

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/validation"
)

// +kubebuilder:webhook:path=/validate-ontime-dev-v1alpha1-backfill,mutating=false,failurePolicy=fail,sideEffects=None,groups=ontime.dev,resources=backfills,verbs=create,versions=v1alpha1,name=vbackfill.ontime.dev,admissionReviewVersions=v1

// BackfillValidator validates new Backfills: their spec cannot change
// afterwards (a CEL rule), so only creation is checked.
type BackfillValidator struct {
	// client reads the ScheduledJob for a warning; nil skips it.
	client client.Reader
	now    func() time.Time
}

// NewBackfillValidator returns a BackfillValidator reading with c.
func NewBackfillValidator(c client.Reader) *BackfillValidator {
	return &BackfillValidator{client: c, now: time.Now}
}

// Register serves the validator on mgr's webhook server.
func (v *BackfillValidator) Register(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &v1alpha1.Backfill{}).WithValidator(v).Complete()
}

var _ admission.Validator[*v1alpha1.Backfill] = &BackfillValidator{}

// ValidateCreate refuses a Backfill of future times, and warns when its
// ScheduledJob does not exist (the Backfill then waits for it).
func (v *BackfillValidator) ValidateCreate(ctx context.Context, bf *v1alpha1.Backfill) (admission.Warnings, error) {
	if errs := validation.ValidateBackfill(bf, v.now()); len(errs) > 0 {
		return nil, apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("Backfill").GroupKind(), bf.Name, errs)
	}
	if v.client == nil {
		return nil, nil
	}
	sj := &v1alpha1.ScheduledJob{}
	if err := v.client.Get(ctx, types.NamespacedName{Namespace: bf.Namespace, Name: bf.Spec.ScheduledJobName}, sj); apierrors.IsNotFound(err) {
		return admission.Warnings{fmt.Sprintf("spec.scheduledJobName: ScheduledJob %q does not exist in namespace %q; the backfill waits for it", bf.Spec.ScheduledJobName, bf.Namespace)}, nil
	}
	return nil, nil
}

// ValidateUpdate has nothing to check: the spec cannot change.
func (v *BackfillValidator) ValidateUpdate(context.Context, *v1alpha1.Backfill, *v1alpha1.Backfill) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete allows every deletion.
func (v *BackfillValidator) ValidateDelete(context.Context, *v1alpha1.Backfill) (admission.Warnings, error) {
	return nil, nil
}
