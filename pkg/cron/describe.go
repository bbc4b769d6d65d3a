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
	var minutePart string
	step, first, last, stepped := steps(minutes, 0, 59)
	switch {
	case minutes == allMinutes:
		minutePart = "Every minute"
	case stepped && first == 0 && last+step > 59:
		minutePart = "Every " + strconv.Itoa(step) + " minutes"
	case stepped:
		minutePart = "Every " + strconv.Itoa(step) + " minutes from minute " + strconv.Itoa(first) + " through " + strconv.Itoa(last)
	case bits.OnesCount64(minutes) == 1:
		minutePart = "At minute " + describeSet(minutes, 0, 59, strconv.Itoa)
	default:
		minutePart = "At minutes " + describeSet(minutes, 0, 59, strconv.Itoa)
	}
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
	step, first, last, stepped = steps(hours, 0, 23)
	switch {
	case stepped && first == 0 && last+step > 23:
		return minutePart + connector + "every " + strconv.Itoa(step) + " hours"
	case stepped:
		return minutePart + connector + "every " + strconv.Itoa(step) + " hours from " + clock(first, 0) + " through " + clock(last, 0)
	case bits.OnesCount64(hours) == 1:
		return minutePart + connector + "hour " + describeSet(hours, 0, 23, strconv.Itoa)
	}
	return minutePart + connector + "hours " + describeSet(hours, 0, 23, strconv.Itoa)
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
		if s.dom != 0 {
			domTerms = append(domTerms, "day "+describeSet(uint64(s.dom), 1, 31, strconv.Itoa)+" of the month")
		}
		if e := s.ext; e != nil {
			for n := e.lastMinus; n != 0; n &= n - 1 {
				switch k := bits.TrailingZeros32(n); k {
				case 0:
					domTerms = append(domTerms, "the last day of the month")
				case 1:
					domTerms = append(domTerms, "the day before the last day of the month")
				default:
					domTerms = append(domTerms, strconv.Itoa(k)+" days before the last day of the month")
				}
			}
			for n := e.nearestWeekday; n != 0; n &= n - 1 {
				domTerms = append(domTerms, "the weekday nearest day "+strconv.Itoa(bits.TrailingZeros32(n))+" of the month")
			}
			if e.lastWeekday {
				domTerms = append(domTerms, "the last weekday of the month")
			}
		}
	}
	if !s.dowStar {
		if s.dow != 0 {
			dowTerms = append(dowTerms, describeWeekdays(s.dow))
		}
		if e := s.ext; e != nil {
			for w := 0; w < 7; w++ {
				for n := e.nth[w]; n != 0; n &= n - 1 {
					dowTerms = append(dowTerms, "the "+ordinals[bits.TrailingZeros8(n)]+" "+time.Weekday(w).String()+" of the month")
				}
				if e.lastOfWeekday&(1<<uint(w)) != 0 {
					dowTerms = append(dowTerms, "the last "+time.Weekday(w).String()+" of the month")
				}
			}
		}
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
