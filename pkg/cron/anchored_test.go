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
