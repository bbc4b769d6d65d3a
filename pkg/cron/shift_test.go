package cron

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Shift is checked by enumeration: over six years (2027-2032, with the leap
// days of 2028 and 2032) every activation minus lead must be an activation
// of exactly one primer schedule, and every primer activation must be one
// of those.
var shiftWindow = [2]time.Time{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2033, 1, 1, 0, 0, 0, 0, time.UTC)}

func TestShift(t *testing.T) {
	tests := []struct {
		spec     string
		lead     time.Duration
		want     []string
		extended []string // when standard syntax cannot express it
	}{
		// The seed's "known unsupported" cases.
		{spec: "0 14-16 * * *", lead: 10 * time.Minute, want: []string{"50 13-15 * * *"}},
		{spec: "0-15 0 * * *", lead: 10 * time.Minute, want: []string{"0-5 0 * * *", "50-59 23 * * *"}},
		{spec: "0 0 * * 5", lead: 10 * time.Minute, want: []string{"50 23 * * 4"}},
		// What the old operator got wrong: Monday 00:00 is warmed on Sunday
		// 23:50, and nothing runs on Friday 23:50.
		{spec: "*/30 * * * 1-5", lead: 10 * time.Minute, want: []string{"20 * * * 1-5", "50 0-22 * * 1-5", "50 23 * * 0-4"}},
		{spec: "0 0 1 * *", lead: 10 * time.Minute, extended: []string{"50 23 L * *"}},
		{spec: "0 0 1,15 * *", lead: 30 * time.Minute, extended: []string{"30 23 14,L * *"}},
		{spec: "0 * * * *", lead: 10 * time.Minute, want: []string{"50 * * * *"}},
		{spec: "0 0 1 1 *", lead: 10 * time.Minute, want: []string{"50 23 31 12 *"}},
		{spec: "*/5 * * * *", lead: 3 * time.Minute, want: []string{"2-57/5 * * * *"}},
		{spec: "0 9 * * 1-5", lead: 7 * 24 * time.Hour, want: []string{"0 9 * * 1-5"}},
		{spec: "0 9 * * 1-5", lead: 2*time.Hour + 30*time.Minute, want: []string{"30 6 * * 1-5"}},
		{spec: "15 0 * * 1", lead: 45 * time.Minute, want: []string{"30 23 * * 0"}},
		{spec: "0 6 1 * *", lead: 3 * 24 * time.Hour, extended: []string{"0 6 L-2 * *"}},
		{spec: "@daily", lead: time.Minute, want: []string{"59 23 * * *"}},
		{spec: "0 0 31 * *", lead: 24 * time.Hour, want: []string{"0 0 30 1,3,5,7-8,10,12 *"}},
	}
	for _, tc := range tests {
		t.Run(tc.spec+" "+tc.lead.String(), func(t *testing.T) {
			s, err := Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Shift(s, tc.lead, Kubernetes)
			if tc.extended != nil {
				var shiftErr *ShiftError
				if !errors.As(err, &shiftErr) || !slices.Equal(shiftErr.Extended, tc.extended) {
					t.Fatalf("Shift = %v, %v; want a ShiftError offering %v", got, err, tc.extended)
				}
				checkShiftExact(t, s, tc.lead, shiftErr.Extended, Extended)
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("Shift = %q, %v; want %q", got, err, tc.want)
			}
			checkShiftExact(t, s, tc.lead, got, Kubernetes)
		})
	}
}

func TestShiftImpossible(t *testing.T) {
	tests := []struct {
		spec    string
		lead    time.Duration
		message string
	}{
		// Feb 29 minus 36h is Feb 27 only in leap years.
		{"0 0 29 * *", 36 * time.Hour, "February 27 is one in"},
		// Fridays in March minus a day include Feb 28 only when it is a
		// Thursday: no day fields say "Thursday AND last day of February".
		{"0 0 * 3 5", 24 * time.Hour, "February"},
		{"@every 1h", time.Hour, "@every"},
		{"0 0 * * *", 90 * time.Second, "whole number of minutes"},
		{"0 0 * * *", 8 * 24 * time.Hour, "from 1m to 168h"},
	}
	for _, tc := range tests {
		s, err := Parse(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, dialect := range []Dialect{Kubernetes, Extended} {
			_, err := Shift(s, tc.lead, dialect)
			var shiftErr *ShiftError
			if !errors.As(err, &shiftErr) || !strings.Contains(err.Error(), tc.message) || shiftErr.Extended != nil {
				t.Errorf("Shift(%q, %v, %v) = %v; want an error mentioning %q and no extended answer", tc.spec, tc.lead, dialect, err, tc.message)
			}
		}
	}
}

// TestShiftRandom shifts random schedules by random leads from 1 minute to
// 7 days and checks every answer by enumeration.
func TestShiftRandom(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 40
	}
	rng := rand.New(rand.NewPCG(5, 9))
	leads := []int{1, 5, 10, 15, 30, 59, 60, 61, 90, 119, 720, 1439, 1440, 1441, 2880, 4320, 10079, 10080}
	answered := map[Dialect]int{}
	for i := 0; i < n; i++ {
		spec := strings.Join([]string{
			[]string{"0", "30", "*/20", "5,35", "0-10", "50-59"}[rng.IntN(6)],
			[]string{"*", "0", "23", "9-17", "*/6", "0,12"}[rng.IntN(6)],
			[]string{"*", "*", "1", "15", "31", "1,15", "29", "28-31", "*/10"}[rng.IntN(9)],
			[]string{"*", "*", "*", "1", "2", "3", "12", "1-6", "*/3"}[rng.IntN(9)],
			[]string{"*", "*", "1-5", "0", "6", "5", "0,6", "3"}[rng.IntN(8)],
		}, " ")
		s, err := Parse(spec)
		if err != nil {
			continue // an impossible date such as 31 in February
		}
		lead := time.Duration(leads[rng.IntN(len(leads))]+rng.IntN(2)*rng.IntN(1000)) * time.Minute
		lead = min(lead, 7*24*time.Hour)
		lines, err := Shift(s, lead, Kubernetes)
		if err == nil {
			checkShiftExact(t, s, lead, lines, Kubernetes)
			answered[Kubernetes]++
			continue
		}
		var shiftErr *ShiftError
		if !errors.As(err, &shiftErr) {
			t.Fatalf("Shift(%q, %v): %v", spec, lead, err)
		}
		if shiftErr.Extended != nil {
			checkShiftExact(t, s, lead, shiftErr.Extended, Extended)
			answered[Extended]++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d random shifts: %d in standard syntax, %d extended only", n, answered[Kubernetes], answered[Extended])
}

// checkShiftExact enumerates both sides over shiftWindow.
func checkShiftExact(t *testing.T, s *Spec, lead time.Duration, lines []string, dialect Dialect) {
	t.Helper()
	from, to := shiftWindow[0], shiftWindow[1]
	var want []int64
	for at := s.Next(from.Add(lead - time.Second)); at.Before(to.Add(lead)); at = s.Next(at) {
		want = append(want, at.Add(-lead).Unix())
	}
	var got []int64
	for _, line := range lines {
		primer, err := Parser{Dialect: dialect}.Parse(line)
		if err != nil {
			t.Fatalf("%q lead %v: printed %q, which does not parse: %v", s.text, lead, line, err)
		}
		for at := primer.Next(from.Add(-time.Second)); at.Before(to); at = primer.Next(at) {
			got = append(got, at.Unix())
		}
	}
	slices.Sort(got)
	if i := firstDifference(got, want); i >= 0 || len(got) != len(want) {
		t.Fatalf("%q lead %v -> %q: %d primer runs for %d runs; first difference at %s", s.text, lead, lines, len(got), len(want), describeDifference(got, want, i))
	}
	if len(want) == 0 {
		t.Fatalf("%q has no runs in the window; the test proves nothing", s.text)
	}
}

func firstDifference(a, b []int64) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

func describeDifference(got, want []int64, i int) string {
	if i < 0 {
		i = min(len(got), len(want))
	}
	show := func(list []int64) string {
		if i < len(list) {
			return time.Unix(list[i], 0).UTC().Format("Mon 2006-01-02 15:04")
		}
		return "(none)"
	}
	return "index " + strconv.Itoa(i) + ": primer " + show(got) + ", wanted " + show(want)
}
