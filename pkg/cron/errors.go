package cron

import "strconv"

// ParseError describes a schedule that cannot be used. Field names the part
// of the schedule that is wrong ("minute", "hour", "day-of-month", "month",
// "day-of-week", "time zone", "descriptor", or "" for the schedule as a
// whole), Value is the offending text and Offset its byte offset in Spec, so
// that an admission webhook or CLI can point at the column.
type ParseError struct {
	Spec   string
	Field  string
	Value  string
	Offset int
	Reason string
}

func (e *ParseError) Error() string {
	if e.Field == "" {
		return "cron: " + strconv.Quote(e.Value) + ": " + e.Reason
	}
	return "cron: " + e.Field + " " + strconv.Quote(e.Value) + ": " + e.Reason
}
