package planner

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// schedule says when runs are due: an anchored cron.Schedule, or once.
type schedule = cron.Runs

// specSchedule is what the spec says about when to run.
type specSchedule struct {
	// schedule is nil when problem is set.
	schedule schedule
	// loc is the zone runs are named in: the schedule's, else
	// spec.timeZone's, else UTC.
	loc *time.Location
	// effective is the schedule with its H fields replaced by their values
	// ("" for runAt and a schedule that cannot run).
	effective string
	// problem is why the spec cannot run, if it cannot.
	problem *specProblem
	// warnings are events about a spec that runs all the same.
	warnings []Event
}

// specProblem is a spec that admission let through but that cannot run: the
// Ready condition says why and the controller waits for the spec to change,
// instead of stalling silently as upstream does (it returns with no requeue
// and only an event).
type specProblem struct {
	condition string
	message   string
	event     Event
}

// scheduleOf reads spec.schedule or spec.runAt, spec.timeZone,
// spec.dstPolicy and spec.spread through the spec's one Meaning.
// lastSchedule anchors an @every schedule; placement is where a Balanced
// spread put the ScheduledJob.
func scheduleOf(sj *v1alpha1.ScheduledJob, lastSchedule *time.Time, placement *v1alpha1.SpreadStatus) specSchedule {
	spec := &sj.Spec
	result := specSchedule{loc: time.UTC}
	if spec.RunAt == nil && strings.Contains(spec.Schedule, "TZ") && specChanged(sj) {
		result.warnings = append(result.warnings, unsupportedScheduleEvent(spec.Schedule))
	}
	var choices []int
	if spec.RunAt == nil {
		var problem *specProblem
		if choices, problem = spreadChoices(sj, placement); problem != nil {
			result.problem = problem
			return result
		}
	}
	meaning, err := sj.Meaning(choices)
	if errs := v1alpha1.SpecErrors(err); len(errs) > 0 {
		result.problem = problemOf(errs[0])
		return result
	}
	result.loc, result.effective = meaning.Location, meaning.Effective()
	result.schedule = meaning.RunsSince(sj.CreationTimestamp.Time, lastSchedule)
	return result
}

// problemOf explains a spec field that cannot be read. A schedule that
// never fires or runs less than a minute apart gets upstream's
// InvalidSchedule event, one that does not parse its UnparseableSchedule;
// the condition says InvalidSchedule for both.
func problemOf(e *v1alpha1.SpecError) *specProblem {
	message := e.Error()
	if e.Reason == v1alpha1.ReasonUnknownTimeZone {
		return &specProblem{e.Reason, message, unknownTimeZoneEvent(message)}
	}
	var parseErr *cron.ParseError
	if errors.As(e, &parseErr) && parseErr.Kind != cron.ErrNeverFires {
		return &specProblem{e.Reason, message, unparseableScheduleEvent(message)}
	}
	return &specProblem{e.Reason, message, invalidScheduleEvent(message)}
}

// spreadChoices are the values of the schedule's H fields under a
// Balanced spread: the placement's, which the reconciler obtains from the
// group before planning. Without one for the current schedule the
// ScheduledJob waits (the reconciler retries), rather than run at hashed
// minutes it would leave once placed. Under Hash they come from the hash.
func spreadChoices(sj *v1alpha1.ScheduledJob, placement *v1alpha1.SpreadStatus) ([]int, *specProblem) {
	spread := sj.SpreadOf()
	if spread.Strategy != v1alpha1.SpreadBalanced || len(sj.Spec.Schedules) > 0 {
		// A list is not placed (admission refuses Balanced with one; a
		// spec stored without admission is reported as invalid).
		return nil, nil
	}
	if placement == nil || placement.Schedule != sj.Spec.Schedule || placement.Group != spread.Group {
		message := fmt.Sprintf("spec.spread: waiting for a place in spread group %q", spread.Group)
		return nil, &specProblem{v1alpha1.ReasonSpreadPending, message, spreadPendingEvent(message)}
	}
	return placement.Choices, nil
}
