package cron

import (
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"
)

// DSTPolicy says what a schedule does when a daylight-saving change skips or
// repeats the wall-clock times it names.
type DSTPolicy int

const (
	// DSTCron follows ISC/Vixie cron. A schedule at a fixed local time that
	// does not exist that day (it falls in a spring-forward gap) fires once
	// at the first instant after the gap; a fixed local time that occurs
	// twice (fall back) fires once, at its first occurrence. A schedule
	// whose minute or hour field starts with * (ISC's MIN_STAR/HR_STAR, for
	// example "*/15 * * * *" or "0 * * * *") follows elapsed time instead:
	// it fires in both copies of a repeated hour and not at all in a
	// skipped one. This is the default.
	DSTCron DSTPolicy = iota
	// DSTKubernetes reproduces robfig/cron v3, which Kubernetes CronJob
	// uses: every instant whose wall-clock reading matches fires, so a
	// local time in a spring-forward gap is skipped and one that occurs
	// twice fires twice.
	DSTKubernetes
)

// String returns "cron" or "kubernetes", the names ParseDSTPolicy accepts.
func (p DSTPolicy) String() string {
	switch p {
	case DSTCron:
		return "cron"
	case DSTKubernetes:
		return "kubernetes"
	}
	return "DSTPolicy(" + strconv.Itoa(int(p)) + ")"
}

// ParseDSTPolicy maps "cron" and "kubernetes" (any case) to a DSTPolicy.
func ParseDSTPolicy(name string) (DSTPolicy, error) {
	switch strings.ToLower(name) {
	case "cron":
		return DSTCron, nil
	case "kubernetes":
		return DSTKubernetes, nil
	}
	return 0, &ParseError{Kind: ErrSyntax, Field: "dst policy", Value: name, Reason: `must be "cron" or "kubernetes"`}
}

// zoneTable lists the UTC offsets of a location over a window of years, so
// that Next and Prev find the offset in effect with a binary search instead
// of asking the time package, which with Go's embedded ("slim") tzdata
// re-parses the zone's rule string for every instant after 2007 (~200 ns).
type zoneTable struct {
	loc *time.Location
	// starts[i] is the instant (Unix seconds) from which offsets[i] applies,
	// until starts[i+1]. starts[0] is the start of the window; before it and
	// from end on, the time package is asked instead.
	starts  []int64
	offsets []int32
	end     int64
	// periodic is true when the offsets from end-gregorianCycle on repeat
	// every 400 years, as the zone's POSIX rule string makes them, so that
	// later instants are looked up 400·k years earlier.
	periodic bool
}

// period is a stretch of time with one UTC offset: [start, end) in Unix
// seconds. previousOffset is the offset in effect just before start, which
// tells whether the period began with a gap (previousOffset < offset) or
// with a repeat of wall-clock times (previousOffset > offset).
type period struct {
	start, end             int64
	offset, previousOffset int64
}

const (
	noStart = math.MinInt64
	noEnd   = math.MaxInt64
)

// gregorianCycle is 400 years in seconds. Dates and weekdays repeat with it,
// and so do transitions that a zone's rule string computes from them.
const gregorianCycle = daysPer400Years * secondsPerDay

var (
	zoneTableStart = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	// The zone files list transitions explicitly up to 2037 at the latest;
	// after that a rule string applies. The table ends one full cycle after
	// 2040, so its last 400 years are all rule-based and repeat.
	zoneTableEnd = time.Date(2440, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	// zoneTables caches one table per *time.Location, held weakly so that
	// locations the program drops are not kept alive by the cache.
	zoneTables sync.Map // weak.Pointer[time.Location] -> *zoneTable
)

// zoneFor returns the table for loc, or nil and the fixed offset when loc
// never changes its offset (UTC, time.FixedZone).
func zoneFor(loc *time.Location) (*zoneTable, int64) {
	if loc == time.UTC {
		return nil, 0
	}
	key := weak.Make(loc)
	var table *zoneTable
	if cached, ok := zoneTables.Load(key); ok {
		table = cached.(*zoneTable)
	} else {
		table = buildZoneTable(loc)
		if cached, loaded := zoneTables.LoadOrStore(key, table); loaded {
			table = cached.(*zoneTable)
		} else {
			runtime.AddCleanup(loc, func(key weak.Pointer[time.Location]) { zoneTables.Delete(key) }, key)
		}
	}
	if table.starts == nil {
		// One offset forever: callers use plain arithmetic.
		return nil, int64(table.offsets[0])
	}
	return table, 0
}

func buildZoneTable(loc *time.Location) *zoneTable {
	table := &zoneTable{loc: loc, end: zoneTableEnd}
	for at := zoneTableStart; at < zoneTableEnd; {
		_, offset := time.Unix(at, 0).In(loc).Zone()
		// Transitions that change only the zone's name or DST flag do not
		// move wall clocks; merge them away.
		if n := len(table.offsets); n == 0 || table.offsets[n-1] != int32(offset) {
			table.starts = append(table.starts, at)
			table.offsets = append(table.offsets, int32(offset))
		}
		end, ok := zoneEnd(loc, at)
		if !ok {
			break
		}
		at = end
	}
	table.periodic = table.repeatsAfterEnd()
	if start, _ := time.Unix(zoneTableStart, 0).In(loc).ZoneBounds(); len(table.starts) == 1 && start.IsZero() {
		// One offset forever: UTC under another name, or a FixedZone.
		table.starts = nil
	}
	return table
}

// repeatsAfterEnd checks, at a sample of instants over the 400 years after
// the table, that the time package agrees with the table's last cycle.
func (z *zoneTable) repeatsAfterEnd() bool {
	const samples = 64
	step := int64(gregorianCycle / samples)
	for u := z.end + step/3; u < z.end+gregorianCycle; u += step {
		_, want := time.Unix(u, 0).In(z.loc).Zone()
		if got := z.lookup(u - gregorianCycle).offset; got != int64(want) {
			return false
		}
	}
	return true
}

// periodAt returns the period containing instant u.
func (z *zoneTable) periodAt(u int64) period {
	if u >= z.end && z.periodic {
		shift := (floorDiv(u-z.end, gregorianCycle) + 1) * gregorianCycle
		p := z.lookup(u - shift)
		if window := z.end - gregorianCycle; p.start < window {
			// The period began before the repeating window; its start
			// there is an artificial boundary with the same offset on
			// both sides, not a transition.
			p.start, p.previousOffset = window, p.offset
		}
		p.start += shift
		if p.end != noEnd {
			p.end += shift
		}
		return p
	}
	if u < z.starts[0] || u >= z.end {
		return z.periodFromTimePackage(u)
	}
	return z.lookup(u)
}

// lookup returns the period containing u, which lies within the table.
func (z *zoneTable) lookup(u int64) period {
	// Binary search for the last start at or before u.
	lo, hi := 0, len(z.starts)
	for lo < hi {
		if mid := int(uint(lo+hi) >> 1); z.starts[mid] <= u {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	i := lo - 1
	p := period{start: z.starts[i], end: z.end, offset: int64(z.offsets[i])}
	if i+1 < len(z.starts) {
		p.end = z.starts[i+1]
	}
	if i > 0 {
		p.previousOffset = int64(z.offsets[i-1])
	} else {
		p = z.periodFromTimePackage(u)
	}
	return p
}

// periodFromTimePackage answers periodAt outside the table's window.
func (z *zoneTable) periodFromTimePackage(u int64) period {
	t := time.Unix(u, 0).In(z.loc)
	_, offset := t.Zone()
	start, _ := t.ZoneBounds()
	p := period{start: noStart, end: noEnd, offset: int64(offset), previousOffset: int64(offset)}
	if !start.IsZero() && start.Unix() <= u {
		p.start = start.Unix()
		_, previous := time.Unix(p.start-1, 0).In(z.loc).Zone()
		p.previousOffset = int64(previous)
	} else if !start.IsZero() {
		p.start = u // see zoneEnd: the bounds are only approximate here
	}
	if end, ok := zoneEnd(z.loc, u); ok {
		p.end = end
	}
	return p
}

// zoneEnd returns the end of the zone period containing instant at: the
// next instant at which the time package may report another offset. Periods
// may end where the offset does not change (callers merge those), but never
// later than a real change. ok is false when the offset never changes again.
//
// Past the last transition in the zone file, the time package computes
// bounds from the zone's rule string (time.tzset), and in leap years it puts
// the end of the year one day early (ystart + 365 days), so for instants on
// December 31 it reports an end at or before the instant itself. When that
// happens, step forward an hour at a time until it reports an end after the
// instant again; no real zone changes its offset in that one day.
func zoneEnd(loc *time.Location, at int64) (int64, bool) {
	for probe := at; probe < at+48*3600; probe += 3600 {
		t := time.Unix(probe, 0).In(loc)
		_, end := t.ZoneBounds()
		if end.IsZero() {
			return 0, false
		}
		if end.Unix() > probe {
			if probe == at {
				return end.Unix(), true
			}
			return probe, true
		}
	}
	return at + 48*3600, true
}
