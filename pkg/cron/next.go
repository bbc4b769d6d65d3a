package cron

import "time"

// Next returns the first activation time strictly after t, in the
// schedule's location. It returns the zero time only when no activation
// exists, which for a parsed calendar schedule can happen in just one case:
// under DSTKubernetes, a schedule whose every wall-clock time falls in a
// daylight-saving gap (for example "30 2 * 3 0#2" in America/New_York).
// There is no search horizon: "0 0 29 2 *" from 2097 returns 2104-02-29.
//
// Across daylight-saving changes Next follows the schedule's DSTPolicy. In
// America/New_York, where 2026-03-08 02:00 EST jumps to 03:00 EDT and
// 2026-11-01 02:00 EDT falls back to 01:00 EST, under DSTCron:
//
//	"30 2 * * *"   2026-03-08 03:00 EDT (at the jump), then 03-09 02:30 EDT
//	"30 1 * * *"   2026-11-01 01:30 EDT only (not again at 01:30 EST)
//	"*/30 * * * *" 01:00, 01:30 EDT, 01:00, 01:30 EST on 11-01 (elapsed time)
//
// under DSTKubernetes, "30 2 * * *" skips 03-08 and "30 1 * * *" also fires
// at 01:30 EST, as robfig/cron v3 does.
//
// An @every schedule returns t plus the interval, minus t's fraction of a
// second, as robfig/cron does.
func (s *Spec) Next(t time.Time) time.Time {
	if s.every > 0 {
		return t.Add(s.every - time.Duration(t.Nanosecond()))
	}
	// A fire time f is a whole second, so f > t exactly when f >= t.Unix()+1.
	f, ok := s.nextInstant(t.Unix() + 1)
	if !ok {
		return time.Time{}
	}
	return time.Unix(f, 0).In(s.loc)
}

// Prev returns the last activation time at or before t, in the schedule's
// location, under the same rules as Next: Prev(Next(t)) == Next(t), and there
// is no activation strictly between Prev(t) and t. Counting activations
// backwards with Prev is exact, unlike Kubernetes' estimate of missed runs.
// It returns the zero time for @every schedules, which have no fixed phase:
// their activations depend on where the caller started counting.
func (s *Spec) Prev(t time.Time) time.Time {
	if s.every > 0 {
		return time.Time{}
	}
	f, ok := s.prevInstant(t.Unix())
	if !ok {
		return time.Time{}
	}
	return time.Unix(f, 0).In(s.loc)
}

// maxPeriods bounds the walk over UTC-offset periods. A DST zone has two
// periods a year, so this is several centuries, far beyond any schedule Parse
// accepts; only a DSTKubernetes schedule that exists solely inside gaps
// reaches it.
const maxPeriods = 2000

// followsElapsedTime reports whether the schedule fires at every instant
// whose wall-clock reading matches, with no DST adjustment.
func (s *Spec) followsElapsedTime() bool {
	return s.policy == DSTKubernetes || s.wildcardTime
}

// nextInstant returns the first activation at or after instant lo (Unix
// seconds).
func (s *Spec) nextInstant(lo int64) (int64, bool) {
	if s.zone == nil {
		c, ok := s.nextCivil(ceilDiv(lo+s.offset, 60))
		return c*60 - s.offset, ok
	}
	elapsed := s.followsElapsedTime()
	p := s.zone.periodAt(lo)
	// A schedule far apart crosses many periods; the wall-clock match found
	// in one period stays the first match in the next unless wall clocks
	// went back, so it is reused instead of searched again.
	candidate := civilSearch{s: s}
	for range maxPeriods {
		if f, found, more := candidate.firstInPeriod(p, lo, elapsed); found || !more {
			return f, found
		}
		if p.end == noEnd {
			return 0, false
		}
		// Under the fixed-time rules, periods that end more than maxOffset
		// before the candidate's wall time cannot hold it, nor a gap
		// containing it: jump over them. (When following elapsed time, a
		// fall-back repeats wall times before the candidate, so every
		// period must be visited.)
		lo = p.end
		if candidate.valid && !elapsed {
			lo = max(lo, candidate.match*60-maxOffset)
		}
		p = s.zone.periodAt(lo)
	}
	return 0, false
}

// firstInPeriod returns the first activation at or after lo within period
// p (found), or reports whether a later period may still hold one (more).
func (c *civilSearch) firstInPeriod(p period, lo int64, elapsed bool) (f int64, found, more bool) {
	if !elapsed && p.previousOffset < p.offset && p.start >= lo {
		// Wall-clock times in the gap fire once, when the gap ends.
		m, ok := c.atOrAfter(ceilDiv(p.start+p.previousOffset, 60))
		if !ok {
			return 0, false, false
		}
		if m*60 < p.start+p.offset {
			return p.start, true, false
		}
	}
	from := max(lo, p.start)
	if !elapsed && p.previousOffset > p.offset {
		// Skip the second occurrence of repeated wall-clock times.
		from = max(from, p.start+p.previousOffset-p.offset)
	}
	if from >= p.end {
		return 0, false, true
	}
	m, ok := c.atOrAfter(ceilDiv(from+p.offset, 60))
	if !ok {
		return 0, false, false
	}
	if f := m*60 - p.offset; f < p.end {
		return f, true, false
	}
	return 0, false, true
}

// maxOffset bounds the size of any UTC offset (real ones stay within
// -12h..+14h; local mean times before 1900 within ±16h).
const maxOffset = 26 * 3600

// prevInstant returns the last activation at or before instant hi; the
// mirror image of nextInstant, walking periods backwards.
func (s *Spec) prevInstant(hi int64) (int64, bool) {
	if s.zone == nil {
		c, ok := s.prevCivil(floorDiv(hi+s.offset, 60))
		return c*60 - s.offset, ok
	}
	elapsed := s.followsElapsedTime()
	p := s.zone.periodAt(hi)
	for range maxPeriods {
		low := p.start
		if !elapsed && p.previousOffset > p.offset {
			low = p.start + p.previousOffset - p.offset
		}
		if to := min(hi, p.end-1); to >= low {
			c, ok := s.prevCivil(floorDiv(to+p.offset, 60))
			if !ok {
				return 0, false
			}
			if f := c*60 - p.offset; f >= low {
				return f, true
			}
		}
		if !elapsed && p.previousOffset < p.offset && p.start <= hi && s.firesBetween(p.start+p.previousOffset, p.start+p.offset) {
			return p.start, true
		}
		if p.start == noStart {
			return 0, false
		}
		hi = p.start - 1
		p = s.zone.periodAt(hi)
	}
	return 0, false
}

// firesBetween reports whether a wall-clock time in [from, to) (civil
// seconds) matches the schedule.
func (s *Spec) firesBetween(from, to int64) bool {
	c, ok := s.nextCivil(ceilDiv(from, 60))
	return ok && c*60 < to
}

// civilSearch remembers the last nextCivil answer: the first match at or
// after from is match. Asked again from a later minute that is not past
// match, the answer is the same.
type civilSearch struct {
	s           *Spec
	from, match int64
	valid       bool
}

func (c *civilSearch) atOrAfter(minute int64) (int64, bool) {
	if c.valid && c.from <= minute && minute <= c.match {
		return c.match, true
	}
	match, ok := c.s.nextCivil(minute)
	c.from, c.match, c.valid = minute, match, ok
	return match, ok
}
