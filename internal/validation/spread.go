package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/spread"
)

// validateSpread checks runDuration's bounds, and warns about spread
// settings that have nothing to spread.
func validateSpread(sj *v1alpha1.ScheduledJob, meaning v1alpha1.Meaning, path *field.Path) (field.ErrorList, []string) {
	s := sj.Spec.Spread
	if s == nil {
		return nil, nil
	}
	var errs field.ErrorList
	var warnings []string
	if d := s.RunDuration; d != nil {
		if d.Duration <= 0 || d.Duration > v1alpha1.MaxSpreadRunDuration {
			errs = append(errs, field.Invalid(path.Child("runDuration"), d.Duration.String(),
				fmt.Sprintf("must be above 0 and at most %s: how long one run lasts, counted in every minute it is in flight", v1alpha1.MaxSpreadRunDuration)))
		} else if sj.SpreadOf().Strategy != v1alpha1.SpreadBalanced {
			warnings = append(warnings, fmt.Sprintf("%s: has no effect with strategy %s: only a Balanced spread counts runs in flight", path.Child("runDuration"), sj.SpreadOf().Strategy))
		}
	}
	if sj.Spec.RunAt != nil {
		return errs, append(warnings, fmt.Sprintf("%s: has no effect on a runAt ScheduledJob", path))
	}
	if s.RunDuration == nil && sj.Spec.ConcurrencyGroup != nil && sj.SpreadOf().Strategy == v1alpha1.SpreadBalanced {
		warnings = append(warnings, fmt.Sprintf("%s: the ScheduledJob joins concurrency group %q, which caps runs in flight, but is balanced by its starts; set %s to its typical run so that its runs are placed where the fewest others are in flight (docs/spreading.md)",
			path, sj.Spec.ConcurrencyGroup.Name, path.Child("runDuration")))
	}
	if meaning.Schedule != nil && len(meaning.Schedule.HashTerms()) == 0 {
		warnings = append(warnings, fmt.Sprintf("%s: spec.schedule %q has no H field, so there is nothing to spread; write H where any value will do, such as %q",
			path, sj.Spec.Schedule, ProposeH(sj.Spec.Schedule)))
	}
	return errs, warnings
}

// ProposeH is the schedule with H in its minute field, or "H * * * *":
// what a warning proposes for a schedule without H.
func ProposeH(schedule string) string {
	if hashed := spread.HashMinute(schedule); hashed != schedule {
		return hashed
	}
	return "H * * * *"
}
