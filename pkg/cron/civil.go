package cron

// Civil-calendar arithmetic on day numbers (days since 1970-01-01) in the
// proleptic Gregorian calendar, after Howard Hinnant's "chrono-Compatible
// Low-Level Date Algorithms". Working on integers instead of time.Time keeps
// Next and Prev free of time.Date calls and allocations.

const (
	minutesPerDay = 24 * 60
	secondsPerDay = minutesPerDay * 60
	// daysPer400Years is the length of the Gregorian cycle. It is a multiple
	// of 7, so dates and weekdays repeat exactly every 400 years; that is why
	// whether a schedule can fire at all can be decided without a horizon.
	daysPer400Years = 146097
)

// floorDiv divides rounding toward negative infinity, so that instants before
// 1970 map to the right day and minute.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// ceilDiv divides rounding toward positive infinity.
func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// daysFromCivil returns the day number of year-month-day.
func daysFromCivil(year int64, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := floorDiv(year, 400)
	yearOfEra := year - era*400
	monthFromMarch := int64((month + 9) % 12)
	dayOfYear := (153*monthFromMarch+2)/5 + int64(day) - 1
	dayOfEra := yearOfEra*365 + yearOfEra/4 - yearOfEra/100 + dayOfYear
	return era*daysPer400Years + dayOfEra - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(days int64) (year int64, month, day int) {
	days += 719468
	era := floorDiv(days, daysPer400Years)
	dayOfEra := days - era*daysPer400Years
	yearOfEra := (dayOfEra - dayOfEra/1460 + dayOfEra/36524 - dayOfEra/146096) / 365
	dayOfYear := dayOfEra - (365*yearOfEra + yearOfEra/4 - yearOfEra/100)
	monthFromMarch := (5*dayOfYear + 2) / 153
	day = int(dayOfYear - (153*monthFromMarch+2)/5 + 1)
	if monthFromMarch < 10 {
		month = int(monthFromMarch + 3)
	} else {
		month = int(monthFromMarch - 9)
	}
	year = yearOfEra + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// weekdayOf returns the weekday of a day number, 0 = Sunday (1970-01-01 was a
// Thursday).
func weekdayOf(days int64) int {
	w := (days + 4) % 7
	if w < 0 {
		w += 7
	}
	return int(w)
}

func isLeap(year int64) bool {
	return year%4 == 0 && (year%100 != 0 || year%400 == 0)
}

var monthLengths = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func monthLength(year int64, month int) int {
	if month == 2 && isLeap(year) {
		return 29
	}
	return monthLengths[month]
}
