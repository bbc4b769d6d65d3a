package v1alpha1

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/pkg/cron"
)

// MaxNameLength is the longest ScheduledJob name: 63, the length of the
// job-name label every run's pods carry, minus the 11 characters the CronJob
// controller keeps for "-" and the scheduled time in minutes since the epoch
// (8 digits until 2160, with slack).
const MaxNameLength = 52

// JobName is the name of the Job for the run scheduled at t: the
// ScheduledJob's name and the scheduled time in minutes since the epoch, as
// the CronJob controller names Jobs (getJobName). The name is the lock that
// makes creation idempotent: a second attempt for the same run fails with
// AlreadyExists.
func (sj *ScheduledJob) JobName(t time.Time) string { return RunJobName(sj.Name, t) }

// RunJobName is the name of the Job an owner named owner (a ScheduledJob,
// or a CronJob, whose controller names its Jobs the same way) creates for
// the run scheduled at t.
func RunJobName(owner string, t time.Time) string { return owner + "-" + RunLabelValue(t) }

// RunTimeOfJobName is the scheduled time of the run whose Job, created by
// the owner named owner, is named name; false for another name (a
// trigger's Job, another owner's).
func RunTimeOfJobName(owner, name string) (time.Time, bool) {
	suffix, ok := strings.CutPrefix(name, owner+"-")
	if !ok {
		return time.Time{}, false
	}
	minutes, err := strconv.ParseInt(suffix, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(minutes*60, 0).UTC(), true
}

// RunLabelValue is RunLabel's value for a run scheduled at t: minutes since
// the epoch, as in the run's Job name.
func RunLabelValue(t time.Time) string { return strconv.FormatInt(t.Unix()/60, 10) }

// TriggeredJobName names the Job of a trigger request. It hashes the
// request's value, so handling the same request twice (after a crash)
// creates one Job; the "m" keeps it apart from scheduled runs' all-digit
// suffixes and the length equals theirs.
func (sj *ScheduledJob) TriggeredJobName(request string) string {
	h := fnv.New32a()
	h.Write([]byte(request))
	return fmt.Sprintf("%s-m%07x", sj.Name, h.Sum32()&0xfffffff)
}

// ScheduledTime reads the scheduled time a Job was created for from its
// ScheduledTimestampAnnotation.
func ScheduledTime(job *batchv1.Job) (time.Time, bool) {
	return timeAnnotation(job, ScheduledTimestampAnnotation)
}

// timeAnnotation is the RFC 3339 time job's annotation key holds; false
// without one, or when it does not parse.
func timeAnnotation(job *batchv1.Job, key string) (time.Time, bool) {
	value, ok := job.Annotations[key]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, value)
	return t, err == nil
}

// RunDeadline returns the deadline stamped on a run's Job when it was made
// (DeadlineAnnotation); false for a Job made without one (before
// spec.deadline was set, by hand, or by a backfill) or whose value does
// not parse.
func RunDeadline(job *batchv1.Job) (time.Time, bool) {
	return timeAnnotation(job, DeadlineAnnotation)
}

// StampDeadline records on a run's Job the deadline it is judged by.
func StampDeadline(job *batchv1.Job, deadline time.Time) {
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	job.Annotations[DeadlineAnnotation] = deadline.UTC().Format(time.RFC3339Nano)
}

// JobFinished returns Complete or Failed for a finished Job: the
// condition the Job controller set True.
func JobFinished(job *batchv1.Job) (batchv1.JobConditionType, bool) {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type, true
		}
	}
	return "", false
}

// IsTriggered reports whether a Job was started by TriggerAnnotation rather
// than by the schedule.
func IsTriggered(job *batchv1.Job) bool {
	_, ok := job.Annotations[TriggeredAnnotation]
	return ok
}

// errLocalTimeZone: a zone that depends on the machine is no zone at all for
// a controller whose replicas may run anywhere.
var errLocalTimeZone = errors.New("must be an explicit IANA time zone such as Europe/Amsterdam, not Local")

// LoadTimeZone loads a spec.timeZone. "Local" and "" are refused. The error
// says why without repeating the name, for callers that show it already.
func LoadTimeZone(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "Local") {
		return nil, errLocalTimeZone
	}
	loc, err := cron.LoadLocation(name)
	if err != nil {
		return nil, errors.New("unknown time zone")
	}
	return loc, nil
}

// CronPolicy is the schedule engine's DST policy for this API value; unset
// means Cron, the API's default.
func (p DSTPolicy) CronPolicy() cron.DSTPolicy {
	if p == DSTKubernetes {
		return cron.DSTKubernetes
	}
	return cron.DSTCron
}

// maxStartingDeadlineSeconds is the longest starting deadline a
// time.Duration holds with a second to spare: about 292 years.
const maxStartingDeadlineSeconds = int64(math.MaxInt64/int64(time.Second)) - 1

// StartingDeadline is a startingDeadlineSeconds as a time.Duration. The
// API accepts any non-negative int64 of seconds, which a Duration of
// nanoseconds overflows from about 292 years on: a longer deadline is
// taken as 292 years, a deadline never reached, instead of one wrapped
// into the past that would miss every run.
func StartingDeadline(seconds int64) time.Duration {
	return time.Duration(min(seconds, maxStartingDeadlineSeconds)) * time.Second
}
