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
