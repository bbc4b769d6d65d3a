package webhook

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/spread"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// DefaultCrowdThreshold is how many other ScheduledJobs and CronJobs
// starting in one of a schedule's minutes make admission warn and propose
// H, as Jenkins proposes H for "0 * * * *".
const DefaultCrowdThreshold = 10

// validateSpread warns about spread settings that have nothing to spread.
func validateSpread(sj *v1alpha1.ScheduledJob, path *field.Path) admission.Warnings {
	if sj.Spec.Spread == nil {
		return nil
	}
	if sj.Spec.RunAt != nil {
		return admission.Warnings{fmt.Sprintf("%s: has no effect on a runAt ScheduledJob", path)}
	}
	spec, err := cron.Parser{Dialect: cron.Extended, HashKey: hashKey(sj)}.Parse(sj.Spec.Schedule)
	if err == nil && len(spec.HashTerms()) == 0 {
		return admission.Warnings{fmt.Sprintf("%s: spec.schedule %q has no H field, so there is nothing to spread; write H where any value will do, such as %q",
			path, sj.Spec.Schedule, proposal(sj.Spec.Schedule))}
	}
	return nil
}

// hashKey is the ScheduledJob's H key, or a stand-in while it has no name
// yet (generateName): any key shows whether the schedule is valid.
func hashKey(sj *v1alpha1.ScheduledJob) string {
	if sj.Name == "" {
		return sj.Namespace + "/" + sj.GenerateName
	}
	return sj.HashKey()
}

// proposal is the schedule with H in its minute field, or "H * * * *".
func proposal(schedule string) string {
	if hashed := spread.HashMinute(schedule); hashed != schedule {
		return hashed
	}
	return "H * * * *"
}

// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch

// crowdWarnings warns when a schedule without H starts in a minute in which
// at least crowdThreshold other ScheduledJobs and CronJobs of the cluster
// start, and proposes H. It reads them from the manager's cache; a list
// that fails gives no warning, never an error.
func (v *Validator) crowdWarnings(ctx context.Context, sj *v1alpha1.ScheduledJob, now time.Time) admission.Warnings {
	if v.crowdThreshold <= 0 || sj.Spec.Schedule == "" {
		return nil
	}
	mine, ok := memberOf(hashKey(sj), sj.Spec.Schedule, sj.Spec.TimeZone)
	if spec, err := mine.Parse(); !ok || err != nil || len(spec.HashTerms()) > 0 {
		return nil
	}
	load, ok := v.othersLoad(ctx, sj, now)
	if !ok {
		return nil
	}
	shared, err := load.Shared(mine, now)
	if err != nil || shared < int64(v.crowdThreshold) {
		return nil
	}
	return admission.Warnings{fmt.Sprintf("spec.schedule: %q starts in a minute in which %d other ScheduledJobs and CronJobs start; write %q to give it a minute of its own, or balance a group with spec.spread (docs/spreading.md)",
		sj.Spec.Schedule, shared, proposal(sj.Spec.Schedule))}
}

// othersLoad counts the starts of every other ScheduledJob (at its
// effective schedule) and CronJob per minute of the day.
func (v *Validator) othersLoad(ctx context.Context, sj *v1alpha1.ScheduledJob, now time.Time) (*spread.Load, bool) {
	var sjs v1alpha1.ScheduledJobList
	var cronJobs batchv1.CronJobList
	// Read-only: with ten thousand ScheduledJobs, a copy per admission
	// would cost more than counting them.
	if v.client.List(ctx, &sjs, client.UnsafeDisableDeepCopy) != nil || v.client.List(ctx, &cronJobs, client.UnsafeDisableDeepCopy) != nil {
		return nil, false
	}
	others := make([]schedule, 0, len(sjs.Items)+len(cronJobs.Items))
	for i := range sjs.Items {
		other := &sjs.Items[i]
		if other.Namespace == sj.Namespace && other.Name == sj.Name {
			continue
		}
		expression := other.Spec.Schedule
		if other.Status.EffectiveSchedule != "" {
			expression = other.Status.EffectiveSchedule
		}
		others = append(others, schedule{key: other.HashKey(), expression: expression, timeZone: other.Spec.TimeZone})
	}
	for i := range cronJobs.Items {
		c := &cronJobs.Items[i]
		others = append(others, schedule{key: c.Namespace + "/" + c.Name, expression: c.Spec.Schedule, timeZone: c.Spec.TimeZone})
	}
	return v.starts.load(others, now), true
}

// schedule is one object's schedule, for the crowded-minute check.
type schedule struct {
	key, expression string
	timeZone        *string
}

// startsMemo remembers the minutes of the day (UTC) in which each schedule
// of the cluster starts, so that the crowded-minute check parses a schedule
// once, not on every admission: with ten thousand ScheduledJobs, parsing
// them all took tens of milliseconds of CPU per admission
// (docs/performance.md).
type startsMemo struct {
	mu      sync.Mutex
	minutes map[startsKey][]int
}

// startsKey identifies a schedule's starts: the object's key (which seeds
// H), the schedule, its zone and the zone's UTC offset now (a daylight
// saving change moves them).
type startsKey struct {
	key, expression, zone string
	offset                int
}

// maxMemoized bounds the memo. When full it starts again empty: entries of
// deleted or changed objects are never looked up again.
const maxMemoized = 100_000

// load adds up the starts of schedules; one that does not parse (a runAt,
// an object admitted before a rule changed) adds none.
func (s *startsMemo) load(schedules []schedule, now time.Time) *spread.Load {
	load := &spread.Load{}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.minutes == nil || len(s.minutes) > maxMemoized {
		s.minutes = map[startsKey][]int{}
	}
	for _, sched := range schedules {
		m, ok := memberOf(sched.key, sched.expression, sched.timeZone)
		if !ok {
			continue
		}
		key := startsKey{key: sched.key, expression: sched.expression}
		if m.Location != nil {
			key.zone = m.Location.String()
			_, key.offset = now.In(m.Location).Zone()
		}
		minutes, known := s.minutes[key]
		if !known {
			// A schedule that does not parse is remembered as no starts.
			minutes, _ = m.UTCMinutes(now)
			s.minutes[key] = minutes
		}
		load.AddStarts(minutes, 1)
	}
	return load
}

func memberOf(key, schedule string, timeZone *string) (spread.Member, bool) {
	m := spread.Member{Key: key, Schedule: schedule}
	if schedule == "" {
		return m, false
	}
	if timeZone != nil {
		loc, err := v1alpha1.LoadTimeZone(*timeZone)
		if err != nil {
			return m, false
		}
		m.Location = loc
	}
	return m, true
}
