package cron

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestZoneTableMatchesTimePackage checks the offset table, including its
// 400-year fold past 2440, against the time package at random instants from
// 1800 to 9999 in every zone. A period may start at an artificial boundary
// (the edge of the table's repeating window) where the offset does not
// change; there previousOffset equals offset.
func TestZoneTableMatchesTimePackage(t *testing.T) {
	names := goTZDataZones(t)
	if testing.Short() {
		names = sample(names, 40)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	from := time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	to := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for _, name := range names {
		loc := mustLoad(t, name)
		table, fixed := zoneFor(loc)
		for range 300 {
			u := from + rng.Int64N(to-from)
			want := offsetAt(loc, u)
			if table == nil {
				if fixed != want {
					t.Fatalf("%s at %v: fixed offset %d, time package %d", name, time.Unix(u, 0).UTC(), fixed, want)
				}
				continue
			}
			p := table.periodAt(u)
			if p.offset != want || u < p.start || u >= p.end {
				t.Fatalf("%s at %v: period [%v, %v) offset %d, time package offset %d",
					name, time.Unix(u, 0).UTC(), time.Unix(p.start, 0).UTC(), time.Unix(p.end, 0).UTC(), p.offset, want)
			}
			artificial := p.previousOffset == p.offset && offsetAt(loc, p.start-1) == p.offset
			if p.start != noStart && offsetAt(loc, p.start-1) != p.previousOffset && !artificial {
				t.Fatalf("%s at %v: previous offset %d, time package %d", name, time.Unix(u, 0).UTC(), p.previousOffset, offsetAt(loc, p.start-1))
			}
		}
	}
}
