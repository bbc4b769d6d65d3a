package cron

import (
	"fmt"
	"strings"
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
)

// benchCorpus is 19 schedules of the shapes CronJobs use: every minute,
// steps, ranges, lists, descriptors, weekdays by name, and days that exist
// only in some months or years (29 February, the 31st), so that Next's
// search is measured where it is long as well as short
// (docs/performance.md).
var benchCorpus = []string{
	"* * * * *", "*/5 * * * *", "0 0 * * *", "0 0 29 2 *", "0 0 31 * *",
	"0 9 * * 1-5", "15 14 1 * *", "0 22 * * 1-5", "23 0-20/2 * * *", "5 4 * * sun",
	"0 0,12 1 */2 *", "0 4 8-14 * *", "0 0 1,15 * 3", "@hourly", "@daily",
	"0 0 13 * 5", "59 23 31 12 *", "0 12 * * 0,6", "30 2 * * *",
}

var benchStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BenchmarkParse parses the corpus in turn; one op is one parse.
//
//	go test -run XXX -bench 'Parse' -benchmem -count 5 ./pkg/cron
func BenchmarkParse(b *testing.B) {
	b.Run("engine=ontime", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := Parse(benchCorpus[i%len(benchCorpus)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine=robfig", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := robfig.ParseStandard(benchCorpus[i%len(benchCorpus)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNext measures one Next call, in chains of 1000 successive calls
// from 2026-01-01 (restarting when robfig gives up), for each corpus entry
// and for the whole corpus mixed, in UTC and in America/New_York.
//
//	go test -run XXX -bench 'Next' -benchmem -count 5 ./pkg/cron
func BenchmarkNext(b *testing.B) {
	for _, zone := range []string{"UTC", "America/New_York"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			b.Fatal(err)
		}
		ours := make([]Schedule, len(benchCorpus))
		theirs := make([]Schedule, len(benchCorpus))
		for i, spec := range benchCorpus {
			s, err := Parser{Location: loc}.Parse(spec)
			if err != nil {
				b.Fatal(err)
			}
			ours[i] = s
			if theirs[i], err = robfig.ParseStandard("TZ=" + zone + " " + spec); err != nil {
				b.Fatal(err)
			}
		}
		label := strings.ReplaceAll(zone, "/", "_") // a / would start a new sub-benchmark level
		for _, engine := range []struct {
			name      string
			schedules []Schedule
		}{{"ontime", ours}, {"robfig", theirs}} {
			b.Run(fmt.Sprintf("zone=%s/engine=%s/spec=mixed", label, engine.name), func(b *testing.B) {
				benchmarkChain(b, engine.schedules)
			})
			for i := range benchCorpus {
				b.Run(fmt.Sprintf("zone=%s/engine=%s/spec=%02d", label, engine.name, i), func(b *testing.B) {
					benchmarkChain(b, engine.schedules[i:i+1])
				})
			}
		}
	}
}

// benchmarkChain calls Next on the schedules in turn, each continuing its
// own chain from its last result.
func benchmarkChain(b *testing.B, schedules []Schedule) {
	b.ReportAllocs()
	at := make([]time.Time, len(schedules))
	for i := range at {
		at[i] = benchStart
	}
	calls := 0
	for i := 0; b.Loop(); i++ {
		k := i % len(schedules)
		next := schedules[k].Next(at[k])
		if next.IsZero() || calls%1000 == 999 {
			next = benchStart
		}
		at[k] = next
		calls++
	}
}
