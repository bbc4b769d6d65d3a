package spread

import (
	"fmt"

	"github.com/ontime-dev/ontime/pkg/cron"
)

// testRead reads schedules as v1alpha1.ScheduleParser reads a
// ScheduledJob's under its default DST policy, CronJobs' included (H in a
// CronJob manifest is what Manifests replaces). This package's tests may
// not import the API; the webhook's, the ledger store's and the CLI's
// tests use the real one.
func testRead(_, key, timeZone, _ string) (cron.Parser, error) {
	parser := cron.Parser{Dialect: cron.Extended, HashKey: key}
	if timeZone == "" {
		return parser, nil
	}
	loc, err := cron.LoadLocation(timeZone)
	if err != nil {
		return parser, fmt.Errorf("spec.timeZone %q: %w", timeZone, err)
	}
	parser.Location = loc
	return parser, nil
}

// testMember is a member whose schedule testRead reads.
func testMember(key, schedule string) Member {
	parser, _ := testRead(KindScheduledJob, key, "", "")
	return Member{Key: key, Schedule: schedule, Parser: parser}
}
