package cron

import (
	"slices"
	"strings"
)

// HashTerm is one H term of a schedule and the value it took.
type HashTerm struct {
	// Field is the field the term is in: "minute", "hour", "day-of-month",
	// "month" or "day-of-week".
	Field string
	// Offset is the term's byte offset in the schedule, and Text the term
	// as written, such as "H/15".
	Offset int
	Text   string
	// Choices is how many values the term can take: the size of its range
	// for H and H(a-b), the step for H/n and H(a-b)/n (the first value).
	Choices int
	// Choice is the one it took, from 0 to Choices-1: the hashed one, or
	// Parser.HashChoices'.
	Choice int
	// Effective is the term with its value in place, in the Kubernetes
	// dialect: "37" for H, "7-59/15" for H/15.
	Effective string
}

// HashTerms returns the schedule's H terms in the order they drew their
// values (minute, hour, day of month, month, day of week; left to right
// within a field), or nil when it has none.
func (s *Spec) HashTerms() []HashTerm { return slices.Clone(s.hashTerms) }

// Effective returns the schedule as written with every H term replaced by
// the values it took, so "H/15 H * * *" with its key might be
// "7-59/15 13 * * *": a schedule any cron reads, that fires exactly when
// this one does. Without H terms it is String().
func (s *Spec) Effective() string {
	if len(s.hashTerms) == 0 {
		return s.text
	}
	var b strings.Builder
	last := 0
	for _, term := range s.hashTerms {
		b.WriteString(s.text[last:term.Offset])
		b.WriteString(term.Effective)
		last = term.Offset + len(term.Text)
	}
	b.WriteString(s.text[last:])
	return b.String()
}

// MinutesOfDay returns the minutes of the day (0 to 1439, in the
// schedule's own zone) at which the schedule fires on a day it fires, in
// increasing order, or nil for an @every schedule, which has no fixed
// minutes. It is what a balancer counts to know when schedules start
// together.
func (s *Spec) MinutesOfDay() []int {
	if s.every != 0 {
		return nil
	}
	var minutes []int
	for hour := range 24 {
		if s.hour&(1<<uint(hour)) == 0 {
			continue
		}
		for minute := range 60 {
			if s.minute&(1<<uint(minute)) != 0 {
				minutes = append(minutes, hour*60+minute)
			}
		}
	}
	return minutes
}
