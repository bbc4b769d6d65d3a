package cron

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// at parses an RFC 3339 time for test tables.
func at(t *testing.T, value string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, value)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// nextTimes returns n activations after from, formatted RFC 3339.
func nextTimes(s *Spec, from time.Time, n int) []string {
	var out []string
	for range n {
		from = s.Next(from)
		out = append(out, from.Format(time.RFC3339))
	}
	return out
}

func TestParseAccepts(t *testing.T) {
	tests := map[string]struct {
		spec    string
		parser  Parser
		from    string
		want    []string
		comment string
	}{
		"question mark is a star in any field": {spec: "? ? ? ? ?", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"}},
		"step larger than the range is minute 0": {spec: "*/60 * * * *", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z"}},
		"anything after *- is ignored, as robfig does": {spec: "*-5 0 1 1 *", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"}},
		"plus sign and leading zeros": {spec: "+5 05 * * *", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-01T05:05:00Z", "2026-01-02T05:05:00Z"}},
		"empty list terms are dropped": {spec: ",15,,45 * * * *", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-01T00:15:00Z", "2026-01-01T00:45:00Z"}},
		"a/n means a to the maximum": {spec: "50/5 * * * *", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-01T00:50:00Z", "2026-01-01T00:55:00Z", "2026-01-01T01:50:00Z"}},
		"names in any case": {spec: "0 12 * JaN,dec sUn", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-04T12:00:00Z", "2026-01-11T12:00:00Z"}},
		"both day fields restricted: either matches (POSIX OR)": {spec: "0 0 13 * 5", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z", "2026-01-13T00:00:00Z", "2026-01-16T00:00:00Z"}},
		"*/2 in day of month clears the star bit (robfig OR, not Vixie AND)": {spec: "0 0 */2 * 1", from: "2025-12-31T12:00:00Z",
			want: []string{"2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z"}},
		"*/1 keeps the star bit: AND": {spec: "0 0 */1 * 1", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z"}},
		"Feb 29 or any Monday in February (OR)": {spec: "0 0 29 2 1", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-02-02T00:00:00Z", "2026-02-09T00:00:00Z"}},
		"no 5-year horizon: Feb 29 after 2096 is 2104": {spec: "0 0 29 2 *", from: "2096-03-01T00:00:00Z",
			want: []string{"2104-02-29T00:00:00Z", "2108-02-29T00:00:00Z"}},
		"TZ prefix": {spec: "TZ=America/New_York 0 9 * * *", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-01T09:00:00-05:00", "2026-01-02T09:00:00-05:00"}},
		"CRON_TZ prefix with extra spaces": {spec: "CRON_TZ=Asia/Tokyo   30 8 * * *  ", from: "2025-12-31T12:00:00Z",
			want: []string{"2026-01-01T08:30:00+09:00", "2026-01-02T08:30:00+09:00"}},
		"empty zone name is UTC": {spec: "TZ= 0 0 * * *", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-02T00:00:00Z"}},
		"parser location": {spec: "0 9 * * 1-5", parser: Parser{Location: mustLoad(t, "Europe/Amsterdam")}, from: "2026-01-02T12:00:00Z",
			want: []string{"2026-01-05T09:00:00+01:00", "2026-01-06T09:00:00+01:00"}},
		"@yearly":           {spec: "@yearly", from: "2026-06-01T00:00:00Z", want: []string{"2027-01-01T00:00:00Z"}},
		"@monthly":          {spec: "@monthly", from: "2026-06-01T00:00:00Z", want: []string{"2026-07-01T00:00:00Z"}},
		"@weekly is Sunday": {spec: "@weekly", from: "2026-01-01T00:00:00Z", want: []string{"2026-01-04T00:00:00Z"}},
		"@midnight":         {spec: "@midnight", from: "2026-01-01T00:00:00Z", want: []string{"2026-01-02T00:00:00Z"}},
		"@hourly":           {spec: "@hourly", from: "2026-01-01T00:30:00Z", want: []string{"2026-01-01T01:00:00Z"}},
		"@every keeps the start's phase, drops its fraction of a second": {spec: "@every 1h30m", from: "2026-01-01T00:00:10.5Z",
			want: []string{"2026-01-01T01:30:10Z", "2026-01-01T03:00:10Z"}},
		"@every below a second is a second": {spec: "@every 500ms", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-01T00:00:01Z"}},
		"extended: 7 is Sunday": {spec: "0 0 * * 7", parser: Parser{Dialect: Extended}, from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-04T00:00:00Z"}},
		"extended: 5-7 is Friday to Sunday": {spec: "0 0 * * 5-7", parser: Parser{Dialect: Extended}, from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-09T00:00:00Z"}},
		"extended: L is the last day": {spec: "50 23 L * *", parser: Parser{Dialect: Extended}, from: "2028-01-31T23:50:00Z",
			want: []string{"2028-02-29T23:50:00Z", "2028-03-31T23:50:00Z", "2028-04-30T23:50:00Z"}},
		"extended: L-2": {spec: "0 0 L-2 2 *", parser: Parser{Dialect: Extended}, from: "2027-01-01T00:00:00Z",
			want: []string{"2027-02-26T00:00:00Z", "2028-02-27T00:00:00Z"}},
		"extended: LW is the last weekday": {spec: "0 0 LW * *", parser: Parser{Dialect: Extended}, from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z", "2026-05-29T00:00:00Z"}},
		"extended: 15W is the weekday nearest the 15th": {spec: "0 0 15W * *", parser: Parser{Dialect: Extended}, from: "2026-02-01T00:00:00Z",
			want: []string{"2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z", "2026-04-15T00:00:00Z"}},
		"extended: 1W on a Saturday is Monday the 3rd": {spec: "0 0 1W 8 *", parser: Parser{Dialect: Extended}, from: "2026-01-01T00:00:00Z",
			want: []string{"2026-08-03T00:00:00Z"}},
		"extended: FRI#3 is the third Friday": {spec: "0 0 * * FRI#3", parser: Parser{Dialect: Extended}, from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-16T00:00:00Z", "2026-02-20T00:00:00Z"}},
		"extended: 5L is the last Friday": {spec: "0 0 * * 5L", parser: Parser{Dialect: Extended}, from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z"}},
		"extended: Feb 29 that is a Monday is the fifth Monday of February": {spec: "0 0 * 2 1#5", parser: Parser{Dialect: Extended}, from: "2026-01-01T00:00:00Z",
			want: []string{"2044-02-29T00:00:00Z", "2072-02-29T00:00:00Z"}},
		"extended: L and a number in one list": {spec: "0 0 1,L * *", parser: Parser{Dialect: Extended}, from: "2026-02-01T00:00:00Z",
			want: []string{"2026-02-28T00:00:00Z", "2026-03-01T00:00:00Z", "2026-03-31T00:00:00Z"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := tc.parser.Parse(tc.spec)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.spec, err)
			}
			if got := nextTimes(s, at(t, tc.from), len(tc.want)); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("Parse(%q) from %s:\n got %v\nwant %v", tc.spec, tc.from, got, tc.want)
			}
		})
	}
}

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestParseRejects(t *testing.T) {
	tests := map[string]struct {
		kind    ErrorKind
		spec    string
		parser  Parser
		field   string
		message string
	}{
		"empty":                     {kind: ErrSyntax, spec: "", message: `cron: "": empty schedule`},
		"too few fields":            {kind: ErrSyntax, spec: "0 0 * *", message: `cron: "0 0 * *": expected 5 fields (minute hour day-of-month month day-of-week), found 4`},
		"six fields":                {kind: ErrSyntax, spec: "0 0 0 * * *", message: "found 6"},
		"minute above 59":           {kind: ErrRange, spec: "61 * * * *", field: "minute", message: `cron: minute "61": 61 is above the maximum 59`},
		"hour range backwards":      {kind: ErrRange, spec: "0 5-2 * * *", field: "hour", message: `cron: hour "5-2": range start 5 is after its end 2`},
		"day of month 0":            {kind: ErrRange, spec: "0 0 0 * *", field: "day-of-month", message: "0 is below the minimum 1"},
		"7 for Sunday (Kubernetes)": {kind: ErrRange, spec: "0 0 * * 7", field: "day-of-week", message: "7 is above the maximum 6 (0 is Sunday; 7 needs the extended syntax)"},
		"bad month name":            {kind: ErrSyntax, spec: "0 0 * january *", field: "month", message: `cron: month "january": is not a number or a name such as jan`},
		"step 0":                    {kind: ErrRange, spec: "*/0 * * * *", field: "minute", message: "step must be at least 1"},
		"negative step":             {kind: ErrSyntax, spec: "*/-5 * * * *", field: "minute", message: "is not a whole number"},
		"too many slashes":          {kind: ErrSyntax, spec: "1/2/3 * * * *", field: "minute", message: "too many slashes"},
		"too many hyphens":          {kind: ErrSyntax, spec: "1-2-3 * * * *", field: "minute", message: "too many hyphens"},
		"dangling hyphen":           {kind: ErrSyntax, spec: "5- * * * *", field: "minute", message: `minute "": is not a number`},
		"only commas":               {kind: ErrRange, spec: ", * * * *", field: "minute", message: "selects no minute at all"},
		"L needs extended":          {kind: ErrExtendedSyntax, spec: "0 0 L * *", field: "day-of-month", message: "H, L, W and # are extended syntax, which Kubernetes CronJob rejects"},
		"H needs extended":          {kind: ErrExtendedSyntax, spec: "H * * * *", field: "minute", message: "extended syntax"},
		"TZ= with no schedule":      {kind: ErrSyntax, spec: "TZ=UTC", field: "time zone", message: "must be followed by a space and the schedule"},
		"unknown zone":              {kind: ErrUnknownTimeZone, spec: "TZ=Mars/Olympus 0 0 * * *", field: "time zone", message: `cron: time zone "Mars/Olympus": unknown time zone`},
		"TZ=Local":                  {kind: ErrUnknownTimeZone, spec: "TZ=Local 0 3 * * *", field: "time zone", message: `cron: time zone "Local": "Local" is the zone of the machine evaluating the schedule`},
		"CRON_TZ=local":             {kind: ErrUnknownTimeZone, spec: "CRON_TZ=local 0 3 * * *", field: "time zone", message: "not a time zone"},
		"never fires: Feb 30":       {kind: ErrNeverFires, spec: "0 0 30 2 *", message: `cron: "0 0 30 2 *": never fires: no allowed month has an allowed day`},
		"never fires: Apr 31":       {kind: ErrNeverFires, spec: "59 23 31 4,6,9,11 *", message: "never fires"},
		"descriptor case":           {kind: ErrSyntax, spec: "@Daily", field: "descriptor", message: "unknown descriptor"},
		"descriptor trailing space": {kind: ErrSyntax, spec: "@daily ", field: "descriptor", message: "unknown descriptor"},
		"@reboot":                   {kind: ErrSyntax, spec: "@reboot", field: "descriptor", message: "unknown descriptor"},
		"@every 0":                  {kind: ErrRange, spec: "@every 0s", field: "descriptor", message: "@every needs a positive interval"},
		"@every negative":           {kind: ErrRange, spec: "@every -1h", field: "descriptor", message: "positive interval"},
		"@every 1d":                 {kind: ErrSyntax, spec: "@every 1d", field: "descriptor", message: "Go duration"},
		"H without a key":           {kind: ErrMissingHashKey, spec: "H * * * *", parser: Parser{Dialect: Extended}, field: "minute", message: "H needs a hash key"},
		"H step beyond range":       {kind: ErrRange, spec: "H/90 * * * *", parser: Parser{Dialect: Extended, HashKey: "k"}, field: "minute", message: "step 90 is larger than the range 0-59"},
		"L-31":                      {kind: ErrRange, spec: "0 0 L-31 * *", parser: Parser{Dialect: Extended}, field: "day-of-month", message: "L-n needs n from 0 to 30"},
		"#6":                        {kind: ErrRange, spec: "0 0 * * 1#6", parser: Parser{Dialect: Extended}, field: "day-of-week", message: "d#n needs n from 1 to 5"},
		"32W":                       {kind: ErrRange, spec: "0 0 32W * *", parser: Parser{Dialect: Extended}, field: "day-of-month", message: "nW needs a day n from 1 to 31"},
		"extended never fires":      {kind: ErrNeverFires, spec: "0 0 30W 2 *", parser: Parser{Dialect: Extended}, message: "never fires"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := tc.parser.Parse(tc.spec)
			var parseErr *ParseError
			if !errors.As(err, &parseErr) {
				t.Fatalf("Parse(%q) = %v, want a *ParseError", tc.spec, err)
			}
			if parseErr.Kind != tc.kind {
				t.Errorf("Kind = %v, want %v", parseErr.Kind, tc.kind)
			}
			if parseErr.Field != tc.field {
				t.Errorf("Field = %q, want %q", parseErr.Field, tc.field)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("Parse(%q) error\n  %v\nwant it to contain\n  %s", tc.spec, err, tc.message)
			}
			// Detail is for callers that print the schedule themselves: it
			// must not print it again.
			if detail := parseErr.Detail(); !strings.HasSuffix(err.Error(), detail) || (parseErr.Field == "" && tc.spec != "" && strings.Contains(detail, tc.spec)) {
				t.Errorf("Detail() = %q for error %q", detail, err)
			}
			if parseErr.Spec != tc.spec || !strings.Contains(tc.spec[parseErr.Offset:], parseErr.Value) {
				t.Errorf("error points at %q (offset %d), which is not in %q there", parseErr.Value, parseErr.Offset, tc.spec)
			}
		})
	}
}

// TestHashMatchesJenkins checks H against values computed with Java's own
// MessageDigest and java.util.Random the way Jenkins' Hash.from does, for
// "H H(8-17) H/3 H(1-6)/2 H": the draws are next(60), next(10), next(3),
// next(2), next(7).
func TestHashMatchesJenkins(t *testing.T) {
	vectors := []struct {
		key   string
		draws [5]int
	}{
		{"my-job", [5]int{18, 1, 2, 0, 1}},
		{"folder/nightly-build", [5]int{15, 7, 2, 0, 1}},
		{"default/report", [5]int{40, 6, 2, 0, 4}},
		{"", [5]int{57, 5, 2, 0, 5}},
		{"ジョブ", [5]int{36, 5, 2, 1, 3}},
		{"team-a/index-builder-863", [5]int{38, 5, 2, 1, 3}},
	}
	for _, v := range vectors {
		source := newHashSource(v.key)
		for i, bound := range []int{60, 10, 3, 2, 7} {
			if got := source.intn(bound); got != v.draws[i] {
				t.Errorf("key %q draw %d: %d, Java says %d", v.key, i, got, v.draws[i])
			}
		}
		if v.key == "" {
			continue // an empty key is rejected by Parse
		}
		s, err := Parser{Dialect: Extended, HashKey: v.key}.Parse("H H(8-17) H/3 H(1-6)/2 H")
		if err != nil {
			t.Fatal(err)
		}
		d := v.draws
		if s.minute != 1<<uint(d[0]) || s.hour != 1<<uint(8+d[1]) ||
			s.dom != uint32(valueBits(1+d[2], 28, 3)) || s.month != uint16(valueBits(1+d[3], 6, 2)) || s.dow != 1<<uint(d[4]) {
			t.Errorf("key %q: fields %b %b %b %b %b do not match Jenkins' draws %v", v.key, s.minute, s.hour, s.dom, s.month, s.dow, d)
		}
	}
}

// TestExtendedAgainstOracle compares random extended schedules with the
// oracle, which evaluates L, W and # from the calendar directly.
func TestExtendedAgainstOracle(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(7, 7))
	domTerms := []string{"L", "L-1", "L-3", "LW", "1W", "15W", "30W", "31W", "1", "13", "*", "1-7", "*/2"}
	dowTerms := []string{"*", "5L", "0L", "1#1", "5#3", "2#5", "7", "MON#2", "1-5", "sat"}
	for i := 0; i < n; i++ {
		spec := strconv.Itoa(rng.IntN(60)) + " " + strconv.Itoa(rng.IntN(24)) + " " +
			domTerms[rng.IntN(len(domTerms))] + " " + []string{"*", "2", "*/3", "1,6,12"}[rng.IntN(4)] + " " + dowTerms[rng.IntN(len(dowTerms))]
		s, err := Parser{Dialect: Extended}.Parse(spec)
		if err != nil {
			if strings.Contains(err.Error(), "never fires") {
				continue // such as 30W in February; TestParseRejects covers it
			}
			t.Fatalf("Parse(%q): %v", spec, err)
		}
		from := time.Date(2000+rng.IntN(60), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
		for run := 0; run < 12; run++ {
			want, ok := oracleNextCivil(s, from, 366*60)
			got := s.Next(from)
			if !ok || !got.Equal(want) {
				t.Fatalf("%q from %v: Next = %v, oracle = %v", spec, from, got, want)
			}
			if back := s.Prev(got.Add(-time.Second)); !back.IsZero() && !back.Before(from.Add(time.Second)) {
				t.Fatalf("%q: Prev(%v) = %v, but the previous activation is at or before %v", spec, got.Add(-time.Second), back, from)
			}
			from = got
		}
	}
}
