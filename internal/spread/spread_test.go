package spread

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ontime-dev/ontime/pkg/cron"
)

// startsPerMinute fires every assignment over one day and counts starts per
// minute of the day; it also checks each schedule fires exactly every
// `every`.
func startsPerMinute(t *testing.T, assignments []Assignment, every time.Duration) map[int]int {
	t.Helper()
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	counts := map[int]int{}
	for _, a := range assignments {
		s, err := cron.Parse(a.Schedule)
		if err != nil {
			t.Fatalf("key %q: schedule %q is not Kubernetes-valid: %v", a.Key, a.Schedule, err)
		}
		previous := time.Time{}
		for at := s.Next(day.Add(-time.Second)); at.Before(day.Add(48 * time.Hour)); at = s.Next(at) {
			if !previous.IsZero() && at.Sub(previous) != every {
				t.Fatalf("key %q: %q fires at %v then %v, not every %v", a.Key, a.Schedule, previous, at, every)
			}
			previous = at
			if at.Before(day.Add(24 * time.Hour)) {
				counts[int(at.Sub(day)/time.Minute)]++
			}
		}
	}
	return counts
}

func TestEvenPeakIsMinimal(t *testing.T) {
	everies := []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour,
		2 * time.Hour, 3 * time.Hour, 8 * time.Hour, 24 * time.Hour}
	for _, every := range everies {
		for _, n := range []int{1, 2, 6, 59, 60, 61, 100, 1000} {
			// Unevenly distributed ids: most are small, a few are huge.
			keys := make([]string, n)
			for i := range keys {
				keys[i] = strconv.Itoa(i * i * i)
			}
			assignments, err := Schedules(every, keys, Even, testRead)
			if err != nil {
				t.Fatal(err)
			}
			runsPerHour := float64(time.Hour) / float64(every)
			limit := int(ceilDiv(float64(n)*runsPerHour, 60))
			for minute, count := range startsPerMinute(t, assignments, every) {
				if count > limit {
					t.Fatalf("every %v, %d keys: minute %d holds %d starts, more than ceil(N·runs-per-hour/60) = %d", every, n, minute, count, limit)
				}
			}
		}
	}
}

func ceilDiv(a, b float64) float64 {
	q := a / b
	if q != float64(int(q)) {
		return float64(int(q) + 1)
	}
	return q
}

func TestEvenIsDeterministicAndOrderFree(t *testing.T) {
	keys := []string{"7", "20", "863", "195", "81", "3"}
	first, err := Schedules(30*time.Minute, keys, Even, testRead)
	if err != nil {
		t.Fatal(err)
	}
	reversed := []string{"3", "81", "195", "863", "20", "7"}
	second, _ := Schedules(30*time.Minute, reversed, "balanced", testRead) // the name it had, still accepted
	byKey := map[string]string{}
	for _, a := range second {
		byKey[a.Key] = a.Schedule
	}
	for i, a := range first {
		if a.Key != keys[i] {
			t.Errorf("assignment %d is for %q, want the input order (%q)", i, a.Key, keys[i])
		}
		if byKey[a.Key] != a.Schedule {
			t.Errorf("key %q: %q in one order, %q in another", a.Key, a.Schedule, byKey[a.Key])
		}
	}
	// Six keys every 30 minutes: one per 5-minute share, centered.
	minutes := map[string]bool{}
	for _, a := range first {
		minutes[strings.Fields(a.Schedule)[0]] = true
	}
	for _, want := range []string{"2,32", "7,37", "12,42", "17,47", "22,52", "27,57"} {
		if !minutes[want] {
			t.Errorf("no key got minutes %s: %v", want, first)
		}
	}
}

func TestHashDependsOnlyOnTheKey(t *testing.T) {
	for _, every := range []time.Duration{time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour} {
		few, err := Schedules(every, []string{"a", "b"}, Hash, testRead)
		if err != nil {
			t.Fatal(err)
		}
		many, _ := Schedules(every, []string{"z", "b", "y", "a", "x"}, Hash, testRead)
		if few[0].Schedule != many[3].Schedule || few[1].Schedule != many[1].Schedule {
			t.Errorf("every %v: adding keys moved a or b: %v vs %v", every, few, many)
		}
		startsPerMinute(t, many, every)
	}
}

// TestHashAgreesWithH: a key's hash schedule fires when "H/30 * * * *"
// with that key fires.
func TestHashAgreesWithH(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 50; i++ {
		key := fmt.Sprintf("team-%d/job-%d", rng.IntN(100), rng.IntN(1000))
		for every, expression := range map[time.Duration]string{30 * time.Minute: "H/30 * * * *", 4 * time.Hour: "H H/4 * * *"} {
			got, err := Schedules(every, []string{key}, Hash, testRead)
			if err != nil {
				t.Fatal(err)
			}
			h, _ := cron.Parser{Dialect: cron.Extended, HashKey: key}.Parse(expression)
			s, _ := cron.Parse(got[0].Schedule)
			from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
			for range 20 {
				if a, b := h.Next(from), s.Next(from); !a.Equal(b) {
					t.Fatalf("key %q: %q fires %v, its spread schedule %q fires %v", key, expression, a, got[0].Schedule, b)
				}
				from = h.Next(from)
			}
		}
	}
}

func TestSchedulesRejects(t *testing.T) {
	tests := []struct {
		every    time.Duration
		keys     []string
		strategy Strategy
		message  string
	}{
		{45 * time.Minute, []string{"a"}, Even, "every 45m0s: one cron schedule fires exactly every D only when"},
		{90 * time.Minute, []string{"a"}, Even, "divides an hour"},
		{5 * time.Hour, []string{"a"}, Even, "whole hours dividing a day"},
		{30 * time.Second, []string{"a"}, Even, "whole number of minutes"},
		{48 * time.Hour, []string{"a"}, Even, "from 1m to 24h"},
		{time.Hour, nil, Even, "at least one key"},
		{time.Hour, []string{"a", "a"}, Even, `"a" appears twice`},
		{time.Hour, []string{"a", ""}, Even, "a key is empty"},
		{time.Hour, []string{"a"}, "random", `strategy "random"`},
	}
	for _, tc := range tests {
		_, err := Schedules(tc.every, tc.keys, tc.strategy, testRead)
		if err == nil || !strings.Contains(err.Error(), tc.message) {
			t.Errorf("Schedules(%v, %q, %q) = %v, want an error containing %q", tc.every, tc.keys, tc.strategy, err, tc.message)
		}
	}
}
