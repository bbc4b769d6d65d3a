package spread

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var balanceNow = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func member(i int, schedule string) Member {
	return testMember(fmt.Sprintf("team-%d/job-%d", i%13, i), schedule)
}

func loadOf(t *testing.T, members []Member) *Load {
	t.Helper()
	load, err := LoadOf(members, balanceNow)
	if err != nil {
		t.Fatal(err)
	}
	return load
}

func place(t *testing.T, members []Member) []Member {
	t.Helper()
	placed, err := Place(members, balanceNow)
	if err != nil {
		t.Fatal(err)
	}
	return placed
}

// TestAssignEmptyGroupIsHash: alone, a member lands where plain H puts it.
func TestAssignEmptyGroupIsHash(t *testing.T) {
	for i, schedule := range []string{"H * * * *", "H/5 * * * *", "H H * * *", "H(0-29)/10 H(9-17) * * 1-5"} {
		m := member(i, schedule)
		choices, err := Assign(&Load{}, m, balanceNow)
		if err != nil {
			t.Fatal(err)
		}
		hashed, _ := m.Parse()
		m.Choices = choices
		balanced, _ := m.Parse()
		if balanced.Effective() != hashed.Effective() {
			t.Errorf("%q alone: balanced %q, hashed %q", schedule, balanced.Effective(), hashed.Effective())
		}
	}
}

// TestAdditionsReachTheIdeal: members of one shape added one at a time, in
// any order, never make the peak exceed the ideal ceil(total/slots).
func TestAdditionsReachTheIdeal(t *testing.T) {
	for _, schedule := range []string{"H * * * *", "H/5 * * * *", "H/15 * * * *", "H H * * *", "H H/6 * * *", "H(0-29) * * * *"} {
		t.Run(schedule, func(t *testing.T) {
			var members []Member
			for i := range 250 {
				members = append(members, member(i, schedule))
			}
			placed := place(t, members)
			load := &Load{} // grows with each addition, as the ledger's does
			for n := 1; n <= len(placed); n++ {
				if err := load.Add(placed[n-1], balanceNow); err != nil {
					t.Fatal(err)
				}
				if ideal := idealOf(load, n, schedule); load.Peak() > ideal {
					t.Fatalf("after %d additions: peak %d, ideal %d", n, load.Peak(), ideal)
				}
			}
		})
	}
}

// idealFor is the smallest possible peak for n members of one shape: H(0-29)
// can only use 30 minutes of each hour.
// idealOf is the smallest possible peak of a load of n members of one
// shape.
func idealOf(load *Load, n int, schedule string) int64 {
	if schedule == "H(0-29) * * * *" {
		return int64((n + 29) / 30)
	}
	return load.Ideal()
}

// TestRandomSequences: random additions and removals. Nobody moves but the
// newcomer. For one shape, an addition never raises the peak above both
// the ideal and the peak before it (so from an empty or rebalanced group
// the peak stays at the ideal). For mixed shapes, with additions only, the
// peak stays within one of the ideal. Rebalance brings a group back to the
// ideal (one shape) or within one of it (mixed).
func TestRandomSequences(t *testing.T) {
	mixed := []string{"H * * * *", "H/5 * * * *", "H/10 * * * *", "H/15 * * * *", "H/30 * * * *", "H/20 * * * *", "H H * * *"}
	cases := []struct {
		name     string
		shapes   []string
		removals bool
		slack    int64 // allowed above the ideal
	}{
		{"one shape H/15, with removals", []string{"H/15 * * * *"}, true, 0},
		{"one shape H, with removals", []string{"H * * * *"}, true, 0},
		{"one shape H H, with removals", []string{"H H * * *"}, true, 0},
		{"mixed, additions only", mixed, false, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seeds := uint64(10)
			if testing.Short() {
				seeds = 2 // make test runs all ten without -short
			}
			for seed := range seeds {
				checkSequence(t, rand.New(rand.NewPCG(seed, 7)), tc.shapes, tc.removals, tc.slack)
			}
		})
	}
}

func checkSequence(t *testing.T, rng *rand.Rand, shapes []string, removals bool, slack int64) {
	t.Helper()
	var group []Member
	minutes := map[string][]int{}
	load := &Load{}
	peakBefore := int64(0)
	for step := range 300 {
		if removals && len(group) > 0 && rng.IntN(3) == 0 {
			victim := rng.IntN(len(group))
			load.add(minutes[group[victim].Key], -1)
			group = slices.Delete(group, victim, victim+1)
			peakBefore = load.Peak()
			continue
		}
		m := member(step, shapes[rng.IntN(len(shapes))])
		choices, err := Assign(load, m, balanceNow)
		if err != nil {
			t.Fatal(err)
		}
		m.Choices = choices
		spec, err := m.Parse()
		if err != nil {
			t.Fatal(err)
		}
		minutes[m.Key] = utcMinutes(spec, balanceNow)
		load.add(minutes[m.Key], 1)
		group = append(group, m)
		if load.Peak() > max(load.Ideal()+slack, peakBefore) {
			t.Fatalf("step %d: peak %d after an addition, ideal %d, peak before %d", step, load.Peak(), load.Ideal(), peakBefore)
		}
		peakBefore = load.Peak()
	}
	if *load != *loadOf(t, group) {
		t.Fatal("the incremental load differs from the group's")
	}
	rebalanced, err := Rebalance(group, balanceNow)
	if err != nil {
		t.Fatal(err)
	}
	if load := loadOf(t, rebalanced); load.Peak() > load.Ideal()+slack {
		t.Errorf("rebalanced peak %d, ideal %d", load.Peak(), load.Ideal())
	}
}

// TestPlaceMovesNobody: placing newcomers keeps every placed member's
// choices, and leaves the group's other members in their order.
func TestPlaceMovesNobody(t *testing.T) {
	var members []Member
	for i := range 60 {
		members = append(members, member(i, []string{"H * * * *", "H/5 * * * *", "H H * * *"}[i%3]))
	}
	first := place(t, members[:40])
	second := place(t, append(slices.Clone(first), members[40:]...))
	for i := range first {
		if first[i].Key != second[i].Key || !slices.Equal(first[i].Choices, second[i].Choices) {
			t.Fatalf("%s moved from %v to %v", first[i].Key, first[i].Choices, second[i].Choices)
		}
	}
}

// TestRebalanceRestoresTheIdeal: members placed while others came and
// went can end above the ideal; Rebalance brings them back to it.
func TestRebalanceRestoresTheIdeal(t *testing.T) {
	var members []Member
	for i := range 180 {
		members = append(members, member(i, "H * * * *"))
	}
	placed := place(t, members)
	// Keep the members of one minute only: three each in 59 minutes go.
	var kept []Member
	for _, m := range placed {
		if spec, _ := m.Parse(); spec.MinutesOfDay()[0] == 7 {
			kept = append(kept, m)
		}
	}
	if load := loadOf(t, kept); load.Peak() != 3 || load.Ideal() != 1 {
		t.Fatalf("setup: peak %d ideal %d, want 3 and 1", load.Peak(), load.Ideal())
	}
	rebalanced, err := Rebalance(kept, balanceNow)
	if err != nil {
		t.Fatal(err)
	}
	if load := loadOf(t, rebalanced); load.Peak() != 1 {
		t.Errorf("rebalanced peak %d, want 1", load.Peak())
	}
}

// TestPlaceIsDeterministic: the same arrivals give the same placement.
func TestPlaceIsDeterministic(t *testing.T) {
	var members []Member
	for i := range 100 {
		members = append(members, member(i, []string{"H * * * *", "H/5 * * * *", "H H * * *"}[i%3]))
	}
	a, b := place(t, members), place(t, members)
	for i := range a {
		if !slices.Equal(a[i].Choices, b[i].Choices) {
			t.Fatalf("%s: %v then %v", a[i].Key, a[i].Choices, b[i].Choices)
		}
	}
}

// TestWeightsBalanceCapacity: with CPU weights, a heavy member gets a
// minute of its own, and the peak stays within one heavy member of the
// ideal.
func TestWeightsBalanceCapacity(t *testing.T) {
	var members []Member
	for i := range 120 {
		m := member(i, "H * * * *")
		m.Weight = 100
		if i%10 == 0 {
			m.Weight = 2000
		}
		members = append(members, m)
	}
	placed := place(t, members)
	load := loadOf(t, placed)
	if load.Peak() > load.Ideal()+2000 {
		t.Errorf("peak %d, ideal %d", load.Peak(), load.Ideal())
	}
	heavyMinutes := map[int]int{}
	for _, m := range placed {
		if m.Weight == 2000 {
			spec, _ := m.Parse()
			heavyMinutes[spec.MinutesOfDay()[0]]++
		}
	}
	for minute, n := range heavyMinutes {
		if n > 1 {
			t.Errorf("minute %d holds %d heavy members", minute, n)
		}
	}
}

// TestZonesCountInUTC: a daily member in a zone an hour ahead of UTC is
// counted an hour earlier, so two members at the same UTC minute collide.
func TestZonesCountInUTC(t *testing.T) {
	amsterdam, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		t.Fatal(err)
	}
	a := testMember("a/x", "0 13 * * *")
	a.Parser.Location = amsterdam
	load := loadOf(t, []Member{a})
	if load[12*60] != 1 {
		t.Fatalf("13:00 in Amsterdam in November is not counted at 12:00 UTC")
	}
	choices, err := Assign(load, testMember("b/y", "0 H(11-13) * * *"), balanceNow)
	if err != nil {
		t.Fatal(err)
	}
	if choices[0] == 1 {
		t.Errorf("b/y was placed at 12:00 UTC, on top of a/x")
	}
}

// TestSpansBalanceRunsInFlight: with spans the load counts a run in every
// minute it is in flight (a run from :58 for 5 minutes wraps into the next
// hour), members of one duration added one at a time keep the peak of runs
// in flight within one of the ideal, and for members of mixed durations
// balancing runs in flight gives a lower peak of them than balancing
// starts (the two placements of the same members compared).
func TestSpansBalanceRunsInFlight(t *testing.T) {
	wrapping := testMember("a/x", "58 * * * *")
	wrapping.Span = 5
	load := loadOf(t, []Member{wrapping})
	if load[58] != 1 || load[62] != 1 || load[63] != 0 || load[57] != 0 || load.Total() != 5*24 {
		t.Fatalf("a 5-minute run from :58 counts in %v…, total %d", load[56:64], load.Total())
	}

	for _, span := range []int{3, 10, 25} {
		var members []Member
		for i := range 40 {
			m := member(i, "H * * * *")
			m.Span = span
			members = append(members, m)
		}
		if load := loadOf(t, place(t, members)); load.Peak() > load.Ideal()+1 {
			t.Errorf("40 hourly runs of %d minutes: %d in flight at the peak, ideal %d", span, load.Peak(), load.Ideal())
		}
	}

	// 8 runs of 20 minutes and 24 of 2 minutes, hourly: 208 run-minutes an
	// hour, 3.5 in flight on average.
	var mixed []Member
	for i := range 32 {
		m := member(i, "H * * * *")
		m.Span = 2
		if i%4 == 0 {
			m.Span = 20
		}
		mixed = append(mixed, m)
	}
	byRuns := loadOf(t, place(t, mixed))
	startsOnly := slices.Clone(mixed)
	for i := range startsOnly {
		startsOnly[i].Span = 1
	}
	placedByStarts := place(t, startsOnly)
	for i := range placedByStarts {
		placedByStarts[i].Span = mixed[i].Span // the same runs, placed by their starts
	}
	byStarts := loadOf(t, placedByStarts)
	if byRuns.Peak() > byRuns.Ideal()+1 || byRuns.Peak() >= byStarts.Peak() {
		t.Errorf("runs in flight at the peak: %d balancing them, %d balancing starts; ideal %d", byRuns.Peak(), byStarts.Peak(), byRuns.Ideal())
	}
	t.Logf("mixed durations, runs in flight at the peak: %d balancing them, %d balancing starts, ideal %d", byRuns.Peak(), byStarts.Peak(), byRuns.Ideal())
}
