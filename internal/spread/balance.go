package spread

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/ontime-dev/ontime/pkg/cron"
)

// Fleet-wide balancing: every schedule in a group writes H where any
// minute would do, and the balancer chooses, for each newcomer, the values
// of its minute and hour H terms that leave the busiest minute of the day
// as quiet as possible: the fewest starts in it, or, for members whose
// Span is their runs' duration, the fewest runs in flight. It is
// incremental and stable by construction: a choice is made once, when a
// schedule joins, from the loads of the others as they are, and nothing
// else is ever moved, except by Rebalance, which the user asks for.

// MinutesPerDay is the number of slots the balancer counts starts in: the
// minutes of a day, in UTC.
const MinutesPerDay = 24 * 60

// maxCandidates bounds the assignments tried for one schedule: minute and
// hour H terms together ("H H * * *") have 1440. A schedule with more
// (several H terms in one field) keeps hashed values for the terms past
// the bound.
const maxCandidates = MinutesPerDay

// Member is one schedule of a balanced group.
type Member struct {
	// Key identifies the member: a ScheduledJob's namespace/name.
	Key string
	// Schedule is the schedule as written, with H terms; Parser reads it
	// as the controller does (its ScheduleReader's answer: dialect, zone,
	// DST policy, the key that seeds H).
	Schedule string
	Parser   cron.Parser
	// Weight is what one start counts for: 1 to balance starts, a run's
	// requested CPU in millicores to balance capacity. Zero counts as 1.
	Weight int64
	// Span is how many minutes, from its start, one run counts in: 1 (or
	// 0) counts its start's minute only, so the balancer spreads starts;
	// a run's duration in minutes counts every minute it is in flight, so
	// the balancer spreads the runs in flight at once, which is what a
	// concurrency group's limit caps.
	Span int
	// Choices are the values the member's H terms took (see
	// cron.Parser.HashChoices); nil for a member not yet placed.
	Choices []int
}

// Parse parses the member's schedule with its choices.
func (m Member) Parse() (*cron.Spec, error) {
	parser := m.Parser
	parser.HashChoices = m.Choices
	return parser.Parse(m.Schedule)
}

// Location is the member's zone; nil is UTC.
func (m Member) Location() *time.Location { return m.Parser.Location }

// ScheduleReader says how a schedule of kind (KindScheduledJob, KindCronJob)
// is read, given the key that seeds its H fields, its spec.timeZone ("" for
// UTC) and a ScheduledJob's spec.dstPolicy ("" for the default). Callers
// pass v1alpha1.ScheduleParser, so that a member's schedule means here what
// it means to the controller; this package does not know the API.
type ScheduleReader func(kind, key, timeZone, dstPolicy string) (cron.Parser, error)

// The kinds a ScheduleReader reads, as the API names them.
const (
	KindScheduledJob = "ScheduledJob"
	KindCronJob      = "CronJob"
)

func (m Member) weight() int64 { return max(m.Weight, 1) }

// span is how many minutes one run counts in, at most a day.
func (m Member) span() int { return min(max(m.Span, 1), MinutesPerDay) }

// occupied are the minutes of the day in which runs starting at these
// minutes are in flight, once per run: a minute two runs share is listed
// twice. With a span of 1 they are the starts.
func occupied(starts []int, span int) []int {
	if span <= 1 {
		return starts
	}
	minutes := make([]int, 0, len(starts)*span)
	for _, start := range starts {
		for offset := range span {
			minutes = append(minutes, (start+offset)%MinutesPerDay)
		}
	}
	return minutes
}

// Load is, for each minute of a day (UTC), the weighted number of the
// group's runs that start in it, or, for members with a span, that are in
// flight in it.
type Load [MinutesPerDay]int64

// LoadOf adds up the runs of the placed members (Add). now fixes the zones'
// UTC offsets.
func LoadOf(members []Member, now time.Time) (*Load, error) {
	load := &Load{}
	for _, m := range members {
		if err := load.Add(m, now); err != nil {
			return nil, err
		}
	}
	return load, nil
}

// Add adds one member's runs: its starts, over its span.
func (l *Load) Add(m Member, now time.Time) error {
	minutes, err := m.UTCMinutes(now)
	if err != nil {
		return err
	}
	l.AddStarts(occupied(minutes, m.span()), m.weight())
	return nil
}

// UTCMinutes are the minutes of the day (UTC, at now's offset of the
// member's zone) in which the member starts.
func (m Member) UTCMinutes(now time.Time) ([]int, error) {
	spec, err := m.Parse()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Key, err)
	}
	return utcMinutes(spec, now), nil
}

// AddStarts adds starts of this weight in these minutes of the day.
func (l *Load) AddStarts(minutes []int, weight int64) { l.add(minutes, weight) }

// Shared is the most starts of the load in one minute in which m starts.
func (l *Load) Shared(m Member, now time.Time) (int64, error) {
	spec, err := m.Parse()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", m.Key, err)
	}
	var shared int64
	for _, minute := range utcMinutes(spec, now) {
		shared = max(shared, l[minute])
	}
	return shared, nil
}

func (l *Load) add(minutes []int, weight int64) {
	for _, minute := range minutes {
		l[minute] += weight
	}
}

// Peak is the busiest minute's load.
func (l *Load) Peak() int64 { return slices.Max(l[:]) }

// Total is the load summed over the day.
func (l *Load) Total() int64 {
	var total int64
	for _, v := range l {
		total += v
	}
	return total
}

// Ideal is the smallest peak any placement could reach if starts could be
// split freely: the total spread evenly, rounded up.
func (l *Load) Ideal() int64 { return (l.Total() + MinutesPerDay - 1) / MinutesPerDay }

// utcMinutes are the minutes of the UTC day at which spec fires, with its
// zone's offset at now.
func utcMinutes(spec *cron.Spec, now time.Time) []int {
	minutes := spec.MinutesOfDay()
	_, offset := now.In(spec.Location()).Zone()
	shift := offset / 60
	for i, minute := range minutes {
		minutes[i] = ((minute-shift)%MinutesPerDay + MinutesPerDay) % MinutesPerDay
	}
	return minutes
}

// Assign chooses the newcomer's H values given the load of the members
// already placed, and returns its choices (for every H term, in order).
// Among the placements of its minute and hour H terms it takes the one
// whose busiest minute is quietest, then the one adding to the fewest
// starts, then the one nearest after its hashed placement, so that in an
// empty group a member lands where plain H would put it.
func Assign(load *Load, newcomer Member, now time.Time) ([]int, error) {
	hashed := newcomer
	hashed.Choices = nil
	spec, err := hashed.Parse()
	if err != nil {
		return nil, err
	}
	terms := spec.HashTerms()
	choices := make([]int, len(terms))
	for i, term := range terms {
		choices[i] = term.Choice
	}
	free := balanceable(terms)
	best, bestCost := slices.Clone(choices), cost{}
	for n := range candidateCount(terms, free) {
		candidate := nthCandidate(terms, free, choices, n)
		newcomer.Choices = candidate
		spec, err := newcomer.Parse()
		if err != nil {
			return nil, err
		}
		c := costOf(load, occupied(utcMinutes(spec, now), newcomer.span()), newcomer.weight())
		if n == 0 || c.less(bestCost) {
			best, bestCost = candidate, c
		}
	}
	return best, nil
}

// balanceable are the indexes of the H terms Assign places: those in the
// minute and hour fields, as many as keep the candidates within
// maxCandidates. H in the day, month and weekday fields keeps its hashed
// value: balancing within a day is what makes runs start apart.
func balanceable(terms []cron.HashTerm) []int {
	var free []int
	product := 1
	for i, term := range terms {
		if (term.Field == "minute" || term.Field == "hour") && product*term.Choices <= maxCandidates {
			free = append(free, i)
			product *= term.Choices
		}
	}
	return free
}

func candidateCount(terms []cron.HashTerm, free []int) int {
	n := 1
	for _, i := range free {
		n *= terms[i].Choices
	}
	return n
}

// nthCandidate counts n in mixed radix over the free terms, starting from
// the hashed choices, so candidate 0 is the hashed placement.
func nthCandidate(terms []cron.HashTerm, free []int, hashed []int, n int) []int {
	candidate := slices.Clone(hashed)
	for _, i := range free {
		size := terms[i].Choices
		candidate[i] = (hashed[i] + n%size) % size
		n /= size
	}
	return candidate
}

// cost orders placements: the busiest minute after adding the newcomer;
// then how much it raises the busiest hour of each minute-of-the-hour
// column it touches, so that a daily member fills a gap under a column's
// peak instead of raising a quiet column that an hourly member will need;
// then the starts it shares a minute with.
type cost struct{ peak, columnRise, shared int64 }

func (c cost) less(d cost) bool {
	return cmp.Or(cmp.Compare(c.peak, d.peak), cmp.Compare(c.columnRise, d.columnRise), cmp.Compare(c.shared, d.shared)) < 0
}

func costOf(load *Load, minutes []int, weight int64) cost {
	var c cost
	var rise [60]int64
	for _, minute := range minutes {
		after := load[minute] + weight
		c.peak = max(c.peak, after)
		c.shared += load[minute]
		column := minute % 60
		rise[column] = max(rise[column], after-load.columnPeak(column))
	}
	for _, r := range rise {
		c.columnRise += r
	}
	return c
}

// columnPeak is the busiest hour's load at a minute of the hour.
func (l *Load) columnPeak(column int) int64 {
	var peak int64
	for minute := column; minute < MinutesPerDay; minute += 60 {
		peak = max(peak, l[minute])
	}
	return peak
}

// Place assigns the members without choices one at a time, in the order
// given, on top of those with choices, and returns every member with its
// choices. It is what a controller does as ScheduledJobs arrive.
func Place(members []Member, now time.Time) ([]Member, error) {
	var placed []Member
	for _, m := range members {
		if m.Choices != nil {
			placed = append(placed, m)
		}
	}
	load, err := LoadOf(placed, now)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(members)
	for i, m := range out {
		if m.Choices != nil {
			continue
		}
		if out[i].Choices, err = Assign(load, m, now); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Key, err)
		}
		spec, err := out[i].Parse()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Key, err)
		}
		load.add(occupied(utcMinutes(spec, now), m.span()), m.weight())
	}
	return out, nil
}

// Rebalance places every member again from an empty group, heaviest first
// (weight times starts per day times span, then key), which for members of one shape
// reaches the ideal peak. It moves members: it is for an explicit request,
// never for arrivals.
func Rebalance(members []Member, now time.Time) ([]Member, error) {
	order := slices.Clone(members)
	heft := make(map[string]int64, len(order))
	for i := range order {
		order[i].Choices = nil
		spec, err := order[i].Parse()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", order[i].Key, err)
		}
		heft[order[i].Key] = order[i].weight() * int64(len(spec.MinutesOfDay())*order[i].span())
	}
	slices.SortStableFunc(order, func(a, b Member) int {
		return cmp.Or(cmp.Compare(heft[b.Key], heft[a.Key]), cmp.Compare(a.Key, b.Key))
	})
	placed, err := Place(order, now)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string][]int, len(placed))
	for _, m := range placed {
		byKey[m.Key] = m.Choices
	}
	out := slices.Clone(members)
	for i := range out {
		out[i].Choices = byKey[out[i].Key]
	}
	return out, nil
}
