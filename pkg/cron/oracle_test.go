package cron

import "time"

// The oracle answers "does this wall-clock time match?" straight from the
// definitions in doc.go, day by day and minute by minute, sharing no code
// with dayMask, nextCivil or the zone table. Tests compare Next and Prev
// against it.

func daysIn(year int, month time.Month) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func weekdayAt(year int, month time.Month, day int) int {
	return int(time.Date(year, month, day, 12, 0, 0, 0, time.UTC).Weekday())
}

func oracleDayMatches(s *Spec, year int, month time.Month, day int) bool {
	if s.month&(1<<uint(month)) == 0 {
		return false
	}
	domMatch := s.dom&(1<<uint(day)) != 0 || oracleExtendedDayOfMonth(s.ext, year, month, day)
	dowMatch := s.dow&(1<<uint(weekdayAt(year, month, day))) != 0 || oracleExtendedDayOfWeek(s.ext, year, month, day)
	if s.domStar || s.dowStar {
		return domMatch && dowMatch
	}
	return domMatch || dowMatch
}

// oracleExtendedDayOfMonth: L-n, nW and LW.
func oracleExtendedDayOfMonth(e *dayTerms, year int, month time.Month, day int) bool {
	if e == nil {
		return false
	}
	length := daysIn(year, month)
	for n := 0; n <= 30; n++ {
		if e.lastMinus&(1<<uint(n)) != 0 && day == length-n {
			return true
		}
	}
	for n := 1; n <= 31; n++ {
		if e.nearestWeekday&(1<<uint(n)) != 0 && n <= length && day == oracleNearestWeekday(year, month, n) {
			return true
		}
	}
	if !e.lastWeekday {
		return false
	}
	last := length
	for w := weekdayAt(year, month, last); w == 0 || w == 6; w = weekdayAt(year, month, last) {
		last--
	}
	return day == last
}

// oracleExtendedDayOfWeek: d#n and dL.
func oracleExtendedDayOfWeek(e *dayTerms, year int, month time.Month, day int) bool {
	if e == nil {
		return false
	}
	w := weekdayAt(year, month, day)
	nth := (day - 1) / 7
	return e.nth[w]&(1<<uint(nth)) != 0 || e.lastOfWeekday&(1<<uint(w)) != 0 && day+7 > daysIn(year, month)
}

// oracleNearestWeekday finds the weekday nearest to day n by looking at the
// calendar, never leaving the month.
func oracleNearestWeekday(year int, month time.Month, n int) int {
	isWeekday := func(d int) bool {
		w := weekdayAt(year, month, d)
		return d >= 1 && d <= daysIn(year, month) && w != 0 && w != 6
	}
	for distance := 0; distance <= 2; distance++ {
		if isWeekday(n - distance) {
			if distance > 0 && isWeekday(n+distance) {
				return n - distance // a tie cannot happen; prefer earlier
			}
			return n - distance
		}
		if isWeekday(n + distance) {
			return n + distance
		}
	}
	return 0
}

func oracleTimeMatches(s *Spec, hour, minute int) bool {
	return s.hour&(1<<uint(hour)) != 0 && s.minute&(1<<uint(minute)) != 0
}

// oracleNextCivil scans wall-clock minutes after t (as if UTC) day by day,
// up to maxDays days.
func oracleNextCivil(s *Spec, t time.Time, maxDays int) (time.Time, bool) {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	for i := 0; i <= maxDays; i++ {
		if oracleDayMatches(s, day.Year(), day.Month(), day.Day()) {
			for h := 0; h < 24; h++ {
				for m := 0; m < 60; m++ {
					if at := day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute); at.After(t) && oracleTimeMatches(s, h, m) {
						return at, true
					}
				}
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}, false
}

// oracleCivilTimes lists every matching wall-clock minute in [from, to) (as
// if UTC).
func oracleCivilTimes(s *Spec, from, to time.Time) []time.Time {
	var times []time.Time
	for day := from; day.Before(to); day = day.AddDate(0, 0, 1) {
		if !oracleDayMatches(s, day.Year(), day.Month(), day.Day()) {
			continue
		}
		for h := 0; h < 24; h++ {
			for m := 0; m < 60; m++ {
				if oracleTimeMatches(s, h, m) {
					times = append(times, day.Add(time.Duration(h)*time.Hour+time.Duration(m)*time.Minute))
				}
			}
		}
	}
	return times
}
