package cron

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
)

// The differential test checks the promise that matters most to users moving
// from CronJob: for any schedule Kubernetes accepts, ontime accepts it too
// and fires at exactly the same times as robfig/cron v3.0.1, the library
// kube-controller-manager uses. The only allowed differences are robfig's
// known defects, each checked against the oracle instead:
//   - robfig gives up after 5 years and returns the zero time;
//   - robfig accepts schedules that never fire, @every of zero or less, and
//     panics on "TZ=x" with no schedule; ontime rejects those.

// zonesWithoutDST have had one fixed offset since well before 2000 and are
// expected to keep it; the test verifies that.
var zonesWithoutDST = []string{
	"UTC", "Asia/Tokyo", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Shanghai", "Africa/Abidjan",
	"Etc/GMT+5", "Etc/GMT-14", "Pacific/Kiritimati", "America/Panama", "Australia/Brisbane", "Asia/Dubai",
}

func TestDifferentialRobfig(t *testing.T) {
	expressions := 100_000
	if testing.Short() {
		expressions = 3_000
	}
	zones := make([]*time.Location, len(zonesWithoutDST))
	for i, name := range zonesWithoutDST {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		_, offset := time.Date(2000, 1, 1, 0, 0, 0, 0, loc).Zone()
		for at := time.Date(2000, 1, 1, 0, 0, 0, 0, loc); at.Year() < 2080; at = at.Add(24 * time.Hour) {
			if _, o := at.Zone(); o != offset {
				t.Fatalf("%s changes its offset by %v; it does not belong in zonesWithoutDST", name, at)
			}
		}
		zones[i] = loc
	}
	rng := rand.New(rand.NewPCG(2026, 11))
	stats := map[string]int{}
	for i := 0; i < expressions; i++ {
		spec := randomSpec(rng, i%5 == 0)
		zone := zones[0]
		if i%2 == 1 {
			zone = zones[rng.IntN(len(zones))]
		}
		from := time.Date(2000+rng.IntN(50), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1e9), zone)
		stats[compareWithRobfig(t, spec, zone, from)]++
		if t.Failed() {
			return
		}
	}
	t.Logf("%d expressions: %v", expressions, stats)
	if stats["same"] < expressions*6/10 {
		t.Errorf("only %d of %d random expressions were valid; the generator needs fixing", stats["same"], expressions)
	}
}

// compareWithRobfig checks one schedule and returns how it went.
func compareWithRobfig(t *testing.T, spec string, zone *time.Location, from time.Time) string {
	t.Helper()
	ours, ourErr := Parser{Location: zone}.Parse(spec)
	robfigSpec := spec
	if !strings.HasPrefix(spec, "TZ=") && !strings.HasPrefix(spec, "CRON_TZ=") {
		robfigSpec = "TZ=" + zone.String() + " " + spec
	}
	theirs, theirErr := robfigParse(robfigSpec)
	switch {
	case theirErr != nil && ourErr != nil:
		return "both rejected"
	case theirErr != nil:
		t.Errorf("%q: robfig rejects it (%v), ontime accepts it", spec, theirErr)
		return "mismatch"
	case ourErr != nil:
		if isKnownRobfigDefect(t, spec, ourErr, theirs) {
			return "ontime rejects a robfig defect"
		}
		t.Errorf("%q: ontime rejects it (%v), robfig accepts it", spec, ourErr)
		return "mismatch"
	}
	a, b := from, from
	for n := 0; n < 50; n++ {
		a, b = ours.Next(a), theirs.Next(b)
		if b.IsZero() {
			// robfig's 5-year horizon. ontime must give the true answer.
			want, ok := oracleNextCivil(ours, civil(prevOrFrom(ours, a, from)), 366*30)
			if !ok || !civil(a).Equal(want) {
				t.Errorf("%q from %v, run %d: robfig gave up; ontime says %v, the oracle %v", spec, from, n, a, want)
			}
			return "robfig horizon"
		}
		if !a.Equal(b) {
			t.Errorf("%q in %s from %v, run %d: ontime %v, robfig %v", spec, zone, from, n, a, b)
			return "mismatch"
		}
		if ours.Interval() == 0 && !ours.Prev(a).Equal(a) {
			t.Errorf("%q: Prev(%v) = %v, want the same instant", spec, a, ours.Prev(a))
		}
	}
	return "same"
}

// prevOrFrom returns the activation before a (or from, for the first run),
// to start the oracle's search.
func prevOrFrom(s *Spec, a, from time.Time) time.Time {
	if p := s.Prev(a.Add(-time.Second)); p.After(from) {
		return p
	}
	return from
}

// civil returns t's wall-clock reading as a UTC time.
func civil(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
}

func robfigParse(spec string) (s robfig.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return robfig.ParseStandard(spec)
}

// isKnownRobfigDefect accepts ontime rejecting what robfig wrongly accepts.
func isKnownRobfigDefect(t *testing.T, spec string, ourErr error, theirs robfig.Schedule) bool {
	t.Helper()
	var parseErr *ParseError
	if !errors.As(ourErr, &parseErr) {
		return false
	}
	reason := parseErr.Reason
	switch {
	case strings.Contains(reason, "never fires"), strings.Contains(reason, "selects no"):
		// robfig searches 5 years per call; asking it every 5 years over a
		// whole 400-year Gregorian cycle covers every calendar there is.
		for year := 2000; year < 2400; year += 5 {
			at := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
			if next := theirs.Next(at); !next.IsZero() {
				t.Errorf("%q: ontime says it never fires, robfig fires at %v", spec, next)
				return true
			}
		}
		return true
	case strings.Contains(reason, "positive interval"):
		return true
	}
	return false
}

// randomSpec returns a random schedule that robfig's grammar almost always
// accepts, with the oddities it allows (?, *-x, +5, 05, empty list terms,
// steps larger than the range, names in any case), and now and then a
// descriptor, a TZ prefix or an invalid term.
func randomSpec(rng *rand.Rand, odd bool) string {
	switch r := rng.IntN(100); {
	case r < 4:
		return []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}[rng.IntN(7)]
	case r < 6:
		return "@every " + []string{"1m", "90s", "1h30m", "17m", "2h", "45s", "1.5s", "500ms", "24h"}[rng.IntN(9)]
	case r < 8:
		return "TZ=" + zonesWithoutDST[rng.IntN(len(zonesWithoutDST))] + " " + randomFields(rng, odd)
	}
	return randomFields(rng, odd)
}

func randomFields(rng *rand.Rand, odd bool) string {
	fields := []string{
		randomField(rng, 0, 59, nil, odd),
		randomField(rng, 0, 23, nil, odd),
		randomField(rng, 1, 31, nil, odd),
		randomField(rng, 1, 12, fieldInfos[monthField].names, odd),
		randomField(rng, 0, 6, fieldInfos[dowField].names, odd),
	}
	return strings.Join(fields, " ")
}

func randomField(rng *rand.Rand, low, high int, names []string, odd bool) string {
	if rng.IntN(3) == 0 {
		return []string{"*", "*", "*", "?"}[rng.IntN(4)]
	}
	n := 1 + rng.IntN(3)
	terms := make([]string, n)
	for i := range terms {
		terms[i] = randomTerm(rng, low, high, names, odd)
	}
	if odd && rng.IntN(10) == 0 {
		return "," + strings.Join(terms, ",,")
	}
	return strings.Join(terms, ",")
}

// randomValue returns one value between low and high, now and then as a
// name, with robfig's tolerated oddities, or out of range.
func randomValue(rng *rand.Rand, low, high int, names []string, odd bool) string {
	v := low + rng.IntN(high-low+1)
	switch {
	case names != nil && names[v%len(names)] != "" && rng.IntN(3) == 0:
		name := names[v%len(names)]
		if rng.IntN(2) == 0 {
			name = strings.ToUpper(name)
		}
		return name
	case odd && rng.IntN(8) == 0:
		return "+" + strconv.Itoa(v)
	case odd && rng.IntN(8) == 0:
		return "0" + strconv.Itoa(v)
	case odd && rng.IntN(40) == 0:
		return strconv.Itoa(v + high) // out of range: both must reject
	}
	return strconv.Itoa(v)
}

func randomTerm(rng *rand.Rand, low, high int, names []string, odd bool) string {
	value := func() string { return randomValue(rng, low, high, names, odd) }
	step := func() string { return strconv.Itoa(1 + rng.IntN(high-low+rng.IntN(30)+1)) }
	switch rng.IntN(7) {
	case 0, 1:
		return value()
	case 2:
		a, b := low+rng.IntN(high-low+1), low+rng.IntN(high-low+1)
		return strconv.Itoa(min(a, b)) + "-" + strconv.Itoa(max(a, b))
	case 3:
		return "*/" + step()
	case 4:
		a, b := low+rng.IntN(high-low+1), low+rng.IntN(high-low+1)
		return strconv.Itoa(min(a, b)) + "-" + strconv.Itoa(max(a, b)) + "/" + step()
	case 5:
		return value() + "/" + step()
	}
	if odd {
		return []string{"*-5", "?-x", "*-1-2", "*/0", "5-", "1/", "1-2-3", "**", "-1"}[rng.IntN(9)]
	}
	return value()
}
