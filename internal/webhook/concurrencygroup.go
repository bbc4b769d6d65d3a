package webhook

import (
	"cmp"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/validation"
)

// +kubebuilder:webhook:path=/validate-ontime-dev-v1alpha1-concurrencygroup,mutating=false,failurePolicy=fail,sideEffects=None,groups=ontime.dev,resources=concurrencygroups,verbs=create;update,versions=v1alpha1,name=vconcurrencygroup.ontime.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-ontime-dev-v1alpha1-clusterconcurrencygroup,mutating=false,failurePolicy=fail,sideEffects=None,groups=ontime.dev,resources=clusterconcurrencygroups,verbs=create;update,versions=v1alpha1,name=vclusterconcurrencygroup.ontime.dev,admissionReviewVersions=v1

// GroupValidator validates ConcurrencyGroups and ClusterConcurrencyGroups
// beyond their schema: the per-value limit's label key and its bound. T is
// the kind it validates; both kinds share validateGroup.
type GroupValidator[T runtime.Object] struct{}

// RegisterGroupValidators serves the validator of both kinds on mgr's
// webhook server.
func RegisterGroupValidators(mgr ctrl.Manager) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.ConcurrencyGroup{}).WithValidator(GroupValidator[*v1alpha1.ConcurrencyGroup]{}).Complete(); err != nil {
		return err
	}
	return ctrl.NewWebhookManagedBy(mgr, &v1alpha1.ClusterConcurrencyGroup{}).WithValidator(GroupValidator[*v1alpha1.ClusterConcurrencyGroup]{}).Complete()
}

var (
	_ admission.Validator[*v1alpha1.ConcurrencyGroup]        = GroupValidator[*v1alpha1.ConcurrencyGroup]{}
	_ admission.Validator[*v1alpha1.ClusterConcurrencyGroup] = GroupValidator[*v1alpha1.ClusterConcurrencyGroup]{}
)

// ValidateCreate checks a new group.
func (GroupValidator[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return nil, validateGroup(obj)
}

// ValidateUpdate checks a changed group.
func (GroupValidator[T]) ValidateUpdate(_ context.Context, _, obj T) (admission.Warnings, error) {
	return nil, validateGroup(obj)
}

// ValidateDelete allows every deletion: the members' waiting runs wait for
// a group of the name again, as they do before it exists.
func (GroupValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

func validateGroup(obj runtime.Object) error {
	var errs field.ErrorList
	var kind, name string
	switch g := obj.(type) {
	case *v1alpha1.ConcurrencyGroup:
		errs, kind, name = validation.ValidateGroupSpec(g.Spec), v1alpha1.KindConcurrencyGroup, g.Name
	case *v1alpha1.ClusterConcurrencyGroup:
		errs, kind, name = validation.ValidateClusterGroupSpec(g.Spec), v1alpha1.KindClusterConcurrencyGroup, g.Name
	default:
		return fmt.Errorf("expected a concurrency group, got %T", obj)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind(kind).GroupKind(), name, errs)
	}
	return nil
}

// checkGroup looks at the group a ScheduledJob joins. It warns when the
// group does not exist (runs wait until it does), and refuses joining a
// ClusterConcurrencyGroup whose namespaceSelector does not select the
// ScheduledJob's namespace: none of its runs would run. A ScheduledJob
// that was already a member (the same group before this change) is only
// warned, so that it can still be changed, suspended or left.
func checkGroup(ctx context.Context, c client.Reader, sj, old *v1alpha1.ScheduledJob) ([]string, field.ErrorList) {
	ref := sj.Spec.ConcurrencyGroup
	if ref == nil {
		return nil, nil
	}
	kind := cmp.Or(ref.Kind, v1alpha1.KindConcurrencyGroup)
	if kind != v1alpha1.KindClusterConcurrencyGroup {
		if err := c.Get(ctx, types.NamespacedName{Namespace: sj.Namespace, Name: ref.Name}, &v1alpha1.ConcurrencyGroup{}); apierrors.IsNotFound(err) {
			return []string{missingGroup(kind, ref.Name)}, nil
		}
		return nil, nil
	}
	group := &v1alpha1.ClusterConcurrencyGroup{}
	if err := c.Get(ctx, types.NamespacedName{Name: ref.Name}, group); err != nil {
		if apierrors.IsNotFound(err) {
			return []string{missingGroup(kind, ref.Name)}, nil
		}
		return nil, nil
	}
	selector, err := group.Spec.Namespaces()
	if err != nil || selector.Empty() {
		// Every namespace joins (no namespace to read), or the group's
		// own admission refuses its selector.
		return nil, nil
	}
	namespace := &corev1.Namespace{}
	if err := c.Get(ctx, types.NamespacedName{Name: sj.Namespace}, namespace); err != nil {
		// Not readable here: the group's controller refuses its runs.
		return nil, nil
	}
	if selector.Matches(labels.Set(namespace.Labels)) {
		return nil, nil
	}
	path := field.NewPath("spec", "concurrencyGroup", "name")
	msg := fmt.Sprintf("ClusterConcurrencyGroup %q's spec.namespaceSelector does not select namespace %q: its runs would never run", ref.Name, sj.Namespace)
	if old != nil && old.Spec.ConcurrencyGroup != nil && cmp.Or(old.Spec.ConcurrencyGroup.Kind, v1alpha1.KindConcurrencyGroup) == kind && old.Spec.ConcurrencyGroup.Name == ref.Name {
		return []string{path.String() + ": " + msg + " (each is marked missed, event NotSelectedByGroup)"}, nil
	}
	return nil, field.ErrorList{field.Forbidden(path, msg)}
}

func missingGroup(kind, name string) string {
	return fmt.Sprintf("spec.concurrencyGroup: %s %q does not exist; runs wait (their Jobs suspended) until it does", kind, name)
}
