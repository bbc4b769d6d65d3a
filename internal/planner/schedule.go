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

// once is a runAt schedule.
type once struct{ at time.Time }

func (o once) Prev(t time.Time) time.Time {
	if t.Before(o.at) {
		return time.Time{}
	}
	return o.at
}

func (o once) Next(t time.Time) time.Time {
	if t.Before(o.at) {
		return o.at
	}
	return time.Time{}
}

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
// spec.dstPolicy and spec.spread. lastSchedule anchors an @every schedule;
// placement is where a Balanced spread put the ScheduledJob.
func scheduleOf(sj *v1alpha1.ScheduledJob, lastSchedule *time.Time, placement *v1alpha1.SpreadStatus) specSchedule {
	spec := &sj.Spec
	result := specSchedule{loc: time.UTC}
	if spec.TimeZone != nil {
		loc, err := v1alpha1.LoadTimeZone(*spec.TimeZone)
		if err != nil {
			message := fmt.Sprintf("spec.timeZone %q: %v", *spec.TimeZone, err)
			result.problem = &specProblem{v1alpha1.ReasonUnknownTimeZone, message, unknownTimeZoneEvent(message)}
			return result
		}
		result.loc = loc
	}
	if spec.RunAt != nil {
		result.schedule = once{at: spec.RunAt.Time}
		return result
	}
	if strings.Contains(spec.Schedule, "TZ") && specChanged(sj) {
		result.warnings = append(result.warnings, unsupportedScheduleEvent(spec.Schedule))
	}
	choices, problem := spreadChoices(sj, placement)
	if problem != nil {
		result.problem = problem
		return result
	}
	parser := cron.Parser{Dialect: cron.Extended, Location: result.loc, DSTPolicy: spec.DSTPolicy.CronPolicy(),
		HashKey: sj.HashKey(), HashChoices: choices}
	parsed, err := parser.Parse(spec.Schedule)
	if err != nil {
		result.problem = scheduleProblem(spec.Schedule, err)
		return result
	}
	result.loc = parsed.Location()
	result.effective = parsed.Effective()
	if every := parsed.Interval(); every > 0 && every < time.Minute {
		message := fmt.Sprintf("spec.schedule %q: runs less than a minute apart would share a Job name (names have minute resolution); use @every 1m or more", spec.Schedule)
		result.problem = &specProblem{v1alpha1.ReasonInvalidSchedule, message, invalidScheduleEvent(message)}
		return result
	}
	// An @every schedule counts from the last run, or the creation, as the
	// CronJob controller counts.
	anchor := sj.CreationTimestamp.Time
	if lastSchedule != nil {
		anchor = *lastSchedule
	}
	result.schedule = parsed.Anchored(anchor)
	return result
}

// scheduleProblem explains a schedule that does not parse. A schedule that
// never fires gets upstream's InvalidSchedule event, one that does not parse
// its UnparseableSchedule; the condition says InvalidSchedule for both.
func scheduleProblem(schedule string, err error) *specProblem {
	detail := err.Error()
	var parseErr *cron.ParseError
	if errors.As(err, &parseErr) {
		detail = parseErr.Detail()
	}
	message := fmt.Sprintf("spec.schedule %q: %s", schedule, detail)
	event := unparseableScheduleEvent(message)
	if parseErr != nil && parseErr.Kind == cron.ErrNeverFires {
		event = invalidScheduleEvent(message)
	}
	return &specProblem{v1alpha1.ReasonInvalidSchedule, message, event}
}

// spreadChoices are the values of the schedule's H fields under a
// Balanced spread: the placement's, which the reconciler obtains from the
// group before planning. Without one for the current schedule the
// ScheduledJob waits (the reconciler retries), rather than run at hashed
// minutes it would leave once placed. Under Hash they come from the hash.
func spreadChoices(sj *v1alpha1.ScheduledJob, placement *v1alpha1.SpreadStatus) ([]int, *specProblem) {
	spread := sj.SpreadOf()
	if spread.Strategy != v1alpha1.SpreadBalanced {
		return nil, nil
	}
	if placement == nil || placement.Schedule != sj.Spec.Schedule || placement.Group != spread.Group {
		message := fmt.Sprintf("spec.spread: waiting for a place in spread group %q", spread.Group)
		return nil, &specProblem{v1alpha1.ReasonSpreadPending, message, spreadPendingEvent(message)}
	}
	return placement.Choices, nil
}
