package cron

import (
	"strings"
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
)

// TestDSTKubernetesPolicyMatchesRobfig checks that DSTKubernetes reproduces
// robfig/cron v3 around every offset change of 2026-2028 in every zone of
// Go's tzdata, for schedules at and around the usual transition hours.
//
// The one exception is Lord Howe Island (Australia/Lord_Howe, alias
// Australia/LHI), whose clocks move by 30 minutes. robfig steps hours with
// Add(time.Hour) and so lands on :30 after such a change: it fires "30 1 * * *"
// at 02:30 and skips whole days of "0 0 * * *" and "15 3 * * *"
// (TestRobfigLordHoweDefect shows one case). ontime fires at the wall-clock
// times the schedule names there; TestDSTEveryZone checks that against the
// oracle.
func TestDSTKubernetesPolicyMatchesRobfig(t *testing.T) {
	specs := []string{"30 1 * * *", "30 2 * * *", "0 0 * * *", "30 0 * * *", "0 * * * *", "*/30 * * * *", "15 3 * * *", "0 1-3 * * *", "45 23 * * *"}
	names := goTZDataZones(t)
	if testing.Short() {
		names = sample(names, 40)
	}
	from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)
	compared := 0
	for _, name := range names {
		if strings.Contains(name, "Lord_Howe") || name == "Australia/LHI" {
			continue
		}
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, transition := range transitions(loc, from, to) {
			for _, spec := range specs {
				ours, err := Parser{Location: loc, DSTPolicy: DSTKubernetes}.Parse(spec)
				if err != nil {
					t.Fatal(err)
				}
				theirs, _ := robfig.ParseStandard("TZ=" + name + " " + spec)
				a := time.Unix(transition-2*secondsPerDay, 0)
				b := a
				for range 60 {
					if a, b = ours.Next(a), theirs.Next(b); !a.Equal(b) {
						t.Errorf("%s %q near %v: ontime %v, robfig %v", name, spec, time.Unix(transition, 0).In(loc), a, b.In(loc))
						break
					}
				}
				compared++
			}
		}
	}
	if compared == 0 {
		t.Fatal("no transitions found in 2026-2028; the zone data is missing")
	}
	t.Logf("%d zones, %d (transition, schedule) pairs identical to robfig", len(names), compared)
}

func TestRobfigLordHoweDefect(t *testing.T) {
	loc, err := time.LoadLocation("Australia/Lord_Howe")
	if err != nil {
		t.Fatal(err)
	}
	// 2026-10-04 02:00 +10:30 becomes 02:30 +11:00.
	from := time.Date(2026, 10, 3, 12, 0, 0, 0, loc)
	theirs, _ := robfig.ParseStandard("TZ=Australia/Lord_Howe 30 1 * * *")
	if got := theirs.Next(time.Date(2026, 10, 4, 1, 45, 0, 0, loc)); got.In(loc).Hour() != 2 {
		t.Fatalf("robfig's Lord Howe defect is gone (it returned %v); TestDSTKubernetesPolicyMatchesRobfig can include Lord Howe again", got.In(loc))
	}
	ours, err := Parser{Location: loc, DSTPolicy: DSTKubernetes}.Parse("30 1 * * *")
	if err != nil {
		t.Fatal(err)
	}
	got := ours.Next(from)
	if want := time.Date(2026, 10, 4, 1, 30, 0, 0, loc); !got.Equal(want) {
		t.Errorf("Next(%v) = %v, want %v", from, got, want)
	}
	if got = ours.Next(got); got.Format("01-02 15:04") != "10-05 01:30" {
		t.Errorf("after 10-04 01:30 came %v, want 10-05 01:30 (robfig says 10-04 02:30)", got)
	}
}

// transitions lists the instants in [from, to) where loc's offset changes.
func transitions(loc *time.Location, from, to time.Time) []int64 {
	var out []int64
	previous := offsetAt(loc, from.Unix())
	for at := from.Unix(); at < to.Unix(); at += 900 {
		offset := offsetAt(loc, at)
		if offset == previous {
			continue
		}
		lo, hi := at-900, at
		for hi-lo > 1 {
			if mid := (lo + hi) / 2; offsetAt(loc, mid) == offset {
				hi = mid
			} else {
				lo = mid
			}
		}
		out = append(out, hi)
		previous = offset
	}
	return out
}
