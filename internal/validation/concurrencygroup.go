package validation

import (
	"fmt"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// ValidateGroupSpec is what admission checks of a ConcurrencyGroup or
// ClusterConcurrencyGroup beyond its schema's bounds: that the per-value
// limit names a label key, and is not above the group's own.
func ValidateGroupSpec(spec v1alpha1.ConcurrencyGroupSpec) field.ErrorList {
	path := field.NewPath("spec", "limitPerLabelValue")
	limit := spec.LimitPerLabelValue
	if limit == nil {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(limit.Key) {
		errs = append(errs, field.Invalid(path.Child("key"), limit.Key, "not a label key: "+msg))
	}
	if limit.MaxActive > spec.MaxActive {
		errs = append(errs, field.Invalid(path.Child("maxActive"), limit.MaxActive,
			fmt.Sprintf("is above spec.maxActive (%d), which bounds every value's runs anyway", spec.MaxActive)))
	}
	return errs
}

// ValidateClusterGroupSpec is ValidateGroupSpec, and a namespaceSelector
// that is a label selector.
func ValidateClusterGroupSpec(spec v1alpha1.ClusterConcurrencyGroupSpec) field.ErrorList {
	errs := ValidateGroupSpec(spec.ConcurrencyGroupSpec)
	if spec.NamespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.NamespaceSelector, metav1validation.LabelSelectorValidationOptions{},
			field.NewPath("spec", "namespaceSelector"))...)
	}
	return errs
}

// validateConcurrencyGroup checks a ScheduledJob's group reference: a name
// that can be a label value, and no EarlyStart warm-up, whose Job is
// created before its time with pods that start themselves.
func validateConcurrencyGroup(spec v1alpha1.ScheduledJobSpec, path *field.Path) field.ErrorList {
	group := spec.ConcurrencyGroup
	if group == nil {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(group.Name) {
		errs = append(errs, field.Invalid(path.Child("name"), group.Name, msg))
	}
	if w := spec.WarmUp; w != nil && w.Strategy == v1alpha1.WarmUpEarlyStart {
		errs = append(errs, field.Invalid(path, group.Name,
			"not with warmUp strategy EarlyStart, whose Job is created before its time and cannot wait for the group; use Placeholder or CapacityBuffer"))
	}
	return errs
}
