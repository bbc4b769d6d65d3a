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

// leadOf reads the warm-up lead a CronJob asks for; ok is false when it
// asks for none.
func leadOf(cj *batchv1.CronJob) (lead time.Duration, ok bool, err error) {
	value, ok := cj.Annotations[v1alpha1.WarmUpLeadAnnotation]
	if !ok {
		return 0, false, nil
	}
	lead, err = time.ParseDuration(value)
	switch {
	case err != nil:
		return 0, true, fmt.Errorf("annotation %s %q: not a duration such as 10m", v1alpha1.WarmUpLeadAnnotation, value)
	case lead < v1alpha1.MinWarmUpLead || lead > v1alpha1.MaxWarmUpLead:
		return 0, true, fmt.Errorf("annotation %s %q: must be from %s to %s", v1alpha1.WarmUpLeadAnnotation, value, v1alpha1.MinWarmUpLead, v1alpha1.MaxWarmUpLead)
	}
	return lead, true, nil
}

// errNoSchedule: the CronJob's schedule or time zone cannot be read, so no
// run can be warmed up for; the CronJob controller will not run it either.
var errNoSchedule = errors.New("cannot read the CronJob's schedule")

// runsOf computes a CronJob's runs the way the CronJob controller does:
// robfig/cron's language and daylight-saving behavior (ontime's Kubernetes
// dialect and DST policy), in spec.timeZone (UTC when unset, the zone of
// kube-controller-manager in most clusters), @every counted from the last
// run or the creation.
func runsOf(cj *batchv1.CronJob) (cron.Runs, error) {
	loc := time.UTC
	if tz := cj.Spec.TimeZone; tz != nil {
		var err error
		if loc, err = v1alpha1.LoadTimeZone(*tz); err != nil {
			return nil, fmt.Errorf("%w: spec.timeZone %q: %w", errNoSchedule, *tz, err)
		}
	}
	spec, err := cron.Parser{Location: loc, DSTPolicy: cron.DSTKubernetes}.Parse(cj.Spec.Schedule)
	var parseErr *cron.ParseError
	if errors.As(err, &parseErr) {
		// Detail leaves out the schedule, which the message names already.
		return nil, fmt.Errorf("%w: spec.schedule %q: %s", errNoSchedule, cj.Spec.Schedule, parseErr.Detail())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: spec.schedule %q: %w", errNoSchedule, cj.Spec.Schedule, err)
	}
	anchor := cj.CreationTimestamp.Time
	if last := cj.Status.LastScheduleTime; last != nil {
		anchor = last.Time
	}
	return spec.Anchored(anchor), nil
}

// warmUpInput describes a CronJob's runs around now for warm-up. Jobs are
// the CronJob's Jobs; the CronJob controller names them, like ontime, after
// the run's scheduled minute.
func warmUpInput(cj *batchv1.CronJob, runs cron.Runs, jobs []*batchv1.Job, now time.Time) warmup.Input {
	in := warmup.Input{Now: now}
	if cj.Spec.Suspend == nil || !*cj.Spec.Suspend {
		in.Next = runs.Next(now)
	}
	current := runs.Prev(now)
	if current.IsZero() || current.Before(cj.CreationTimestamp.Time) {
		return in
	}
	in.Current = current
	name := cj.Name + "-" + v1alpha1.RunLabelValue(current)
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
	case spec.StartingDeadlineSeconds != nil && now.Sub(current) > time.Duration(*spec.StartingDeadlineSeconds)*time.Second:
		return true
	}
	return false
}
