package cron

import (
	"math/bits"
	"sync"
)

// Day sets over one Gregorian cycle. Dates and weekdays repeat every 400
// years, so a set of days that a cron schedule selects is fully described by
// the days it selects in one cycle, and two such sets are equal forever if
// they are equal there. Shifting a set by k days is a rotation.

// daySet is a bitmap of the days of a cycle; day 0 is 2000-01-01.
type daySet []uint64

const cycleWords = (daysPer400Years + 63) / 64

// monthInstance is one month of the cycle: 400 years × 12 months.
type monthInstance struct {
	firstDay     int // day index of the 1st
	month        int // 1..12
	length       int
	firstWeekday int
}

var cycleMonths = sync.OnceValue(func() []monthInstance {
	months := make([]monthInstance, 0, 4800)
	cycleStart := daysFromCivil(2000, 1, 1)
	for year := int64(2000); year < 2400; year++ {
		for month := 1; month <= 12; month++ {
			first := daysFromCivil(year, month, 1)
			months = append(months, monthInstance{
				firstDay:     int(first - cycleStart),
				month:        month,
				length:       monthLength(year, month),
				firstWeekday: weekdayOf(first),
			})
		}
	}
	return months
})

func newDaySet() daySet { return make(daySet, cycleWords) }

func (d daySet) has(day int) bool { return d[day>>6]&(1<<uint(day&63)) != 0 }
func (d daySet) add(day int)      { d[day>>6] |= 1 << uint(day&63) }

func (d daySet) count() int {
	n := 0
	for _, w := range d {
		n += bits.OnesCount64(w)
	}
	return n
}

func (d daySet) union(e daySet) daySet {
	out := newDaySet()
	for i := range d {
		out[i] = d[i] | e[i]
	}
	return out
}

// scheduleDays returns the days s fires on.
func scheduleDays(s *Spec) daySet {
	days := newDaySet()
	for _, m := range cycleMonths() {
		if s.month&(1<<uint(m.month)) == 0 {
			continue
		}
		for mask := s.dayMask(m.length, m.firstWeekday); mask != 0; mask &= mask - 1 {
			days.add(m.firstDay + bits.TrailingZeros32(mask) - 1)
		}
	}
	return days
}

// earlier returns the days k days before the days of d.
func (d daySet) earlier(k int) daySet {
	out := newDaySet()
	for day := 0; day < daysPer400Years; day++ {
		if d.has((day + k) % daysPer400Years) {
			out.add(day)
		}
	}
	return out
}

// monthMask returns the days (bits 1..31) of month instance m in d.
func (d daySet) monthMask(m monthInstance) uint32 {
	var mask uint32
	for day := 1; day <= m.length; day++ {
		if d.has(m.firstDay + day - 1) {
			mask |= 1 << uint(day)
		}
	}
	return mask
}

func (d daySet) isAll() bool { return d.count() == daysPer400Years }
