package planner

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/validation"
)

// A ScheduledJob can be stored without the admission webhook's checks:
// before it is installed, under failurePolicy Ignore, in a namespace it
// excludes. The planner checks the stored spec with the webhook's own
// rules (internal/validation), as the object written again as it is would
// be checked, and says what it finds instead of running silently:
//
//   - a spec.warmUp rule broken: runs start without warm-up, and
//     CapacityReady is False with reason InvalidWarmUp;
//   - any other rule broken: no run starts, and Ready is False with reason
//     InvalidSpec. The schedule's rules are left to scheduleOf: one that
//     cannot be read keeps its own reasons (InvalidSchedule,
//     UnknownTimeZone), and TZ in a stored schedule runs as the CronJob
//     controller runs it, with an UnsupportedSchedule warning.
//
// Each comes with a Warning event of the same reason, once per change, whose
// message names every field and value as the webhook's answer would.

// invalidity is what the webhook's rules find wrong with a stored spec.
type invalidity struct {
	spec, warmUp field.ErrorList
}

// invalidityOf checks sj with the webhook's rules.
func invalidityOf(sj *v1alpha1.ScheduledJob, now time.Time) invalidity {
	errs, _ := validation.Validate(sj, sj, now)
	var found invalidity
	warmUp := field.NewPath("spec", "warmUp").String()
	schedule := field.NewPath("spec", "schedule").String()
	for _, err := range errs {
		switch {
		case err.Field == schedule:
		case strings.HasPrefix(err.Field, warmUp):
			found.warmUp = append(found.warmUp, err)
		default:
			found.spec = append(found.spec, err)
		}
	}
	return found
}

// message is the errors as the webhook's answer lists them.
func message(errs field.ErrorList) string { return errs.ToAggregate().Error() }

func invalidSpecEvent(message string) Event {
	return newEvent(corev1.EventTypeWarning, v1alpha1.ReasonInvalidSpec, message)
}
