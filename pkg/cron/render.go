package cron

import (
	"strconv"
	"strings"
	"time"
)

// Rendering a day set as cron day fields. A cron expression selects, in
// each of its months, the days matched by any of its day-of-month terms or
// day-of-week terms (POSIX OR; with one field *, just the other). So a day
// set renders as one expression for a group of months when the terms that
// select only days of the set (in every year) together select all of them.

type termKind int

const (
	weekdayTerm        termKind = iota // w
	dayTerm                            // d
	lastMinusTerm                      // L-n (L is L-0)
	nearestWeekdayTerm                 // dW
	lastWeekdayTerm                    // LW
	nthWeekdayTerm                     // w#n
	lastOfWeekdayTerm                  // wL
)

type dayTermSpec struct {
	kind termKind
	n, w int
}

// mask returns the days the term selects in a month of the given shape.
func (t dayTermSpec) mask(length, firstWeekday int) uint32 {
	var s Spec
	switch t.kind {
	case weekdayTerm:
		return uint32(repeatWeekdays(1<<uint(t.w))>>uint(firstWeekday)) << 1 & (uint32(1)<<uint(length+1) - 2)
	case dayTerm:
		if t.n > length {
			return 0
		}
		return 1 << uint(t.n)
	case lastMinusTerm:
		s.ext = &dayTerms{lastMinus: 1 << uint(t.n)}
	case nearestWeekdayTerm:
		s.ext = &dayTerms{nearestWeekday: 1 << uint(t.n)}
	case lastWeekdayTerm:
		s.ext = &dayTerms{lastWeekday: true}
	case nthWeekdayTerm:
		s.ext = &dayTerms{}
		s.ext.nth[t.w] = 1 << uint(t.n-1)
	case lastOfWeekdayTerm:
		s.ext = &dayTerms{lastOfWeekday: 1 << uint(t.w)}
	}
	if t.isDayOfMonth() {
		return s.ext.domDays(length, firstWeekday) & (uint32(1)<<uint(length+1) - 2)
	}
	return s.ext.dowDays(length, firstWeekday)
}

func (t dayTermSpec) isDayOfMonth() bool {
	return t.kind == dayTerm || t.kind == lastMinusTerm || t.kind == nearestWeekdayTerm || t.kind == lastWeekdayTerm
}

func (t dayTermSpec) String() string {
	switch t.kind {
	case weekdayTerm:
		return strconv.Itoa(t.w)
	case dayTerm:
		return strconv.Itoa(t.n)
	case lastMinusTerm:
		if t.n == 0 {
			return "L"
		}
		return "L-" + strconv.Itoa(t.n)
	case nearestWeekdayTerm:
		return strconv.Itoa(t.n) + "W"
	case lastWeekdayTerm:
		return "LW"
	case nthWeekdayTerm:
		return strconv.Itoa(t.w) + "#" + strconv.Itoa(t.n)
	}
	return strconv.Itoa(t.w) + "L"
}

// termFamily lists the terms a dialect can write, most preferred first
// (rendering drops redundant terms from the end).
func termFamily(dialect Dialect) []dayTermSpec {
	var family []dayTermSpec
	for w := 0; w < 7; w++ {
		family = append(family, dayTermSpec{kind: weekdayTerm, w: w})
	}
	for d := 1; d <= 31; d++ {
		family = append(family, dayTermSpec{kind: dayTerm, n: d})
	}
	if dialect != Extended {
		return family
	}
	for n := 0; n <= 30; n++ {
		family = append(family, dayTermSpec{kind: lastMinusTerm, n: n})
	}
	family = append(family, dayTermSpec{kind: lastWeekdayTerm})
	for w := 0; w < 7; w++ {
		family = append(family, dayTermSpec{kind: lastOfWeekdayTerm, w: w})
		for n := 1; n <= 5; n++ {
			family = append(family, dayTermSpec{kind: nthWeekdayTerm, w: w, n: n})
		}
	}
	for d := 1; d <= 31; d++ {
		family = append(family, dayTermSpec{kind: nearestWeekdayTerm, n: d})
	}
	return family
}

// monthShape is one kind of month in a day set: the month's length and first
// weekday, and which of its days the set holds. A 400-year cycle has only a
// few dozen distinct shapes per month, so rendering checks those.
type monthShape struct {
	length, firstWeekday int
	days                 uint32
	example              int // a year with this shape
}

// dayFields is the month, day-of-month and day-of-week fields of one
// expression.
type dayFields struct {
	months   uint16
	dom, dow string
}

// renderFailure says which month defeated rendering, with two years that
// differ in a way the fields cannot follow.
type renderFailure struct {
	month     int
	day       int
	inYear    int
	notInYear int
}

func (f *renderFailure) String() string {
	return time.Month(f.month).String() + " " + strconv.Itoa(f.day) + " is one in " + strconv.Itoa(f.inYear) +
		" but not in " + strconv.Itoa(f.notInYear)
}

// renderDays writes a day set as the fewest expressions' day fields it
// finds: months with the same pattern share an expression.
func renderDays(d daySet, dialect Dialect) ([]dayFields, *renderFailure) {
	if d.isAll() {
		return []dayFields{{months: allMonths, dom: "*", dow: "*"}}, nil
	}
	shapes := monthShapes(d)
	family := termFamily(dialect)
	var groups [][]int // months
	for month := 1; month <= 12; month++ {
		if len(shapes[month]) == 0 {
			continue
		}
		if _, ok := groupTerms(shapes, family, []int{month}); !ok {
			return nil, explainFailure(shapes[month], month)
		}
		placed := false
		for i, group := range groups {
			if _, ok := groupTerms(shapes, family, append(append([]int(nil), group...), month)); ok {
				groups[i] = append(group, month)
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, []int{month})
		}
	}
	fields := make([]dayFields, 0, len(groups))
	for _, group := range groups {
		terms, _ := groupTerms(shapes, family, group)
		f := dayFields{dom: "*", dow: "*"}
		for _, month := range group {
			f.months |= 1 << uint(month)
		}
		if !allDaysOf(shapes, group) {
			f.dom, f.dow = formatTerms(terms)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

func monthShapes(d daySet) [13][]monthShape {
	months := cycleMonths()
	masks := make([]uint32, len(months))
	var present [13]bool
	for i, m := range months {
		masks[i] = d.monthMask(m)
		present[m.month] = present[m.month] || masks[i] != 0
	}
	var shapes [13][]monthShape
	for i, m := range months {
		if !present[m.month] {
			continue
		}
		shape := monthShape{length: m.length, firstWeekday: m.firstWeekday, days: masks[i], example: 2000 + i/12}
		known := false
		for _, s := range shapes[m.month] {
			known = known || (s.length == shape.length && s.firstWeekday == shape.firstWeekday && s.days == shape.days)
		}
		if !known {
			shapes[m.month] = append(shapes[m.month], shape)
		}
	}
	return shapes
}

// groupTerms returns the terms that together select exactly the set's days
// in every month of group, with redundant ones dropped; ok is false if the
// terms that stay within the set do not reach all of its days.
func groupTerms(shapes [13][]monthShape, family []dayTermSpec, group []int) ([]dayTermSpec, bool) {
	var terms []dayTermSpec
	for _, t := range family {
		within := true
		for _, month := range group {
			for _, s := range shapes[month] {
				within = within && t.mask(s.length, s.firstWeekday)&^s.days == 0
			}
		}
		if within {
			terms = append(terms, t)
		}
	}
	if !covers(shapes, group, terms) {
		return nil, false
	}
	for i := len(terms) - 1; i >= 0; i-- {
		without := append(append([]dayTermSpec(nil), terms[:i]...), terms[i+1:]...)
		if covers(shapes, group, without) {
			terms = without
		}
	}
	return terms, true
}

func covers(shapes [13][]monthShape, group []int, terms []dayTermSpec) bool {
	for _, month := range group {
		for _, s := range shapes[month] {
			var selected uint32
			for _, t := range terms {
				selected |= t.mask(s.length, s.firstWeekday)
			}
			if selected != s.days {
				return false
			}
		}
	}
	return true
}

func allDaysOf(shapes [13][]monthShape, group []int) bool {
	for _, month := range group {
		for _, s := range shapes[month] {
			if s.days != uint32(1)<<uint(s.length+1)-2 {
				return false
			}
		}
	}
	return true
}

// explainFailure finds a day of the month that the set holds in one year
// and not in another year in which the month looks the same to the terms
// (or, failing that, any such pair).
func explainFailure(shapes []monthShape, month int) *renderFailure {
	for day := 1; day <= 31; day++ {
		var in, out *monthShape
		for i := range shapes {
			if day > shapes[i].length {
				continue
			}
			if shapes[i].days&(1<<uint(day)) != 0 {
				in = &shapes[i]
			} else {
				out = &shapes[i]
			}
		}
		if in != nil && out != nil {
			return &renderFailure{month: month, day: day, inYear: in.example, notInYear: out.example}
		}
	}
	return &renderFailure{month: month, day: 1, inYear: shapes[0].example, notInYear: shapes[len(shapes)-1].example}
}

// formatTerms writes the day-of-month and day-of-week fields, * when a
// field has no terms, compressing runs of numbers into ranges.
func formatTerms(terms []dayTermSpec) (dom, dow string) {
	var days, weekdays uint64
	var domExtra, dowExtra []string
	for _, t := range terms {
		switch {
		case t.kind == dayTerm:
			days |= 1 << uint(t.n)
		case t.kind == weekdayTerm:
			weekdays |= 1 << uint(t.w)
		case t.isDayOfMonth():
			domExtra = append(domExtra, t.String())
		default:
			dowExtra = append(dowExtra, t.String())
		}
	}
	dom = joinField(formatValues(days, 1, 31), domExtra)
	dow = joinField(formatValues(weekdays, 0, 6), dowExtra)
	return dom, dow
}

func joinField(values string, extra []string) string {
	parts := extra
	if values != "" {
		parts = append([]string{values}, extra...)
	}
	if len(parts) == 0 {
		return "*"
	}
	return strings.Join(parts, ",")
}

// formatValues writes a set of values as cron list syntax: "*" for all of
// low..high, "*/15" or "5-55/10" for steps, else runs such as "1-5,10".
func formatValues(set uint64, low, high int) string {
	values := setValues(set, low, high)
	if len(values) == 0 {
		return ""
	}
	if len(values) == high-low+1 {
		return "*"
	}
	if step, first, last, ok := steps(set, low, high); ok && len(values) >= 3 {
		if first == low && last+step > high {
			return "*/" + strconv.Itoa(step)
		}
		return strconv.Itoa(first) + "-" + strconv.Itoa(last) + "/" + strconv.Itoa(step)
	}
	var parts []string
	for i := 0; i < len(values); {
		j := i
		for j+1 < len(values) && values[j+1] == values[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.Itoa(values[i])+"-"+strconv.Itoa(values[j]))
		} else {
			parts = append(parts, strconv.Itoa(values[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
