package cron

import "time"

// Runs finds runs both ways: a *Spec, or an @every Spec counted from a
// start (Spec.Anchored).
type Runs interface {
	// Next returns the first run strictly after t, or the zero time.
	Next(t time.Time) time.Time
	// Prev returns the last run at or before t, or the zero time.
	Prev(t time.Time) time.Time
}

// Anchored returns the runs of s counted from anchor. For an @every
// schedule they are anchor+every, anchor+2·every, …, which is how the
// Kubernetes CronJob controller counts them (from the last run, or from the
// CronJob's creation), and Prev finds them too; a calendar schedule is s
// itself.
func (s *Spec) Anchored(anchor time.Time) Runs {
	if s.every == 0 {
		return s
	}
	return everyChain{first: s.Next(anchor), every: s.every}
}

// everyChain is an anchored @every schedule: runs at first, first+every, …
type everyChain struct {
	first time.Time
	every time.Duration
}

func (c everyChain) Prev(t time.Time) time.Time {
	if t.Before(c.first) {
		return time.Time{}
	}
	return c.first.Add(t.Sub(c.first) / c.every * c.every)
}

func (c everyChain) Next(t time.Time) time.Time {
	if t.Before(c.first) {
		return c.first
	}
	return c.first.Add((t.Sub(c.first)/c.every + 1) * c.every)
}

// Union returns the runs of every one of runs: a time at which several
// run is one run.
func Union(runs ...Runs) Runs {
	if len(runs) == 1 {
		return runs[0]
	}
	return union(runs)
}

// union is the runs of several schedules.
type union []Runs

// Next is the earliest of the schedules' next runs.
func (u union) Next(t time.Time) time.Time {
	var next time.Time
	for _, r := range u {
		if n := r.Next(t); !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return next
}

// Prev is the latest of the schedules' previous runs.
func (u union) Prev(t time.Time) time.Time {
	var prev time.Time
	for _, r := range u {
		if p := r.Prev(t); p.After(prev) {
			prev = p
		}
	}
	return prev
}
