package cron

import (
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// ShiftError explains why Shift found no exact set of schedules. When the
// dialect asked for was Kubernetes and the extended syntax can do it,
// Extended holds that answer.
type ShiftError struct {
	Reason   string
	Extended []string
}

func (e *ShiftError) Error() string { return "cron: " + e.Reason }

// Shift returns the smallest set of schedules it can find whose union fires
// exactly lead before every activation of s, on the wall clock of s's zone:
// no activation is missed and none is added, and no two of the schedules
// fire at the same time. This is the "primer" schedule that warms capacity
// up ahead of each run. lead is a whole number of minutes from 1m to 7d.
//
// The answer is written in dialect; with Kubernetes it is valid for a
// batch/v1 CronJob. Some shifts cannot be written that way: 10 minutes before
// "0 0 1 * *" is 23:50 on the last day of each month, which needs the
// extended "50 23 L * *". Then Shift returns a *ShiftError that says why
// and carries the extended answer if there is one.
//
// Shift works on wall-clock time. Across a daylight-saving change the real
// time between a primer and its run differs from lead by the change.
func Shift(s *Spec, lead time.Duration, dialect Dialect) ([]string, error) {
	if s.every > 0 {
		return nil, &ShiftError{Reason: "an @every schedule counts from when it starts, so no calendar schedule can run ahead of it; start the warm-up schedule lead earlier instead"}
	}
	if lead < time.Minute || lead > 7*24*time.Hour || lead%time.Minute != 0 {
		return nil, &ShiftError{Reason: "lead " + lead.String() + " must be a whole number of minutes from 1m to 168h (7 days)"}
	}
	products := shiftedProducts(s, int(lead/time.Minute))
	lines, failure := bestCover(products, dialect)
	if failure == nil {
		return lines, nil
	}
	err := &ShiftError{Reason: "no set of standard schedules fires exactly " + shortDuration(lead) + " before every run of " +
		strconvQuote(s.text) + ": the warm-ups fall on days standard day fields cannot pick out (" + failure.String() + ")"}
	if dialect == Extended {
		err.Reason = strings.Replace(err.Reason, "standard schedules", "schedules", 1)
		err.Reason = strings.Replace(err.Reason, "standard day fields", "cron day fields, even extended ones,", 1)
		return nil, err
	}
	if extended, failure := bestCover(products, Extended); failure == nil {
		err.Extended = extended
		err.Reason += "; the extended syntax can express it"
	}
	return nil, err
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// product is a set of wall-clock times: every combination of its days,
// hours and minutes.
type product struct {
	days    daySet
	hours   uint32
	minutes uint64
}

func (p product) size() int {
	return p.days.count() * bits.OnesCount32(p.hours) * bits.OnesCount64(p.minutes)
}

// shiftedProducts subtracts lead minutes from every activation of s. An
// activation (day, hour, minute) moves to minute-leadMinute, borrowing an
// hour when that is negative, and to hour-leadHour-borrow, borrowing a day
// when that is negative; each of the four borrow combinations gives one
// product of days × hours × minutes, and the four are disjoint.
func shiftedProducts(s *Spec, lead int) []product {
	leadDays, leadHours, leadMinutes := lead/minutesPerDay, lead%minutesPerDay/60, lead%60
	days := scheduleDays(s)
	var products []product
	for minuteBorrow := 0; minuteBorrow <= 1; minuteBorrow++ {
		var minutes uint64
		for m := s.minute & allMinutes; m != 0; m &= m - 1 {
			minute := bits.TrailingZeros64(m) - leadMinutes
			if (minute < 0) == (minuteBorrow == 1) {
				minutes |= 1 << uint((minute+60)%60)
			}
		}
		for dayBorrow := 0; dayBorrow <= 1; dayBorrow++ {
			var hours uint32
			for h := s.hour; h != 0; h &= h - 1 {
				hour := bits.TrailingZeros32(h) - leadHours - minuteBorrow
				if (hour < 0) == (dayBorrow == 1) {
					hours |= 1 << uint((hour+24)%24)
				}
			}
			if minutes != 0 && hours != 0 {
				products = append(products, product{days: days.earlier(leadDays + dayBorrow), hours: hours, minutes: minutes})
			}
		}
	}
	return products
}

// bestCover tries every way of merging the products into groups whose
// union is again a product and returns the one needing the fewest
// expressions.
func bestCover(products []product, dialect Dialect) ([]string, *renderFailure) {
	var best []string
	var failure *renderFailure
	rendered := map[int][]dayFields{} // by group bitmask
	for _, partition := range partitions(len(products)) {
		var lines []string
		ok := true
		for _, group := range partition {
			merged, isProduct := mergeProducts(products, group)
			if !isProduct {
				ok = false
				break
			}
			key := 0
			for _, i := range group {
				key |= 1 << uint(i)
			}
			fields, seen := rendered[key]
			if !seen {
				var f *renderFailure
				if fields, f = renderDays(merged.days, dialect); f != nil {
					failure = f
				}
				rendered[key] = fields
			}
			if fields == nil {
				ok = false
				break
			}
			for _, f := range fields {
				lines = append(lines, formatValues(merged.minutes, 0, 59)+" "+formatValues(uint64(merged.hours), 0, 23)+" "+
					f.dom+" "+formatValues(uint64(f.months), 1, 12)+" "+f.dow)
			}
		}
		if ok && (best == nil || len(lines) < len(best)) {
			best = lines
		}
	}
	if best != nil {
		return best, nil
	}
	return nil, failure
}

// mergeProducts returns the union of the products in group and whether it
// is itself a product: the products are disjoint, so it is when their sizes
// add up to the size of the box spanned by their days, hours and minutes.
func mergeProducts(products []product, group []int) (product, bool) {
	merged := product{days: newDaySet()}
	total := 0
	for _, i := range group {
		p := products[i]
		merged.days = merged.days.union(p.days)
		merged.hours |= p.hours
		merged.minutes |= p.minutes
		total += p.size()
	}
	return merged, total == merged.size()
}

// partitions lists every partition of {0..n-1} into groups.
func partitions(n int) [][][]int {
	if n == 0 {
		return [][][]int{{}}
	}
	var out [][][]int
	for _, rest := range partitions(n - 1) {
		for i := range rest {
			grown := cloneGroups(rest)
			grown[i] = append(grown[i], n-1)
			out = append(out, grown)
		}
		out = append(out, append(cloneGroups(rest), []int{n - 1}))
	}
	return out
}

func cloneGroups(groups [][]int) [][]int {
	out := make([][]int, len(groups))
	for i, g := range groups {
		out[i] = append([]int(nil), g...)
	}
	return out
}
