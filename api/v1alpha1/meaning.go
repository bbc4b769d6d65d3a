package v1alpha1

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/ontime-dev/ontime/pkg/cron"
)

// The meaning of a spec is worked out here, once, for every side that needs
// it: the admission webhook, the planner, the ScheduledJob controller's
// spread placement and the CronJob warm-up controller. None of them builds
// a cron.Parser for a spec or applies a default of its own, so that what
// the webhook admits is what the controller runs
// (test/layout's TestSchedulesAreReadInOnePlace).

// Meaning is what a ScheduledJob's spec (or an annotated CronJob's) means,
// defaults applied.
// +kubebuilder:object:generate=false
type Meaning struct {
	// Location is the zone runs are computed and named in: a TZ= prefix
	// of the schedule, else spec.timeZone, else UTC.
	Location *time.Location
	// Schedule is the parsed spec.schedule; nil for a runAt ScheduledJob,
	// for spec.schedules, and when the schedule cannot be read.
	Schedule *cron.Spec
	// Schedules are the parsed entries of spec.schedules, in order; nil
	// without it, and when one cannot be read.
	Schedules []*cron.Spec
	// RunAt is spec.runAt; zero for a schedule.
	RunAt time.Time
	// WarmUp is the warm-up with its defaults; nil without one. A
	// ScheduledJob's has the API's defaults: the controller applies its
	// flags' with WarmUp.SettingsWith.
	WarmUp *WarmUpSettings
}

// Effective is the schedule with its H fields replaced by their values, or
// "" for runAt and a schedule that cannot be read.
func (m Meaning) Effective() string { return m.each((*cron.Spec).Effective, "; ") }

// Describe says in words when the schedule runs ("" for runAt and a
// schedule that cannot be read).
func (m Meaning) Describe() string { return m.each((*cron.Spec).Describe, "; and ") }

// each is f of the schedule, or of every entry of spec.schedules joined
// by sep ("" for runAt and a schedule that cannot be read).
func (m Meaning) each(f func(*cron.Spec) string, sep string) string {
	if m.Schedule != nil {
		return f(m.Schedule)
	}
	parts := make([]string, len(m.Schedules))
	for i, s := range m.Schedules {
		parts[i] = f(s)
	}
	return strings.Join(parts, sep)
}

// Scheduled reports whether runs follow a schedule (spec.schedule or
// spec.schedules) that could be read.
func (m Meaning) Scheduled() bool { return m.Schedule != nil || len(m.Schedules) > 0 }

// Runs are the run times: the schedule, anchored at anchor for @every
// (the last run, or the creation, as the CronJob controller counts), or
// the one runAt. Nil when the schedule cannot be read.
func (m Meaning) Runs(anchor time.Time) cron.Runs {
	switch {
	case !m.RunAt.IsZero():
		return once{at: m.RunAt}
	case m.Schedule != nil:
		return m.Schedule.Anchored(anchor)
	case len(m.Schedules) > 0:
		runs := make([]cron.Runs, len(m.Schedules))
		for i, s := range m.Schedules {
			runs[i] = s // no @every in a list: nothing to anchor
		}
		return cron.Union(runs...)
	}
	return nil
}

// RunsSince are the run times of an object created at created whose last
// run was scheduled at lastSchedule (nil if none): @every counts from the
// last run, or the creation, as the CronJob controller counts.
func (m Meaning) RunsSince(created time.Time, lastSchedule *time.Time) cron.Runs {
	if lastSchedule != nil {
		return m.Runs(*lastSchedule)
	}
	return m.Runs(created)
}

// once is a runAt: one run.
// +kubebuilder:object:generate=false
type once struct{ at time.Time }

func (o once) Prev(t time.Time) time.Time {
	if t.Before(o.at) {
		return time.Time{}
	}
	return o.at
}

func (o once) Next(t time.Time) time.Time {
	if t.Before(o.at) {
		return o.at
	}
	return time.Time{}
}

// SpecError is a field of a spec that cannot be followed.
// +kubebuilder:object:generate=false
type SpecError struct {
	// Field is the field's path, such as "spec.timeZone".
	Field string
	// Value is the field's value.
	Value string
	// Reason is the Ready condition's reason for it: ReasonUnknownTimeZone
	// or ReasonInvalidSchedule.
	Reason string
	// Detail says what is wrong, without repeating the field or value.
	Detail string
	// Err is the cause; a *cron.ParseError for a schedule.
	Err error
}

func (e *SpecError) Error() string { return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Detail) }

func (e *SpecError) Unwrap() error { return e.Err }

// SpecErrors lists every SpecError in err, in the order found (the time
// zone before the schedule).
func SpecErrors(err error) []*SpecError {
	var found []*SpecError
	var one *SpecError
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			found = append(found, SpecErrors(e)...)
		}
	} else if errors.As(err, &one) {
		found = append(found, one)
	}
	return found
}

// Meaning returns what the ScheduledJob's spec means. choices are the values
// of the schedule's H terms where a Balanced spread placed it (see
// PlacementChoices); nil takes them from the hash of HashKey. An error lists
// every field that cannot be read (SpecErrors): the time zone, and the
// schedule, read in UTC when the zone is unknown so that both are reported.
// The warm-up and spread settings are filled in regardless.
func (sj *ScheduledJob) Meaning(choices []int) (Meaning, error) {
	m := Meaning{Location: time.UTC}
	if w := sj.Spec.WarmUp; w != nil {
		settings := w.Settings()
		m.WarmUp = &settings
	}
	r := readingOf(KindScheduledJob, sj.HashKey(), sj.Spec.DSTPolicy)
	r.choices = choices
	if sj.Spec.RunAt != nil {
		m.RunAt = sj.Spec.RunAt.Time
		return m, errors.Join(r.read(&m, sj.Spec.TimeZone, nil)...)
	}
	if len(sj.Spec.Schedules) > 0 {
		return m, errors.Join(r.readList(&m, sj.Spec.TimeZone, sj.Spec.Schedules)...)
	}
	errs := r.read(&m, sj.Spec.TimeZone, &sj.Spec.Schedule)
	if m.Schedule != nil && m.Schedule.Interval() > 0 && m.Schedule.Interval() < time.Minute {
		// Job names have minute resolution: such runs would share one.
		errs = append(errs, &SpecError{Field: "spec.schedule", Value: sj.Spec.Schedule, Reason: ReasonInvalidSchedule, Err: errSubMinute,
			Detail: "@every runs less than a minute apart would share a Job name (names have minute resolution); use @every 1m or more"})
		m.Schedule = nil
	}
	return m, errors.Join(errs...)
}

// reading is how one kind of object's schedule is read.
// +kubebuilder:object:generate=false
type reading struct {
	dialect cron.Dialect
	policy  cron.DSTPolicy
	key     string
	choices []int
}

// The kinds of objects whose schedules ontime reads.
const (
	KindScheduledJob = "ScheduledJob"
	KindCronJob      = "CronJob"
)

// readingOf is how a schedule of kind is read: a ScheduledJob's in the
// extended dialect under its spec.dstPolicy, H seeded by key (its
// HashKey); anything else as the CronJob controller reads a CronJob's, in
// the Kubernetes dialect and DST policy.
func readingOf(kind, key string, policy DSTPolicy) reading {
	if kind == KindScheduledJob {
		return reading{dialect: cron.Extended, policy: policy.CronPolicy(), key: key}
	}
	return reading{dialect: cron.Kubernetes, policy: cron.DSTKubernetes, key: key}
}

// parser reads schedules in loc (nil: UTC) this way.
func (r reading) parser(loc *time.Location) cron.Parser {
	return cron.Parser{Dialect: r.dialect, Location: loc, DSTPolicy: r.policy, HashKey: r.key, HashChoices: r.choices}
}

// ScheduleParser is how a schedule of kind (KindScheduledJob or
// KindCronJob) is read, as Meaning and CronJobMeaning read it, for what
// reads schedules without their object: the admission webhook's
// crowded-minute index, the spread ledgers' members and ontime spread -f.
// key seeds H fields (a ScheduledJob's HashKey), timeZone is spec.timeZone
// ("" for UTC) and dstPolicy a ScheduledJob's spec.dstPolicy ("" for the
// default). An unknown zone is a *SpecError.
func ScheduleParser(kind, key, timeZone, dstPolicy string) (cron.Parser, error) {
	r := readingOf(kind, key, DSTPolicy(dstPolicy))
	if timeZone == "" {
		return r.parser(nil), nil
	}
	loc, err := LoadTimeZone(timeZone)
	if err != nil {
		return cron.Parser{}, &SpecError{Field: "spec.timeZone", Value: timeZone, Reason: ReasonUnknownTimeZone, Detail: err.Error(), Err: err}
	}
	return r.parser(loc), nil
}

// read fills in m's zone from timeZone, and its schedule from
// schedule (nil: a runAt, nothing to parse). It returns a *SpecError for
// each of the two that cannot be read; a schedule is read in UTC when the
// zone is unknown, so that both are reported.
func (r reading) read(m *Meaning, timeZone *string, schedule *string) []error {
	var errs []error
	if timeZone != nil {
		loc, err := LoadTimeZone(*timeZone)
		if err != nil {
			errs = append(errs, &SpecError{Field: "spec.timeZone", Value: *timeZone, Reason: ReasonUnknownTimeZone, Detail: err.Error(), Err: err})
		} else {
			m.Location = loc
		}
	}
	if schedule == nil {
		return errs
	}
	parsed, err := parseSchedule(r.parser(m.Location), "spec.schedule", *schedule)
	if err != nil {
		return append(errs, err)
	}
	m.Schedule, m.Location = parsed, parsed.Location()
	return errs
}

// readList fills in m's zone from timeZone and its schedules from the
// entries of spec.schedules, returning a *SpecError for the zone and for
// each entry that cannot be read. Every entry runs in the one zone: a TZ=
// prefix, and @every (whose runs count from the last run, which a list
// does not keep per entry), are refused.
func (r reading) readList(m *Meaning, timeZone *string, schedules []string) []error {
	errs := r.read(m, timeZone, nil)
	parsed := make([]*cron.Spec, 0, len(schedules))
	for i, schedule := range schedules {
		field := fmt.Sprintf("spec.schedules[%d]", i)
		spec, err := parseSchedule(r.parser(m.Location), field, schedule)
		switch {
		case err != nil:
			errs = append(errs, err)
		case strings.Contains(schedule, "TZ"):
			errs = append(errs, &SpecError{Field: field, Value: schedule, Reason: ReasonInvalidSchedule, Err: errListEntry,
				Detail: "cannot use TZ or CRON_TZ in a list entry: every entry runs in spec.timeZone"})
		case spec.Interval() > 0:
			errs = append(errs, &SpecError{Field: field, Value: schedule, Reason: ReasonInvalidSchedule, Err: errListEntry,
				Detail: "@every is not allowed in spec.schedules: its runs count from the last run, which a list does not keep per entry; write it as a calendar schedule, or use spec.schedule"})
		default:
			parsed = append(parsed, spec)
		}
	}
	if len(parsed) == len(schedules) {
		m.Schedules = parsed
	}
	return errs
}

var errListEntry = errors.New("not allowed in spec.schedules")

// parseSchedule parses a schedule, the value of field; its error is a
// *SpecError.
func parseSchedule(parser cron.Parser, field, schedule string) (*cron.Spec, error) {
	parsed, err := parser.Parse(schedule)
	if err != nil {
		detail := err.Error()
		var parseErr *cron.ParseError
		if errors.As(err, &parseErr) {
			detail = parseErr.Detail() // leaves out the schedule, which Error names
		}
		return nil, &SpecError{Field: field, Value: schedule, Reason: ReasonInvalidSchedule, Detail: detail, Err: err}
	}
	return parsed, nil
}

var errSubMinute = errors.New("runs less than a minute apart")

// HashKey is the key that seeds the H fields of the ScheduledJob's
// schedule: its namespace/name, so a re-created object keeps its minutes.
// An object not yet named (generateName) uses its prefix: admission only
// needs to know that the schedule is valid.
func (sj *ScheduledJob) HashKey() string {
	if sj.Name == "" {
		return sj.Namespace + "/" + sj.GenerateName
	}
	return sj.Namespace + "/" + sj.Name
}

// RecordedPlacement is the placement status.spread records for the
// ScheduledJob's current schedule and Balanced group; nil when it records
// none, or one for another schedule or group.
func (sj *ScheduledJob) RecordedPlacement() *SpreadStatus {
	s, settings := sj.Status.Spread, sj.SpreadOf()
	if s == nil || settings.Strategy != SpreadBalanced || s.Group != settings.Group || s.Schedule != sj.Spec.Schedule {
		return nil
	}
	return s
}

// PlacementChoices are a placement's choices for Meaning: nil for no
// placement.
func PlacementChoices(placement *SpreadStatus) []int {
	if placement == nil {
		return nil
	}
	return placement.Choices
}

// WarmUpSettings are a warm-up's settings, defaults applied.
// +kubebuilder:object:generate=false
type WarmUpSettings struct {
	Strategy WarmUpStrategy
	// Lead is the lead; with AutoLead, the one chosen for the next
	// warm-up (warmup.ChooseLead), between MinLead and MaxLead.
	Lead              time.Duration
	AutoLead          bool
	MinLead, MaxLead  time.Duration
	PriorityClassName string
	Image             string
	// Hold bounds how long placeholders outlive the scheduled time.
	Hold time.Duration
}

// ControllerDefaults are the defaults a controller sets for every owner
// with its flags, in place of the API's.
//
// +kubebuilder:object:generate=false
type ControllerDefaults struct {
	// PlaceholderImage is what placeholder containers run when the owner
	// names none (--placeholder-image): a mirror of the pause image for
	// clusters that cannot pull registry.k8s.io. "" is
	// DefaultPlaceholderImage.
	PlaceholderImage string
	// PlaceholderPriorityClass is the PriorityClass of placeholder pods
	// whose owner names none (--placeholder-priority-class): a class a
	// policy-bound cluster allows. "" is DefaultPlaceholderPriorityClass.
	PlaceholderPriorityClass string
}

// Settings applies the documented defaults to a spec.warmUp.
func (w *WarmUp) Settings() WarmUpSettings { return w.SettingsWith(ControllerDefaults{}) }

// SettingsWith applies the defaults to a spec.warmUp: what the spec sets,
// else the controller's, else the API's.
func (w *WarmUp) SettingsWith(defaults ControllerDefaults) WarmUpSettings {
	s := WarmUpSettings{
		Strategy:          w.Strategy,
		Lead:              w.Lead.Duration.Duration,
		AutoLead:          w.Lead.Auto,
		MinLead:           DefaultMinLead,
		MaxLead:           DefaultMaxLead,
		PriorityClassName: cmp.Or(defaults.PlaceholderPriorityClass, DefaultPlaceholderPriorityClass),
		Image:             cmp.Or(defaults.PlaceholderImage, DefaultPlaceholderImage),
		Hold:              DefaultHoldAfterSchedule,
	}
	if s.Strategy == "" {
		s.Strategy = WarmUpPlaceholder
	}
	if w.MinLead != nil {
		s.MinLead = w.MinLead.Duration
	}
	if w.MaxLead != nil {
		s.MaxLead = w.MaxLead.Duration
	}
	if s.AutoLead {
		// Until a lead is chosen from what was measured: the first
		// warm-up's.
		s.Lead = s.MaxLead
	}
	if p := w.Placeholder; p != nil {
		if p.PriorityClassName != "" {
			s.PriorityClassName = p.PriorityClassName
		}
		if p.Image != "" {
			s.Image = p.Image
		}
		if p.HoldAfterSchedule != nil {
			s.Hold = min(p.HoldAfterSchedule.Duration, MaxHoldAfterSchedule)
		}
	}
	return s
}

// CronJobMeaning returns what a batch/v1 CronJob means to ontime: its
// warm-up, from its annotations (CronJobWarmUp: nil without
// WarmUpLeadAnnotation, and then nothing else is read), and its runs as
// the CronJob controller computes them: robfig/cron's language and
// daylight-saving behavior (the Kubernetes dialect and DST policy), in
// spec.timeZone, else UTC (the zone of kube-controller-manager in most
// clusters). An error names the annotation, time zone or schedule that
// cannot be read. defaults are the controller's: a CronJob has no field to
// set them.
func CronJobMeaning(cj *batchv1.CronJob, defaults ControllerDefaults) (Meaning, error) {
	m := Meaning{Location: time.UTC}
	settings, err := CronJobWarmUp(cj, defaults)
	if err != nil {
		return m, err
	}
	if settings == nil {
		return m, nil
	}
	m.WarmUp = settings
	r := readingOf(KindCronJob, cj.Namespace+"/"+cj.Name, "")
	if errs := r.read(&m, cj.Spec.TimeZone, &cj.Spec.Schedule); len(errs) > 0 {
		return m, errs[0]
	}
	return m, nil
}
