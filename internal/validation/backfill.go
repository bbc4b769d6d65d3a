package validation

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// ValidateBackfill is what admission checks of a new Backfill beyond its
// schema and CEL rules (bounds, from ≤ to, an unchangeable spec): that it
// backfills the past. A later time is the live schedule's; the controller
// would wait for it, which reads as a second schedule, not a backfill.
func ValidateBackfill(bf *v1alpha1.Backfill, now time.Time) field.ErrorList {
	var errs field.ErrorList
	if bf.Spec.To.After(now) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "to"), bf.Spec.To.UTC().Format(time.RFC3339),
			"is in the future (now is "+now.UTC().Format(time.RFC3339)+"): a backfill runs past times; the live schedule runs later ones"))
	}
	if bf.Spec.To.Before(&bf.Spec.From) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "to"), bf.Spec.To.UTC().Format(time.RFC3339),
			"is before spec.from ("+bf.Spec.From.UTC().Format(time.RFC3339)+")"))
	}
	return errs
}
