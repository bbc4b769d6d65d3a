package cron

import (
	"testing"
	"time"
)

func TestAnchored(t *testing.T) {
	anchor := time.Date(2026, 11, 24, 8, 0, 0, 500, time.UTC)
	every, err := Parse("@every 90m")
	if err != nil {
		t.Fatal(err)
	}
	runs := every.Anchored(anchor)
	first := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		at         time.Time
		prev, next time.Time
	}{
		{anchor, time.Time{}, first},
		{first, first, first.Add(90 * time.Minute)},
		{first.Add(time.Hour), first, first.Add(90 * time.Minute)},
		{first.Add(3 * time.Hour), first.Add(3 * time.Hour), first.Add(270 * time.Minute)},
	} {
		if got := runs.Prev(tc.at); !got.Equal(tc.prev) {
			t.Errorf("Prev(%v) = %v, want %v", tc.at, got, tc.prev)
		}
		if got := runs.Next(tc.at); !got.Equal(tc.next) {
			t.Errorf("Next(%v) = %v, want %v", tc.at, got, tc.next)
		}
	}
	daily, _ := Parse("0 0 * * *")
	if daily.Anchored(anchor) != Runs(daily) {
		t.Error("a calendar schedule anchored is not itself")
	}
}

// TestUnion: every 15 minutes on weekdays and hourly on weekends is one
// sequence of runs; a time both schedules have is one run.
func TestUnion(t *testing.T) {
	weekdays, err := Parse("*/15 * * * 1-5")
	if err != nil {
		t.Fatal(err)
	}
	weekends, err := Parse("0 * * * 0,6")
	if err != nil {
		t.Fatal(err)
	}
	everyTwenty, _ := Parse("*/20 * * * *")
	friday := time.Date(2026, 11, 27, 23, 40, 0, 0, time.UTC) // a Friday
	both := Union(weekdays, weekends)
	var got []time.Time
	for at := friday; len(got) < 4; {
		at = both.Next(at)
		got = append(got, at)
	}
	want := []time.Time{friday.Add(5 * time.Minute), friday.Add(20 * time.Minute), friday.Add(80 * time.Minute), friday.Add(140 * time.Minute)}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Fatalf("Next from %v: %v, want %v", friday, got, want)
		}
	}
	if p := both.Prev(friday.Add(80 * time.Minute).Add(-time.Second)); !p.Equal(friday.Add(20 * time.Minute)) {
		t.Errorf("Prev before Saturday 01:00 = %v, want Saturday 00:00", p)
	}
	shared := Union(weekdays, everyTwenty)
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	if n := shared.Next(at.Add(-time.Second)); !n.Equal(at) || !shared.Next(at).Equal(at.Add(15*time.Minute)) {
		t.Errorf("a time both have: Next %v then %v, want %v once then %v", n, shared.Next(at), at, at.Add(15*time.Minute))
	}
	if Union(weekdays) != Runs(weekdays) {
		t.Error("the union of one schedule is not itself")
	}
}
