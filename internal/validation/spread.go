package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/spread"
)

// validateSpread warns about spread settings that have nothing to spread.
func validateSpread(sj *v1alpha1.ScheduledJob, meaning v1alpha1.Meaning, path *field.Path) []string {
	if sj.Spec.Spread == nil {
		return nil
	}
	if sj.Spec.RunAt != nil {
		return []string{fmt.Sprintf("%s: has no effect on a runAt ScheduledJob", path)}
	}
	if meaning.Schedule != nil && len(meaning.Schedule.HashTerms()) == 0 {
		return []string{fmt.Sprintf("%s: spec.schedule %q has no H field, so there is nothing to spread; write H where any value will do, such as %q",
			path, sj.Spec.Schedule, ProposeH(sj.Spec.Schedule))}
	}
	return nil
}

// ProposeH is the schedule with H in its minute field, or "H * * * *":
// what a warning proposes for a schedule without H.
func ProposeH(schedule string) string {
	if hashed := spread.HashMinute(schedule); hashed != schedule {
		return hashed
	}
	return "H * * * *"
}
