package cronjobwarmup

import (
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// errNoSchedule: the CronJob's schedule or time zone cannot be read, so no
// run can be warmed up for; the CronJob controller will not run it either.
var errNoSchedule = errors.New("cannot read the CronJob's schedule")

// cronJobMeaning is what a CronJob asks of ontime: its warm-up (nil when
// it asks for none) and its runs, or why they cannot be read (err).
type cronJobMeaning struct {
	warmUp *v1alpha1.WarmUpSettings
	runs   cron.Runs
	err    error
}

// meaningOf reads the CronJob through v1alpha1.CronJobMeaning, with @every
// counted from the last run or the creation.
func meaningOf(cj *batchv1.CronJob, defaults v1alpha1.ControllerDefaults) cronJobMeaning {
	meaning, err := v1alpha1.CronJobMeaning(cj, defaults)
	var specErr *v1alpha1.SpecError
	switch {
	case errors.As(err, &specErr):
		return cronJobMeaning{err: fmt.Errorf("%w: %w", errNoSchedule, specErr)}
	case err != nil || meaning.WarmUp == nil:
		return cronJobMeaning{err: err}
	}
	var last *time.Time
	if cj.Status.LastScheduleTime != nil {
		last = &cj.Status.LastScheduleTime.Time
	}
	return cronJobMeaning{warmUp: meaning.WarmUp, runs: meaning.RunsSince(cj.CreationTimestamp.Time, last)}
}

// runsAround describes a CronJob's runs around now for warm-up. Jobs are
// the CronJob's Jobs; the CronJob controller names them, like ontime, after
// the run's scheduled minute.
func runsAround(cj *batchv1.CronJob, runs cron.Runs, jobs []*batchv1.Job, now time.Time) warmup.Input {
	in := warmup.Input{Now: now}
	if cj.Spec.Suspend == nil || !*cj.Spec.Suspend {
		in.Next = runs.Next(now)
	}
	current := runs.Prev(now)
	if current.IsZero() || current.Before(cj.CreationTimestamp.Time) {
		return in
	}
	in.Current = current
	name := v1alpha1.RunJobName(cj.Name, current)
	for _, job := range jobs {
		if job.Name == name {
			in.CurrentJob = job
		}
	}
	in.CurrentStarts = in.CurrentJob != nil || !notStarting(cj, current, now)
	return in
}

// notStarting reports whether the CronJob controller will not start the
// run at current, whose Job does not exist yet: it is suspended,
// concurrencyPolicy Forbid holds it back behind an active Job, or it is
// past startingDeadlineSeconds. Otherwise the Job may still come (the
// CronJob controller is seconds late under load), and the placeholders
// wait for it within their hold.
func notStarting(cj *batchv1.CronJob, current, now time.Time) bool {
	spec := &cj.Spec
	switch {
	case spec.Suspend != nil && *spec.Suspend:
		return true
	case spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0:
		return true
	case spec.StartingDeadlineSeconds != nil && now.Sub(current) > v1alpha1.StartingDeadline(*spec.StartingDeadlineSeconds):
		return true
	}
	return false
}
