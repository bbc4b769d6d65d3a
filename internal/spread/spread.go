// Package spread gives each of many jobs that should run "about every D" its
// own schedule, firing exactly every D, so that they do not all start at the
// same minute. It is pure: the same input always gives the same output.
package spread

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Strategy chooses how keys are placed in the period.
type Strategy string

const (
	// Even spaces the keys evenly over the period, in an order fixed by a
	// hash of each key, so that no minute holds more than
	// ceil(N·runs-per-hour/60) starts for N keys however the keys are
	// distributed. Adding a key may move the others. (Not the controller's
	// Balanced spread, v1alpha1.SpreadBalanced, which places each newcomer
	// where its group is quietest and never moves the others.)
	Even Strategy = "even"
	// balancedAlias is Even's name before it was renamed, still accepted.
	balancedAlias Strategy = "balanced"
	// Hash places each key by its Jenkins H hash alone: a key's schedule
	// depends only on the key, so adding or removing keys never moves
	// another. It is what "H/30 * * * *" with the key as hash key gives.
	Hash Strategy = "hash"
)

// Assignment is one key's schedule.
type Assignment struct {
	Key      string `json:"key"`
	Schedule string `json:"schedule"`
}

// period is how a duration is laid out: slots are the possible starting
// positions, in minutes from the start of the period.
type period struct {
	every time.Duration
	slots int
}

// Schedules returns one schedule per key, in the order given, each firing
// exactly every `every`. every must divide an hour (1m, 2m, 3m, 4m, 5m, 6m,
// 10m, 12m, 15m, 20m, 30m, 60m) or be whole hours dividing a day (2h, 3h,
// 4h, 6h, 8h, 12h, 24h); other intervals, such as 45m or 90m, are not one
// cron schedule.
//
// read says how a ScheduledJob reads the hashed schedules of the Hash
// strategy.
func Schedules(every time.Duration, keys []string, strategy Strategy, read ScheduleReader) ([]Assignment, error) {
	p, err := newPeriod(every)
	if err != nil {
		return nil, err
	}
	if err := checkKeys(keys); err != nil {
		return nil, err
	}
	var slots []int
	switch strategy {
	case Even, balancedAlias:
		slots = evenSlots(keys, p.slots)
	case Hash:
		if slots, err = hashSlots(keys, p, read); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("strategy %q: must be %q or %q", strategy, Even, Hash)
	}
	assignments := make([]Assignment, len(keys))
	for i, key := range keys {
		assignments[i] = Assignment{Key: key, Schedule: p.schedule(slots[i])}
	}
	return assignments, nil
}

func newPeriod(every time.Duration) (period, error) {
	minutes := int(every / time.Minute)
	switch {
	case every%time.Minute != 0 || minutes < 1 || minutes > 24*60:
		return period{}, fmt.Errorf("every %v: must be a whole number of minutes from 1m to 24h", every)
	case 60%minutes == 0:
		return period{every: every, slots: minutes}, nil
	case minutes%60 == 0 && 24%(minutes/60) == 0:
		return period{every: every, slots: minutes}, nil
	}
	return period{}, fmt.Errorf("every %v: one cron schedule fires exactly every D only when D divides an hour "+
		"(1m 2m 3m 4m 5m 6m 10m 12m 15m 20m 30m 1h) or is whole hours dividing a day (2h 3h 4h 6h 8h 12h 24h)", every)
}

func checkKeys(keys []string) error {
	if len(keys) == 0 {
		return fmt.Errorf("keys: give at least one key")
	}
	seen := make(map[string]bool, len(keys))
	for _, key := range keys {
		if key == "" {
			return fmt.Errorf("keys: a key is empty")
		}
		if seen[key] {
			return fmt.Errorf("keys: %q appears twice", key)
		}
		seen[key] = true
	}
	return nil
}

// evenSlots orders the keys by a hash (so neither the order they were
// given in nor how their values cluster matters) and spaces them evenly,
// each in the middle of its share of the period: key i of N gets slot
// floor((2i+1)·S / 2N). Evenly spaced points put floor(N/S) or ceil(N/S)
// keys in every slot, which is the smallest possible peak.
func evenSlots(keys []string, slots int) []int {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if ha, hb := keyHash(keys[a]), keyHash(keys[b]); ha != hb {
			if ha < hb {
				return -1
			}
			return 1
		}
		return strings.Compare(keys[a], keys[b])
	})
	out := make([]int, len(keys))
	n := len(keys)
	for rank, i := range order {
		out[i] = (2*rank + 1) * slots / (2 * n)
	}
	return out
}

func keyHash(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// hashSlots asks the schedule engine where Jenkins' H puts each key, so a
// key lands where "H/D * * * *" (or "H H/k * * *") with that hash key fires.
func hashSlots(keys []string, p period, read ScheduleReader) ([]int, error) {
	expression := p.hashExpression()
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // any midnight: the pattern repeats daily
	out := make([]int, len(keys))
	for i, key := range keys {
		parser, err := read(KindScheduledJob, key, "", "")
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		s, err := parser.Parse(expression)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		first := s.Next(day.Add(-time.Second))
		out[i] = int(first.Sub(day) / time.Minute)
	}
	return out, nil
}

// hashExpression is the H form of the period.
func (p period) hashExpression() string {
	minutes := int(p.every / time.Minute)
	switch {
	case minutes == 1:
		return "* * * * *"
	case minutes < 60:
		return "H/" + strconv.Itoa(minutes) + " * * * *"
	case minutes == 60:
		return "H * * * *"
	case minutes == 24*60:
		return "H H * * *"
	}
	return "H H/" + strconv.Itoa(minutes/60) + " * * *"
}

// schedule writes the schedule that starts at slot (minutes into the
// period) and repeats every period. Fields are explicit values (never */n),
// so that every key's schedule follows the same DST rules.
func (p period) schedule(slot int) string {
	minutes := int(p.every / time.Minute)
	if minutes == 1 {
		return "* * * * *"
	}
	if minutes <= 60 {
		return repeating(slot, minutes, 59) + " * * * *"
	}
	return strconv.Itoa(slot%60) + " " + repeating(slot/60, minutes/60, 23) + " * * *"
}

// repeating writes start, start+step, … up to limit: a list when short,
// else a range with a step.
func repeating(start, step, limit int) string {
	var values []string
	for v := start; v <= limit; v += step {
		values = append(values, strconv.Itoa(v))
	}
	if len(values) <= 4 {
		return strings.Join(values, ",")
	}
	return values[0] + "-" + values[len(values)-1] + "/" + strconv.Itoa(step)
}
