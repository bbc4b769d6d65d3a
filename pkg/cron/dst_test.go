package cron

import (
	"archive/zip"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestDSTEveryZone walks every zone in Go's tzdata through 2026-2028 under
// both DST policies and checks Next and Prev against an expected sequence
// built independently: every matching wall-clock minute from the oracle,
// mapped to the instants that show that reading (zero, one or two of them),
// then the policy applied. That proves no duplicate instant, nothing skipped
// that the policy keeps, nothing kept that it skips, and strictly increasing
// order.
func TestDSTEveryZone(t *testing.T) {
	names := goTZDataZones(t)
	if testing.Short() {
		names = sample(names, 8) // make test checks every zone, without -short
	}
	cases := []dstCase{
		// Fixed times every quarter hour (neither field starts with *), so
		// every transition of every zone crosses a scheduled time.
		{spec: "0-59/15 0-23 * * *", policy: DSTCron},
		{spec: "0-59/15 0-23 * * *", policy: DSTKubernetes},
		// The wildcard form of the same times follows elapsed time.
		{spec: "*/15 * * * *", policy: DSTCron},
		// A daily time at the most common transition hours.
		{spec: "30 0-3 * * *", policy: DSTCron},
		// Sparse schedules, whose Next crosses whole periods, on dates
		// around the usual transitions in both hemispheres.
		{spec: "30 2 * * *", policy: DSTKubernetes},
		{spec: "30 2 * * *", policy: DSTCron},
		{spec: "30 1,2 1-10 3,4,9,10,11 *", policy: DSTKubernetes},
		{spec: "30 1,2 1-10 3,4,9,10,11 *", policy: DSTCron},
		{spec: "0 0,3 1 1,7 *", policy: DSTKubernetes},
		// Far beyond the zone files, where offsets come from the zone's
		// rule string and the engine folds instants by 400 years.
		{spec: "0-59/15 0-23 * * *", policy: DSTCron, from: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), to: time.Date(3001, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for i := range cases {
		if cases[i].from.IsZero() {
			cases[i].from, cases[i].to = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)
		}
	}
	// The zones are independent: one shard per CPU halves make test's
	// longest engine check on two cores.
	var checked atomic.Int64
	shards := runtime.GOMAXPROCS(0)
	for shard := range shards {
		t.Run(fmt.Sprintf("shard-%d-of-%d", shard+1, shards), func(t *testing.T) {
			t.Parallel()
			for i := shard; i < len(names); i += shards {
				checked.Add(int64(checkZone(t, names[i], cases)))
				if t.Failed() {
					return
				}
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("%d zones, %d zone × schedule × policy sequences checked", len(names), checked.Load())
	})
}

// dstCase is one schedule, policy and period TestDSTEveryZone checks in every
// zone.
type dstCase struct {
	spec     string
	policy   DSTPolicy
	from, to time.Time
}

// checkZone checks every case in the named zone and returns how many
// sequences it checked.
func checkZone(t *testing.T, name string, cases []dstCase) int {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("loading %s: %v", name, err)
	}
	for _, c := range cases {
		s, err := Parser{Location: loc, DSTPolicy: c.policy}.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		offsets := zoneOffsets(loc, c.from.AddDate(0, 0, -2), c.to.AddDate(0, 0, 2))
		want := expectedInstants(s, loc, offsets, c.from, c.to)
		checkSequence(t, s, want, name, c.spec)
	}
	return len(cases)
}

// checkSequence compares Next forwards and Prev backwards with want, within
// want's first and last instant.
func checkSequence(t *testing.T, s *Spec, want []int64, zone, spec string) {
	t.Helper()
	label := zone + " " + spec + " (" + s.policy.String() + ")"
	at := time.Unix(want[0]-1, 0)
	for i, w := range want {
		got := s.Next(at)
		if got.Unix() != w {
			t.Errorf("%s: Next(%v) = %v, want %v (run %d)", label, at.In(s.loc), got, time.Unix(w, 0).In(s.loc), i)
			return
		}
		if got.Location() != s.loc {
			t.Errorf("%s: Next returned a time in %v, want the schedule's location", label, got.Location())
			return
		}
		at = got
	}
	at = time.Unix(want[len(want)-1], 0)
	for i := len(want) - 1; i >= 0; i-- {
		got := s.Prev(at)
		if got.Unix() != want[i] {
			t.Errorf("%s: Prev(%v) = %v, want %v", label, at.In(s.loc), got, time.Unix(want[i], 0).In(s.loc))
			return
		}
		at = got.Add(-time.Second)
	}
}

// expectedInstants lists the activations in [from, to) (wall clock), built
// from the oracle and the zone's offsets as the time package reports them.
func expectedInstants(s *Spec, loc *time.Location, offsets []int64, from, to time.Time) []int64 {
	elapsed := s.policy == DSTKubernetes || s.wildcardTime
	var instants []int64
	for _, wall := range oracleCivilTimes(s, from, to) {
		w := wall.Unix()
		var occurrences []int64
		for _, offset := range offsets {
			if u := w - offset; offsetAt(loc, u) == offset {
				occurrences = append(occurrences, u)
			}
		}
		slices.Sort(occurrences)
		switch {
		case len(occurrences) == 0 && !elapsed:
			// In a gap: fire when the gap ends, the first instant whose
			// wall clock reads later than w.
			instants = append(instants, gapEnd(loc, w, offsets))
		case len(occurrences) > 0 && !elapsed:
			instants = append(instants, occurrences[0])
		default:
			instants = append(instants, occurrences...)
		}
	}
	slices.Sort(instants)
	return slices.Compact(instants)
}

func offsetAt(loc *time.Location, u int64) int64 {
	_, offset := time.Unix(u, 0).In(loc).Zone()
	return int64(offset)
}

// zoneOffsets lists the distinct offsets loc uses between from and to.
func zoneOffsets(loc *time.Location, from, to time.Time) []int64 {
	var offsets []int64
	for at := from; at.Before(to); at = at.Add(time.Hour) {
		if o := offsetAt(loc, at.Unix()); !slices.Contains(offsets, o) {
			offsets = append(offsets, o)
		}
	}
	return offsets
}

// gapEnd returns the instant a gap containing wall-clock time w ends: the
// smallest instant whose wall clock is past w, found by bisection.
func gapEnd(loc *time.Location, w int64, offsets []int64) int64 {
	lo, hi := w-slices.Max(offsets), w-slices.Min(offsets) // wall(lo) <= w < wall(hi)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if mid+offsetAt(loc, mid) > w {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// goTZDataZones lists the zones in Go's own copy of the tz database.
func goTZDataZones(t *testing.T) []string {
	t.Helper()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	archive, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer archive.Close()
	var names []string
	for _, f := range archive.File {
		if !strings.HasSuffix(f.Name, "/") {
			names = append(names, f.Name)
		}
	}
	if len(names) < 300 {
		t.Fatalf("found only %d zones in Go's tzdata", len(names))
	}
	return names
}

// sample picks n names spread over the list, always including the zones
// with unusual transitions.
func sample(names []string, n int) []string {
	picked := []string{"America/New_York", "Australia/Sydney", "Pacific/Auckland", "Australia/Lord_Howe", "America/Santiago", "Europe/London", "Asia/Gaza", "America/Havana"}
	for i := 0; i < len(names); i += len(names) / n {
		picked = append(picked, names[i])
	}
	return picked
}
