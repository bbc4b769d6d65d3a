package cron

import (
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Describe returns the schedule as an English sentence, with its time
// zone, for example "At 02:30, Monday through Friday (Europe/Amsterdam)".
// It describes the values the schedule resolved to, so an H field shows the
// minute its hash key chose.
func (s *Spec) Describe() string {
	zone := " (" + s.loc.String() + ")"
	if s.every > 0 {
		return "Every " + shortDuration(s.every) + ", counted from when the schedule starts" + zone
	}
	parts := []string{s.describeTime()}
	if days := s.describeDays(); days != "" {
		parts = append(parts, days)
	}
	if s.month != allMonths {
		parts = append(parts, "in "+describeSet(uint64(s.month), 1, 12, monthName))
	}
	return strings.Join(parts, ", ") + zone
}

func (s *Spec) describeTime() string {
	minutes, hours := uint64(s.minute), uint64(s.hour)
	if n := bits.OnesCount64(minutes) * bits.OnesCount64(hours); n <= 4 {
		var times []string
		for h := hours; h != 0; h &= h - 1 {
			for m := minutes; m != 0; m &= m - 1 {
				times = append(times, clock(bits.TrailingZeros64(h), bits.TrailingZeros64(m)))
			}
		}
		return "At " + joinAnd(times)
	}
	minutePart := describeMinutes(minutes)
	if hours == allHours {
		if minutes == allMinutes || strings.HasPrefix(minutePart, "Every") {
			return minutePart
		}
		return minutePart + " past every hour"
	}
	connector := " past "
	if strings.HasPrefix(minutePart, "Every") {
		connector = " during "
	}
	return minutePart + connector + describeHours(hours)
}

// describeMinutes phrases the minute field: "Every minute", "Every 15
// minutes", "At minutes 5 and 35".
func describeMinutes(minutes uint64) string {
	step, first, last, stepped := steps(minutes, 0, 59)
	switch {
	case minutes == allMinutes:
		return "Every minute"
	case stepped && first == 0 && last+step > 59:
		return "Every " + strconv.Itoa(step) + " minutes"
	case stepped:
		return "Every " + strconv.Itoa(step) + " minutes from minute " + strconv.Itoa(first) + " through " + strconv.Itoa(last)
	case bits.OnesCount64(minutes) == 1:
		return "At minute " + describeSet(minutes, 0, 59, strconv.Itoa)
	}
	return "At minutes " + describeSet(minutes, 0, 59, strconv.Itoa)
}

// describeHours phrases an hour field that is not every hour: "every 2
// hours", "hours 9 through 17".
func describeHours(hours uint64) string {
	step, first, last, stepped := steps(hours, 0, 23)
	switch {
	case stepped && first == 0 && last+step > 23:
		return "every " + strconv.Itoa(step) + " hours"
	case stepped:
		return "every " + strconv.Itoa(step) + " hours from " + clock(first, 0) + " through " + clock(last, 0)
	case bits.OnesCount64(hours) == 1:
		return "hour " + describeSet(hours, 0, 23, strconv.Itoa)
	}
	return "hours " + describeSet(hours, 0, 23, strconv.Itoa)
}

// steps reports whether a set of three or more values is an arithmetic
// progression with a step above 1, as "*/15" and "5-55/10" give.
func steps(set uint64, low, high int) (step, first, last int, ok bool) {
	values := setValues(set, low, high)
	if len(values) < 3 {
		return 0, 0, 0, false
	}
	step = values[1] - values[0]
	for i := 2; i < len(values); i++ {
		if values[i]-values[i-1] != step {
			return 0, 0, 0, false
		}
	}
	return step, values[0], values[len(values)-1], step > 1
}

func setValues(set uint64, low, high int) []int {
	var values []int
	for v := set; v != 0; v &= v - 1 {
		if value := bits.TrailingZeros64(v); value >= low && value <= high {
			values = append(values, value)
		}
	}
	return values
}

func (s *Spec) describeDays() string {
	var domTerms, dowTerms []string
	if !s.domStar {
		domTerms = s.dayOfMonthTerms()
	}
	if !s.dowStar {
		dowTerms = s.dayOfWeekTerms()
	}
	terms := append(domTerms, dowTerms...)
	if len(terms) == 0 {
		return ""
	}
	joined := strings.Join(terms, " or on ")
	if strings.Contains(joined, "through") && len(terms) == 1 && len(dowTerms) == 1 && s.dow != 0 {
		return joined // "Monday through Friday"
	}
	return "on " + joined
}

// dayOfMonthTerms phrases the day-of-month field, one term per kind of day.
func (s *Spec) dayOfMonthTerms() []string {
	var terms []string
	if s.dom != 0 {
		terms = append(terms, "day "+describeSet(uint64(s.dom), 1, 31, strconv.Itoa)+" of the month")
	}
	e := s.ext
	if e == nil {
		return terms
	}
	for n := e.lastMinus; n != 0; n &= n - 1 {
		switch k := bits.TrailingZeros32(n); k {
		case 0:
			terms = append(terms, "the last day of the month")
		case 1:
			terms = append(terms, "the day before the last day of the month")
		default:
			terms = append(terms, strconv.Itoa(k)+" days before the last day of the month")
		}
	}
	for n := e.nearestWeekday; n != 0; n &= n - 1 {
		terms = append(terms, "the weekday nearest day "+strconv.Itoa(bits.TrailingZeros32(n))+" of the month")
	}
	if e.lastWeekday {
		terms = append(terms, "the last weekday of the month")
	}
	return terms
}

// dayOfWeekTerms phrases the day-of-week field, one term per kind of day.
func (s *Spec) dayOfWeekTerms() []string {
	var terms []string
	if s.dow != 0 {
		terms = append(terms, describeWeekdays(s.dow))
	}
	e := s.ext
	if e == nil {
		return terms
	}
	for w := 0; w < 7; w++ {
		for n := e.nth[w]; n != 0; n &= n - 1 {
			terms = append(terms, "the "+ordinals[bits.TrailingZeros8(n)]+" "+time.Weekday(w).String()+" of the month")
		}
		if e.lastOfWeekday&(1<<uint(w)) != 0 {
			terms = append(terms, "the last "+time.Weekday(w).String()+" of the month")
		}
	}
	return terms
}

var ordinals = [5]string{"first", "second", "third", "fourth", "fifth"}

func describeWeekdays(dow uint8) string {
	return describeSet(uint64(dow), 0, 6, func(w int) string { return time.Weekday(w).String() })
}

func monthName(m int) string { return time.Month(m).String() }

func clock(hour, minute int) string {
	return string([]byte{byte('0' + hour/10), byte('0' + hour%10), ':', byte('0' + minute/10), byte('0' + minute%10)})
}

// describeSet phrases a set of values between low and high as runs and
// single values: "1 through 5", "9, 12 and 15", "1 through 5 and 10".
func describeSet(set uint64, low, high int, name func(int) string) string {
	values := setValues(set, low, high)
	var phrases []string
	for i := 0; i < len(values); {
		j := i
		for j+1 < len(values) && values[j+1] == values[j]+1 {
			j++
		}
		if j-i >= 2 {
			phrases = append(phrases, name(values[i])+" through "+name(values[j]))
		} else {
			for k := i; k <= j; k++ {
				phrases = append(phrases, name(values[k]))
			}
		}
		i = j + 1
	}
	return joinAnd(phrases)
}

func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// shortDuration formats a duration without zero units: 1h30m, 90s, 2h.
func shortDuration(d time.Duration) string {
	text := d.String()
	if strings.HasSuffix(text, "m0s") {
		text = strings.TrimSuffix(text, "0s")
	}
	if strings.HasSuffix(text, "h0m") {
		text = strings.TrimSuffix(text, "0m")
	}
	return text
}
