package webhook

import (
	"cmp"
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/validation"
)

// +kubebuilder:webhook:path=/validate-ontime-dev-v1alpha1-concurrencygroup,mutating=false,failurePolicy=fail,sideEffects=None,groups=ontime.dev,resources=concurrencygroups,verbs=create;update,versions=v1alpha1,name=vconcurrencygroup.ontime.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ontime-dev-v1alpha1-clusterconcurrencygroup,mutating=false,failurePolicy=fail,sideEffects=None,groups=ontime.dev,resources=clusterconcurrencygroups,verbs=create;update,versions=v1alpha1,name=vclusterconcurrencygroup.ontime.dev,admissionReviewVersions=v1

// GroupValidator validates ConcurrencyGroups and ClusterConcurrencyGroups
// beyond their schema: the per-value limit's label key and its bound.
type GroupValidator struct{}

// RegisterGroupValidators serves the validator of both kinds on mgr's
// webhook server.
func RegisterGroupValidators(mgr ctrl.Manager) error {
	if err := ctrl.NewWebhookManagedBy(mgr).For(&v1alpha1.ConcurrencyGroup{}).WithValidator(GroupValidator{}).Complete(); err != nil {
		return err
	}
	return ctrl.NewWebhookManagedBy(mgr).For(&v1alpha1.ClusterConcurrencyGroup{}).WithValidator(GroupValidator{}).Complete()
}

var _ admission.CustomValidator = GroupValidator{}

// ValidateCreate checks a new group.
func (GroupValidator) ValidateCreate(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	return nil, validateGroup(obj)
}

// ValidateUpdate checks a changed group.
func (GroupValidator) ValidateUpdate(_ context.Context, _, obj runtime.Object) (admission.Warnings, error) {
	return nil, validateGroup(obj)
}

// ValidateDelete allows every deletion: the members' waiting runs wait for
// a group of the name again, as they do before it exists.
func (GroupValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

func validateGroup(obj runtime.Object) error {
	var spec v1alpha1.ConcurrencyGroupSpec
	var kind, name string
	switch g := obj.(type) {
	case *v1alpha1.ConcurrencyGroup:
		spec, kind, name = g.Spec, v1alpha1.KindConcurrencyGroup, g.Name
	case *v1alpha1.ClusterConcurrencyGroup:
		spec, kind, name = g.Spec, v1alpha1.KindClusterConcurrencyGroup, g.Name
	default:
		return fmt.Errorf("expected a concurrency group, got %T", obj)
	}
	if errs := validation.ValidateGroupSpec(spec); len(errs) > 0 {
		return apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind(kind).GroupKind(), name, errs)
	}
	return nil
}

// groupWarnings warns when a ScheduledJob joins a group that does not
// exist: its runs wait until it does.
func groupWarnings(ctx context.Context, c client.Reader, sj *v1alpha1.ScheduledJob) []string {
	ref := sj.Spec.ConcurrencyGroup
	if ref == nil {
		return nil
	}
	var group client.Object = &v1alpha1.ConcurrencyGroup{}
	key := types.NamespacedName{Namespace: sj.Namespace, Name: ref.Name}
	if ref.Kind == v1alpha1.KindClusterConcurrencyGroup {
		group, key.Namespace = &v1alpha1.ClusterConcurrencyGroup{}, ""
	}
	if err := c.Get(ctx, key, group); apierrors.IsNotFound(err) {
		kind := cmp.Or(ref.Kind, v1alpha1.KindConcurrencyGroup)
		return []string{fmt.Sprintf("spec.concurrencyGroup: %s %q does not exist; runs wait (their Jobs suspended) until it does", kind, ref.Name)}
	}
	return nil
}
