package cron

import (
	"math/bits"
	"time"
)

// Schedule is the one-method shape robfig/cron uses, so callers can swap
// engines. *Spec implements it.
type Schedule interface {
	// Next returns the first activation time strictly after t.
	Next(t time.Time) time.Time
}

// Spec is a parsed schedule. A Spec is immutable and safe for concurrent use;
// Next and Prev do not allocate.
type Spec struct {
	text string

	// Bit sets of the allowed values: minute bits 0-59, hour 0-23,
	// day of month 1-31, month 1-12, day of week 0-6 (0 = Sunday).
	minute uint64
	hour   uint32
	dom    uint32
	month  uint16
	dow    uint8

	// dowRepeated is dow repeated over seven weeks, so the weekdays of a
	// whole month are one shift away (see dayMask).
	dowRepeated uint64

	// domStar and dowStar are robfig's "star bit": the field was * or ?
	// with step 1. When either is set, a day must match both fields; when
	// neither is, a day matching either field matches (POSIX OR).
	domStar, dowStar bool

	// wildcardTime is ISC cron's MIN_STAR|HR_STAR: the minute or hour field
	// starts with *. Such schedules follow elapsed time across DST changes.
	wildcardTime bool

	// ext holds the extended day terms (L, W, #); nil when there are none,
	// which keeps the common path to two mask operations.
	ext *dayTerms

	// every is the @every interval; when non-zero the fields above are unused.
	every time.Duration

	// hashTerms are the H terms and the values they took; nil without H.
	hashTerms []HashTerm

	loc    *time.Location
	zone   *zoneTable // nil when loc has a single fixed offset
	offset int64      // that fixed offset in seconds, when zone is nil
	policy DSTPolicy
}

// dayTerms are the extended day-of-month and day-of-week terms.
type dayTerms struct {
	lastMinus      uint32   // bit n: L-n, the nth day before the last (L-0 = L)
	nearestWeekday uint32   // bit d: dW, the weekday nearest to day d
	lastWeekday    bool     // LW: the last weekday of the month
	nth            [7]uint8 // nth[w] bit k: w#(k+1), the (k+1)th weekday w
	lastOfWeekday  uint8    // bit w: wL, the last weekday w of the month
}

// String returns the schedule as it was written.
func (s *Spec) String() string { return s.text }

// Location returns the time zone the schedule is evaluated in.
func (s *Spec) Location() *time.Location { return s.loc }

// Interval returns the interval of an @every schedule, and 0 for a
// calendar schedule.
func (s *Spec) Interval() time.Duration { return s.every }

// DSTPolicy returns the policy the schedule was parsed with.
func (s *Spec) DSTPolicy() DSTPolicy { return s.policy }

// dayMask returns the days (bits 1..length) of a month of the given length
// whose first day falls on weekday firstWeekday that the schedule allows.
func (s *Spec) dayMask(length, firstWeekday int) uint32 {
	lengthMask := uint32(1)<<uint(length+1) - 2
	domDays := s.dom
	dowDays := uint32(s.dowRepeated>>uint(firstWeekday)) << 1
	if s.ext != nil {
		domDays |= s.ext.domDays(length, firstWeekday)
		dowDays |= s.ext.dowDays(length, firstWeekday)
	}
	if s.domStar || s.dowStar {
		return domDays & dowDays & lengthMask
	}
	return (domDays | dowDays) & lengthMask
}

func (t *dayTerms) domDays(length, firstWeekday int) uint32 {
	var days uint32
	for offsets := t.lastMinus; offsets != 0; offsets &= offsets - 1 {
		if d := length - bits.TrailingZeros32(offsets); d >= 1 {
			days |= 1 << uint(d)
		}
	}
	for nearest := t.nearestWeekday; nearest != 0; nearest &= nearest - 1 {
		if d := nearestWeekday(bits.TrailingZeros32(nearest), length, firstWeekday); d > 0 {
			days |= 1 << uint(d)
		}
	}
	if t.lastWeekday {
		d := length
		switch (firstWeekday + length - 1) % 7 {
		case 6: // Saturday
			d--
		case 0: // Sunday
			d -= 2
		}
		days |= 1 << uint(d)
	}
	return days
}

// nearestWeekday is the weekday (Monday-Friday) nearest to day, without
// leaving the month; 0 when the month has no such day.
func nearestWeekday(day, length, firstWeekday int) int {
	if day > length {
		return 0
	}
	switch (firstWeekday + day - 1) % 7 {
	case 6: // Saturday: Friday before, or Monday after if day is the 1st
		if day > 1 {
			return day - 1
		}
		return day + 2
	case 0: // Sunday: Monday after, or Friday before if day is the last
		if day < length {
			return day + 1
		}
		return day - 2
	}
	return day
}

func (t *dayTerms) dowDays(length, firstWeekday int) uint32 {
	var days uint32
	for w := 0; w < 7; w++ {
		first := 1 + (w-firstWeekday+7)%7 // first day of the month on weekday w
		for nth := t.nth[w]; nth != 0; nth &= nth - 1 {
			if d := first + 7*bits.TrailingZeros8(nth); d <= length {
				days |= 1 << uint(d)
			}
		}
		if t.lastOfWeekday&(1<<uint(w)) != 0 {
			days |= 1 << uint(first+7*((length-first)/7))
		}
	}
	return days
}

// nextCivil returns the first matching civil minute (minutes since
// 1970-01-01T00:00 on the wall clock, as if UTC) at or after c. ok is false
// only if none exists, which Parse rules out; the bound on the loop is a
// guard, not a horizon.
func (s *Spec) nextCivil(c int64) (int64, bool) {
	day := floorDiv(c, minutesPerDay)
	minuteOfDay := int(c - day*minutesPerDay)
	hour, minute := minuteOfDay/60, minuteOfDay%60
	year, month, dayOfMonth := civilFromDays(day)
	for months := 0; months <= 12*400; months++ {
		if s.month&(1<<uint(month)) == 0 {
			year, month = s.nextMonth(year, month)
			dayOfMonth, hour, minute = 1, 0, 0
		}
		first := daysFromCivil(year, month, 1)
		days := s.dayMask(monthLength(year, month), weekdayOf(first)) >> uint(dayOfMonth) << uint(dayOfMonth)
		for days != 0 {
			if d := bits.TrailingZeros32(days); d != dayOfMonth {
				dayOfMonth, hour, minute = d, 0, 0
			}
			if h, m, ok := s.timeAtOrAfter(hour, minute); ok {
				return (first+int64(dayOfMonth-1))*minutesPerDay + int64(h*60+m), true
			}
			days &^= 1 << uint(dayOfMonth)
		}
		year, month = s.nextMonth(year, month)
		dayOfMonth, hour, minute = 1, 0, 0
	}
	return 0, false
}

// timeAtOrAfter returns the first allowed hour:minute at or after
// hour:minute on the same day.
func (s *Spec) timeAtOrAfter(hour, minute int) (int, int, bool) {
	hours := s.hour >> uint(hour) << uint(hour)
	if hours == 0 {
		return 0, 0, false
	}
	if h := bits.TrailingZeros32(hours); h != hour {
		return h, bits.TrailingZeros64(s.minute), true
	}
	if minutes := s.minute >> uint(minute) << uint(minute); minutes != 0 {
		return hour, bits.TrailingZeros64(minutes), true
	}
	hours &^= 1 << uint(hour)
	if hours == 0 {
		return 0, 0, false
	}
	return bits.TrailingZeros32(hours), bits.TrailingZeros64(s.minute), true
}

// nextMonth returns the first allowed month strictly after year-month.
func (s *Spec) nextMonth(year int64, month int) (int64, int) {
	if later := s.month >> uint(month+1) << uint(month+1); later != 0 {
		return year, bits.TrailingZeros16(later)
	}
	return year + 1, bits.TrailingZeros16(s.month)
}

// prevCivil returns the last matching civil minute at or before c. It is
// nextCivil's mirror image, kept as a separate tight loop rather than one
// loop parameterized by direction: both are the engine's hot path.
func (s *Spec) prevCivil(c int64) (int64, bool) {
	day := floorDiv(c, minutesPerDay)
	minuteOfDay := int(c - day*minutesPerDay)
	hour, minute := minuteOfDay/60, minuteOfDay%60
	year, month, dayOfMonth := civilFromDays(day)
	for months := 0; months <= 12*400; months++ {
		if s.month&(1<<uint(month)) == 0 {
			year, month = s.prevMonth(year, month)
			dayOfMonth, hour, minute = 31, 23, 59
		}
		first := daysFromCivil(year, month, 1)
		days := s.dayMask(monthLength(year, month), weekdayOf(first)) & (uint32(2)<<uint(dayOfMonth) - 1)
		for days != 0 {
			if d := 31 - bits.LeadingZeros32(days); d != dayOfMonth {
				dayOfMonth, hour, minute = d, 23, 59
			}
			if h, m, ok := s.timeAtOrBefore(hour, minute); ok {
				return (first+int64(dayOfMonth-1))*minutesPerDay + int64(h*60+m), true
			}
			days &^= 1 << uint(dayOfMonth)
		}
		year, month = s.prevMonth(year, month)
		dayOfMonth, hour, minute = 31, 23, 59
	}
	return 0, false
}

// timeAtOrBefore returns the last allowed hour:minute at or before
// hour:minute on the same day.
func (s *Spec) timeAtOrBefore(hour, minute int) (int, int, bool) {
	hours := s.hour & (uint32(2)<<uint(hour) - 1)
	if hours == 0 {
		return 0, 0, false
	}
	if h := 31 - bits.LeadingZeros32(hours); h != hour {
		return h, 63 - bits.LeadingZeros64(s.minute), true
	}
	if minutes := s.minute & (uint64(2)<<uint(minute) - 1); minutes != 0 {
		return hour, 63 - bits.LeadingZeros64(minutes), true
	}
	hours &^= 1 << uint(hour)
	if hours == 0 {
		return 0, 0, false
	}
	return 31 - bits.LeadingZeros32(hours), 63 - bits.LeadingZeros64(s.minute), true
}

// prevMonth returns the last allowed month strictly before year-month.
func (s *Spec) prevMonth(year int64, month int) (int64, int) {
	if earlier := s.month & (uint16(1)<<uint(month) - 1); earlier != 0 {
		return year, 15 - bits.LeadingZeros16(earlier)
	}
	return year - 1, 15 - bits.LeadingZeros16(s.month)
}

// feasible reports whether the schedule fires at all. Every month occurs
// with every first weekday (and February in leap and common years) within a
// 400-year cycle, so checking those combinations is exact.
func (s *Spec) feasible() bool {
	if s.minute&allMinutes == 0 || s.hour == 0 || s.month == 0 {
		return false
	}
	for month := 1; month <= 12; month++ {
		if s.month&(1<<uint(month)) == 0 {
			continue
		}
		for firstWeekday := 0; firstWeekday < 7; firstWeekday++ {
			if s.dayMask(monthLengths[month], firstWeekday) != 0 ||
				(month == 2 && s.dayMask(29, firstWeekday) != 0) {
				return true
			}
		}
	}
	return false
}

const allMinutes = 1<<60 - 1
