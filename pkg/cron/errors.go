package cron

import "strconv"

// ErrorKind classifies a ParseError, so that callers can react to the kind of
// mistake (an admission webhook picks a reason, a controller an event)
// without matching the error's text.
type ErrorKind int

const (
	// ErrSyntax is text that is not a schedule: the wrong number of fields, a
	// word where a number belongs, an unknown descriptor, stray characters.
	ErrSyntax ErrorKind = iota + 1
	// ErrRange is a value, range or step outside what its field allows, or a
	// field that selects nothing.
	ErrRange
	// ErrNeverFires is a schedule whose fields are valid but together name
	// no time that exists ("0 0 30 2 *").
	ErrNeverFires
	// ErrUnknownTimeZone is a TZ= or CRON_TZ= prefix that names no zone in
	// the zone database.
	ErrUnknownTimeZone
	// ErrExtendedSyntax is H, L, W, # or 7 for Sunday in the Kubernetes
	// dialect, which does not have them.
	ErrExtendedSyntax
	// ErrMissingHashKey is an H field parsed without a Parser.HashKey.
	ErrMissingHashKey
)

// String names the kind in lower case, as in "never fires".
func (k ErrorKind) String() string {
	switch k {
	case ErrSyntax:
		return "syntax"
	case ErrRange:
		return "range"
	case ErrNeverFires:
		return "never fires"
	case ErrUnknownTimeZone:
		return "unknown time zone"
	case ErrExtendedSyntax:
		return "extended syntax"
	case ErrMissingHashKey:
		return "missing hash key"
	}
	return "ErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// ParseError describes a schedule that cannot be used. Kind says what is
// wrong; Field names the part of the schedule at fault ("minute", "hour",
// "day-of-month", "month", "day-of-week", "time zone", "descriptor", or ""
// for the schedule as a whole), Value is the offending text and Offset its
// byte offset in Spec, so that an admission webhook or CLI can point at the
// column. Inspect it with errors.As, never by its text.
type ParseError struct {
	Kind   ErrorKind
	Spec   string
	Field  string
	Value  string
	Offset int
	Reason string
}

// Error is "cron: " followed by Detail, naming the whole schedule when no
// single field is at fault.
func (e *ParseError) Error() string {
	if e.Field == "" {
		return "cron: " + strconv.Quote(e.Value) + ": " + e.Reason
	}
	return "cron: " + e.Detail()
}

// Detail is the error for a caller that shows the schedule itself already,
// as a webhook's field.Invalid or an event quoting spec.schedule does: the
// field and value at fault, when that is not the whole schedule, and the
// reason, so that the schedule is not printed twice.
func (e *ParseError) Detail() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + " " + strconv.Quote(e.Value) + ": " + e.Reason
}
