package cron

import (
	"errors"
	"testing"
	"time"
)

// FuzzParse checks that no input makes Parse, Next or Prev panic or hang,
// that every error is a *ParseError pointing into the schedule, and that
// Next is strictly after and Prev at or before the time asked about. The
// seed corpus is in testdata/fuzz/FuzzParse; run the fuzzer with
//
//	go test -fuzz FuzzParse ./pkg/cron
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"* * * * *", "*/5 1-3 * * mon-fri", "0 0 29 2 *", "TZ=UTC", "TZ=America/New_York 30 2 * * *",
		"CRON_TZ= 0 0 * * *", "@every 1h30m", "@every -1s", "@daily", "*-x ? ,, +5 05", "0 0 30 2 *",
		"H H(0-7) H/3 * H", "0 0 L-3,15W,LW * 5L,1#2", "59 23 31 12 7", "1/2/3 * * * *",
	} {
		f.Add(seed, seed[0]%2 == 0, "ns/name", int64(1767225600))
	}
	f.Fuzz(func(t *testing.T, spec string, extended bool, key string, unix int64) {
		p := Parser{HashKey: key, DSTPolicy: DSTPolicy(unix & 1)}
		if extended {
			p.Dialect = Extended
		}
		s, err := p.Parse(spec)
		if err != nil {
			checkParseError(t, spec, err)
			return
		}
		// Keep to years 1..9999, which time.Time formats.
		from := time.Unix(-62135596800+int64(uint64(unix)%(253402300799+62135596800)), 0)
		checkNextAndPrev(t, s, from)
	})
}

// checkParseError: every error is a *ParseError with a kind, whose value
// is found in the schedule at its offset.
func checkParseError(t *testing.T, spec string, err error) {
	t.Helper()
	var parseErr *ParseError
	if !errors.As(err, &parseErr) {
		t.Fatalf("Parse(%q) returned %T, want *ParseError", spec, err)
	}
	if parseErr.Kind == 0 {
		t.Fatalf("Parse(%q): %v has no Kind", spec, err)
	}
	if parseErr.Offset < 0 || parseErr.Offset+len(parseErr.Value) > len(spec) || spec[parseErr.Offset:parseErr.Offset+len(parseErr.Value)] != parseErr.Value {
		t.Fatalf("Parse(%q): error value %q at offset %d is not in the schedule", spec, parseErr.Value, parseErr.Offset)
	}
}

// checkNextAndPrev: Next is strictly after from, Prev at or before it, and
// Prev of a run is that run.
func checkNextAndPrev(t *testing.T, s *Spec, from time.Time) {
	t.Helper()
	next := s.Next(from)
	if !next.IsZero() && !next.After(from) {
		t.Fatalf("%q: Next(%v) = %v, not after it", s, from, next)
	}
	prev := s.Prev(from)
	if !prev.IsZero() && prev.After(from) {
		t.Fatalf("%q: Prev(%v) = %v, after it", s, from, prev)
	}
	if s.Interval() == 0 && !next.IsZero() {
		if again := s.Prev(next); !again.Equal(next) {
			t.Fatalf("%q: Prev(Next(%v)) = %v, want %v", s, from, again, next)
		}
	}
}

// TestNextAndPrevDoNotAllocate holds the engine to zero allocations in
// UTC and in a DST zone (a count, not a timing, so it is deterministic).
func TestNextAndPrevDoNotAllocate(t *testing.T) {
	for _, zone := range []string{"UTC", "America/New_York"} {
		s, err := Parser{Location: mustLoad(t, zone)}.Parse("30 2 * * 1-5")
		if err != nil {
			t.Fatal(err)
		}
		from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		if n := testing.AllocsPerRun(100, func() { from = s.Next(from) }); n != 0 {
			t.Errorf("%s: Next allocates %v times per call", zone, n)
		}
		if n := testing.AllocsPerRun(100, func() { from = s.Prev(from.Add(-time.Second)) }); n != 0 {
			t.Errorf("%s: Prev allocates %v times per call", zone, n)
		}
	}
}
