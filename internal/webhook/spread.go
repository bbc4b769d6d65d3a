package webhook

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/spread"
	"github.com/ontime-dev/ontime/internal/validation"
)

// DefaultCrowdThreshold is how many other ScheduledJobs and CronJobs
// starting in one of a schedule's minutes make admission warn and propose
// H, as Jenkins proposes H for "0 * * * *".
const DefaultCrowdThreshold = 10

// crowdWarnings warns when a schedule without H starts in a minute in which
// at least crowdThreshold other ScheduledJobs and CronJobs of the cluster
// start, and proposes H. It reads them from the index the manager's
// informers keep; until that has every object it gives no warning.
func (v *Validator) crowdWarnings(sj *v1alpha1.ScheduledJob, meaning v1alpha1.Meaning, now time.Time) admission.Warnings {
	if v.crowdThreshold <= 0 || meaning.Schedule == nil || len(meaning.Schedule.HashTerms()) > 0 {
		return nil
	}
	mine := memberOf(v1alpha1.KindScheduledJob, sj.HashKey(), sj.Spec.Schedule, sj.Spec.TimeZone, string(sj.Spec.DSTPolicy))
	if !mine.ok {
		return nil
	}
	load, ok := v.starts.othersLoad(objectRef{namespace: sj.Namespace, name: sj.Name}, now)
	if !ok {
		return nil
	}
	shared, err := load.Shared(mine.member, now)
	if err != nil || shared < int64(v.crowdThreshold) {
		return nil
	}
	return admission.Warnings{fmt.Sprintf("spec.schedule: %q starts in a minute in which %d other ScheduledJobs and CronJobs start; write %q to give it a minute of its own, or balance a group with spec.spread (docs/spreading.md)",
		sj.Spec.Schedule, shared, validation.ProposeH(sj.Spec.Schedule))}
}

// readMember is an object's schedule as a spread member; ok is false when
// it has none that can be read.
type readMember struct {
	member spread.Member
	ok     bool
}

// memberOf reads an object's schedule as the controller reads its kind
// (v1alpha1.ScheduleParser): a CronJob's in the Kubernetes dialect, a
// ScheduledJob's under its DST policy, H seeded by key.
func memberOf(kind, key, schedule string, timeZone *string, dstPolicy string) readMember {
	m := spread.Member{Key: key, Schedule: schedule}
	if schedule == "" {
		return readMember{member: m}
	}
	zone := ""
	if timeZone != nil {
		zone = *timeZone
	}
	parser, err := v1alpha1.ScheduleParser(kind, key, zone, dstPolicy)
	if err != nil {
		return readMember{member: m}
	}
	m.Parser = parser
	return readMember{member: m, ok: true}
}
