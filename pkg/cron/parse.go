package cron

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Dialect selects the schedule language Parse accepts.
type Dialect int

const (
	// Kubernetes accepts what a batch/v1 CronJob accepts: the language of
	// robfig/cron v3.0.1's ParseStandard, with the same fire times. It
	// rejects three things robfig accepts or crashes on: a TZ= prefix with
	// no schedule after it, an @every interval of zero or less, and a
	// schedule that can never fire ("0 0 30 2 *").
	Kubernetes Dialect = iota
	// Extended adds Jenkins' hashed H fields, L, L-n, LW and nW in the
	// day-of-month field, dL and d#n in the day-of-week field, and 7 for
	// Sunday. Every Kubernetes schedule means the same in Extended.
	Extended
)

// Parser parses schedules. Its zero value parses the Kubernetes dialect in
// UTC under DSTCron, which is also what Parse does.
type Parser struct {
	Dialect Dialect
	// Location is the zone of schedules without a TZ= prefix; nil is UTC.
	// Unlike robfig/cron, nothing defaults to time.Local.
	Location *time.Location
	// DSTPolicy says what happens to wall-clock times that a daylight-saving
	// change skips or repeats.
	DSTPolicy DSTPolicy
	// HashKey seeds H fields; a schedule with H is rejected without one.
	// ontime uses a ScheduledJob's namespace/name, so the hashed minute
	// survives re-creation.
	HashKey string
	// HashChoices, when set, choose the values of H terms instead of the
	// hash: the i-th H term of the schedule (in the order Spec.HashTerms
	// lists them) takes HashChoices[i], from 0 to that term's Choices-1.
	// Terms beyond the slice keep their hashed values. A balancer uses it
	// to place a schedule's H fields where the fewest others start; a
	// HashKey is still required, so a schedule means the same with and
	// without it when the choices are the hashed ones.
	HashChoices []int
}

// Parse parses a schedule in the Kubernetes dialect, in UTC, under DSTCron.
func Parse(spec string) (*Spec, error) { return Parser{}.Parse(spec) }

// Parse parses spec: five fields (minute hour day-of-month month
// day-of-week), or a descriptor (@yearly, @annually, @monthly, @weekly,
// @daily, @midnight, @hourly, @every <duration>), optionally prefixed by
// "TZ=<zone> " or "CRON_TZ=<zone> ". Errors are *ParseError.
func (p Parser) Parse(spec string) (*Spec, error) {
	if spec == "" {
		return nil, &ParseError{Kind: ErrSyntax, Spec: spec, Reason: "empty schedule"}
	}
	s := &Spec{text: spec, policy: p.DSTPolicy, loc: p.Location}
	if s.loc == nil {
		s.loc = time.UTC
	}
	rest, restOffset := spec, 0
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		var err error
		if rest, restOffset, s.loc, err = parseZonePrefix(spec); err != nil {
			return nil, err
		}
	}
	s.zone, s.offset = zoneFor(s.loc)
	if strings.HasPrefix(rest, "@") {
		return s, p.parseDescriptor(s, spec, rest, restOffset)
	}
	fp := fieldParser{parser: &p, spec: spec, s: s}
	if err := fp.parseFields(rest, restOffset); err != nil {
		return nil, err
	}
	if !s.feasible() {
		return nil, &ParseError{Kind: ErrNeverFires, Spec: spec, Value: spec, Reason: "never fires: no allowed month has an allowed day"}
	}
	return s, nil
}

// parseZonePrefix splits "TZ=<zone> <schedule>" the way robfig/cron does
// (at the first ASCII space), without its panic when there is no space.
func parseZonePrefix(spec string) (rest string, restOffset int, loc *time.Location, err error) {
	space := strings.IndexByte(spec, ' ')
	if space < 0 {
		return "", 0, nil, &ParseError{Kind: ErrSyntax, Spec: spec, Field: "time zone", Value: spec,
			Reason: "a TZ= or CRON_TZ= prefix must be followed by a space and the schedule"}
	}
	eq := strings.IndexByte(spec, '=')
	name := spec[eq+1 : space]
	if loc, err = LoadLocation(name); err != nil {
		reason := "unknown time zone"
		if errors.Is(err, ErrLocalZone) {
			reason = ErrLocalZone.Error()
		}
		return "", 0, nil, &ParseError{Kind: ErrUnknownTimeZone, Spec: spec, Field: "time zone", Value: name, Offset: eq + 1, Reason: reason}
	}
	trimmed := strings.TrimLeftFunc(spec[space:], unicode.IsSpace)
	return strings.TrimRightFunc(trimmed, unicode.IsSpace), len(spec) - len(trimmed), loc, nil
}

var locations sync.Map // zone name -> *time.Location

// ErrLocalZone is LoadLocation's answer to "Local": the zone of whichever
// machine evaluates the schedule, so the same schedule would fire at
// different instants in a CLI, a webhook and a controller.
var ErrLocalZone = errors.New(`"Local" is the zone of the machine evaluating the schedule, not a time zone; name one, such as UTC or Europe/Amsterdam`)

// LoadLocation is time.LoadLocation with a cache, so that parsing many
// schedules in one zone reads the zone database once and shares one
// *time.Location (and so one offset table) between them. Unlike
// time.LoadLocation it refuses "Local" (in any case) with ErrLocalZone.
func LoadLocation(name string) (*time.Location, error) {
	if strings.EqualFold(name, "Local") {
		return nil, ErrLocalZone
	}
	if loc, ok := locations.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	actual, _ := locations.LoadOrStore(name, loc)
	return actual.(*time.Location), nil
}

// Descriptors mean what they mean in robfig/cron, including which fields
// carry the star bit. @hourly follows elapsed time across DST changes, as ISC
// cron's @hourly (HR_STAR) does.
func (p *Parser) parseDescriptor(s *Spec, spec, descriptor string, offset int) error {
	const everyPrefix = "@every "
	if strings.HasPrefix(descriptor, everyPrefix) {
		return parseEvery(s, spec, descriptor[len(everyPrefix):], offset+len(everyPrefix))
	}
	s.minute, s.hour, s.month = 1, 1, allMonths
	s.dom, s.dow, s.domStar, s.dowStar = allDaysOfMonth, allWeekdays, true, true
	switch descriptor {
	case "@yearly", "@annually":
		s.dom, s.domStar, s.month = 1<<1, false, 1<<1
	case "@monthly":
		s.dom, s.domStar = 1<<1, false
	case "@weekly":
		s.dow, s.dowStar = 1<<0, false
	case "@daily", "@midnight":
	case "@hourly":
		s.hour, s.wildcardTime = allHours, true
	default:
		return &ParseError{Kind: ErrSyntax, Spec: spec, Field: "descriptor", Value: descriptor, Offset: offset,
			Reason: "unknown descriptor; use @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration> (lower case)"}
	}
	s.dowRepeated = repeatWeekdays(s.dow)
	return nil
}

// parseEvery accepts what robfig does (a Go duration; below one second it
// becomes one second; fractions of a second are dropped) except intervals of
// zero or less, which robfig silently turns into one second.
func parseEvery(s *Spec, spec, text string, offset int) error {
	d, err := time.ParseDuration(text)
	if err != nil {
		return &ParseError{Kind: ErrSyntax, Spec: spec, Field: "descriptor", Value: text, Offset: offset,
			Reason: "@every needs a Go duration such as 90s, 15m or 1h30m"}
	}
	if d <= 0 {
		return &ParseError{Kind: ErrRange, Spec: spec, Field: "descriptor", Value: text, Offset: offset,
			Reason: "@every needs a positive interval"}
	}
	s.every = max(d.Truncate(time.Second), time.Second)
	return nil
}

const (
	allMonths      = 1<<13 - 2
	allDaysOfMonth = 1<<32 - 2
	allWeekdays    = 1<<7 - 1
	allHours       = 1<<24 - 1
	starBit        = 1 << 63
)

// repeatWeekdays repeats a weekday set over seven weeks (see dayMask).
func repeatWeekdays(dow uint8) uint64 {
	var repeated uint64
	for week := 0; week < 7; week++ {
		repeated |= uint64(dow) << uint(7*week)
	}
	return repeated
}

type fieldKind int

const (
	minuteField fieldKind = iota
	hourField
	domField
	monthField
	dowField
)

type fieldInfo struct {
	name     string
	min, max int
	// hashMax is the upper bound Jenkins uses for H: 28 for day of month
	// (valid in every month) and 6 for day of week.
	hashMax int
	names   []string
}

var fieldInfos = [5]fieldInfo{
	{name: "minute", min: 0, max: 59, hashMax: 59},
	{name: "hour", min: 0, max: 23, hashMax: 23},
	{name: "day-of-month", min: 1, max: 31, hashMax: 28},
	{name: "month", min: 1, max: 12, hashMax: 12,
		names: []string{"", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day-of-week", min: 0, max: 6, hashMax: 6,
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// fieldParser parses the five fields of one schedule.
type fieldParser struct {
	parser *Parser
	spec   string
	s      *Spec
	hash   *hashSource // created at the first H term
	terms  dayTerms
}

func (fp *fieldParser) parseFields(rest string, offset int) error {
	var starts, ends [5]int
	n := 0
	for i := 0; i < len(rest); {
		r, size := utf8.DecodeRuneInString(rest[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		start := i
		for i < len(rest) {
			if r, size = utf8.DecodeRuneInString(rest[i:]); unicode.IsSpace(r) {
				break
			}
			i += size
		}
		if n < 5 {
			starts[n], ends[n] = start, i
		}
		n++
	}
	if n != 5 {
		return &ParseError{Kind: ErrSyntax, Spec: fp.spec, Value: fp.spec,
			Reason: "expected 5 fields (minute hour day-of-month month day-of-week), found " + strconv.Itoa(n)}
	}
	var values [5]uint64
	var stars [5]bool
	for k := range fieldKind(5) {
		text := rest[starts[k]:ends[k]]
		var err error
		if values[k], stars[k], err = fp.parseField(k, text, offset+starts[k]); err != nil {
			return err
		}
	}
	s := fp.s
	s.minute, s.hour, s.dom, s.month = values[0]&allMinutes, uint32(values[1]), uint32(values[2]), uint16(values[3])
	// Sunday may be written 7 in the extended dialect.
	s.dow = uint8(values[4]&allWeekdays) | uint8(values[4]>>7&1)
	s.domStar, s.dowStar = stars[2], stars[4]
	s.dowRepeated = repeatWeekdays(s.dow)
	s.wildcardTime = isWildcard(rest[starts[0]:ends[0]]) || isWildcard(rest[starts[1]:ends[1]])
	if fp.terms != (dayTerms{}) {
		terms := fp.terms
		s.ext = &terms
	}
	return nil
}

// isWildcard is ISC cron's test for MIN_STAR/HR_STAR: the field's first
// character. robfig's ? means *, so it counts too.
func isWildcard(field string) bool { return field[0] == '*' || field[0] == '?' }

// parseField returns the field's bits and robfig's star bit: set when a term
// is * or ? with step 1.
func (fp *fieldParser) parseField(k fieldKind, text string, offset int) (bits uint64, star bool, err error) {
	for start := 0; start <= len(text); {
		end := strings.IndexByte(text[start:], ',')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		// robfig splits with strings.FieldsFunc, which drops empty terms:
		// "1,,2" is "1,2".
		if term := text[start:end]; term != "" {
			termBits, termStar, err := fp.parseTerm(k, term, offset+start)
			if err != nil {
				return 0, false, err
			}
			bits |= termBits
			star = star || termStar
		}
		start = end + 1
	}
	if bits == 0 && fp.termsFor(k) == 0 {
		return 0, false, fp.fail(ErrRange, k, text, offset, "selects no "+fieldInfos[k].name+" at all")
	}
	return bits, star, nil
}

// termsFor reports whether extended day terms were given for field k.
func (fp *fieldParser) termsFor(k fieldKind) int {
	t := &fp.terms
	switch {
	case k == domField && (t.lastMinus != 0 || t.nearestWeekday != 0 || t.lastWeekday):
		return 1
	case k == dowField && (t.nth != [7]uint8{} || t.lastOfWeekday != 0):
		return 1
	}
	return 0
}

func (fp *fieldParser) fail(kind ErrorKind, k fieldKind, value string, offset int, reason string) error {
	return &ParseError{Kind: kind, Spec: fp.spec, Field: fieldInfos[k].name, Value: value, Offset: offset, Reason: reason}
}

func (fp *fieldParser) parseTerm(k fieldKind, term string, offset int) (uint64, bool, error) {
	if isExtendedTerm(k, term) {
		if fp.parser.Dialect != Extended {
			return 0, false, fp.fail(ErrExtendedSyntax, k, term, offset, "H, L, W and # are extended syntax, which Kubernetes CronJob rejects")
		}
		bits, err := fp.parseExtendedTerm(k, term, offset)
		return bits, false, err
	}
	return fp.parseRange(k, term, offset)
}

// parseRange parses one term of robfig/cron's grammar: *, ?, a value, a
// range a-b, each optionally with a step /n, where "a/n" means a-max/n.
// It keeps robfig's leniency: anything after "*-" is ignored, steps larger
// than the range are allowed (*/60 is minute 0), and numbers go through
// strconv.Atoi (so "+5" and "05" are 5).
func (fp *fieldParser) parseRange(k fieldKind, term string, offset int) (uint64, bool, error) {
	info := &fieldInfos[k]
	rangePart, stepPart, hasStep := strings.Cut(term, "/")
	if hasStep && strings.Contains(stepPart, "/") {
		return 0, false, fp.fail(ErrSyntax, k, term, offset, "too many slashes")
	}
	start, end, hasHigh, err := fp.rangeBounds(k, term, rangePart, offset)
	if err != nil {
		return 0, false, err
	}
	star := rangePart == "*" || rangePart == "?" || strings.HasPrefix(rangePart, "*-") || strings.HasPrefix(rangePart, "?-")
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepPart)
		if err != nil || n < 0 {
			return 0, false, fp.fail(ErrSyntax, k, term, offset, "step "+strconv.Quote(stepPart)+" is not a whole number")
		}
		step = n
		if !hasHigh {
			end = info.max
		}
		star = star && step <= 1
	}
	if err := fp.checkRange(k, term, offset, start, end, step); err != nil {
		return 0, false, err
	}
	bits := valueBits(start, end, step)
	if star {
		bits |= starBit
	}
	return bits, star, nil
}

// rangeBounds parses the "a", "a-b", "*" or "?" before a step. robfig
// ignores whatever follows "*-".
func (fp *fieldParser) rangeBounds(k fieldKind, term, rangePart string, offset int) (start, end int, hasHigh bool, err error) {
	info := &fieldInfos[k]
	low, high, hasHigh := strings.Cut(rangePart, "-")
	if low == "*" || low == "?" {
		return info.min, info.max, hasHigh, nil
	}
	if start, err = fp.value(k, low, offset); err != nil {
		return 0, 0, false, err
	}
	if !hasHigh {
		return start, start, false, nil
	}
	if strings.Contains(high, "-") {
		return 0, 0, false, fp.fail(ErrSyntax, k, term, offset, "too many hyphens")
	}
	if end, err = fp.value(k, high, offset+len(low)+1); err != nil {
		return 0, 0, false, err
	}
	return start, end, true, nil
}

// checkRange rejects bounds outside the field and steps of zero.
func (fp *fieldParser) checkRange(k fieldKind, term string, offset, start, end, step int) error {
	info := &fieldInfos[k]
	switch {
	case start < info.min:
		return fp.fail(ErrRange, k, term, offset, strconv.Itoa(start)+" is below the minimum "+strconv.Itoa(info.min))
	case end > fp.maxValue(k):
		return fp.fail(ErrRange, k, term, offset, strconv.Itoa(end)+" is above the maximum "+strconv.Itoa(fp.maxValue(k))+fp.maxHint(k))
	case start > end:
		return fp.fail(ErrRange, k, term, offset, "range start "+strconv.Itoa(start)+" is after its end "+strconv.Itoa(end))
	case step == 0:
		return fp.fail(ErrRange, k, term, offset, "step must be at least 1")
	}
	return nil
}

// maxValue is the largest value a term may name: 7 (Sunday) is allowed in
// the extended day-of-week field, while * and a/n still stop at 6.
func (fp *fieldParser) maxValue(k fieldKind) int {
	if k == dowField && fp.parser.Dialect == Extended {
		return 7
	}
	return fieldInfos[k].max
}

func (fp *fieldParser) maxHint(k fieldKind) string {
	if k == dowField && fp.parser.Dialect != Extended {
		return " (0 is Sunday; 7 needs the extended syntax)"
	}
	return ""
}

func valueBits(start, end, step int) uint64 {
	var bits uint64
	for v := start; v <= end; v += step {
		bits |= 1 << uint(v)
	}
	return bits
}

// value parses a number or, in the month and day-of-week fields, a
// three-letter English name in any case.
func (fp *fieldParser) value(k fieldKind, text string, offset int) (int, error) {
	for v, name := range fieldInfos[k].names {
		if name != "" && asciiEqualFold(text, name) {
			return v, nil
		}
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 0 {
		what := "a number"
		if fieldInfos[k].names != nil {
			what = "a number or a name such as " + fieldInfos[k].names[1]
		}
		return 0, fp.fail(ErrSyntax, k, text, offset, "is not "+what)
	}
	return n, nil
}

// asciiEqualFold compares case-insensitively in ASCII only, which is what
// robfig's map lookup of strings.ToLower amounts to for these names.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != b[i] {
			return false
		}
	}
	return true
}
