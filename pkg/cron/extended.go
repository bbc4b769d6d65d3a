package cron

import (
	"strconv"
	"strings"
)

// isExtendedTerm reports whether term has the shape of an extended term:
//
//	H, H/n, H(a-b), H(a-b)/n   any field: Jenkins' hashed values
//	L, L-n, LW, nW             day of month: last day, nth day before it,
//	                           last weekday, weekday nearest to day n
//	dL, d#n                    day of week: last d of the month, nth d
//
// None of these shapes is valid in robfig's grammar, and none is a month or
// weekday name ("JUL", "WED" and "THU" are names, not extended terms).
func isExtendedTerm(k fieldKind, term string) bool {
	switch {
	case term == "H" || strings.HasPrefix(term, "H/") || strings.HasPrefix(term, "H("):
		return true
	case k == domField:
		return term == "L" || term == "LW" || strings.HasPrefix(term, "L-") ||
			(len(term) > 1 && strings.HasSuffix(term, "W") && isDigits(term[:len(term)-1]))
	case k == dowField:
		day, _, isNth := strings.Cut(term, "#")
		if !isNth {
			day = strings.TrimSuffix(term, "L")
		}
		return day != term && (isDigits(day) || isWeekdayName(day))
	}
	return false
}

func isWeekdayName(s string) bool {
	for _, name := range fieldInfos[dowField].names {
		if asciiEqualFold(s, name) {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseExtendedTerm parses a term isExtendedTerm accepted.
func (fp *fieldParser) parseExtendedTerm(k fieldKind, term string, offset int) (uint64, error) {
	switch {
	case term[0] == 'H':
		return fp.parseHash(k, term, offset)
	case k == domField:
		return 0, fp.parseDayOfMonthTerm(term, offset)
	default:
		return 0, fp.parseDayOfWeekTerm(term, offset)
	}
}

func (fp *fieldParser) parseDayOfMonthTerm(term string, offset int) error {
	t := &fp.terms
	switch {
	case term == "L":
		t.lastMinus |= 1
	case term == "LW":
		t.lastWeekday = true
	case strings.HasPrefix(term, "L-"):
		n, err := strconv.Atoi(term[2:])
		if err != nil || n < 0 || n > 30 {
			return fp.fail(ErrRange, domField, term, offset, "L-n needs n from 0 to 30 (days before the last day of the month)")
		}
		t.lastMinus |= 1 << uint(n)
	case strings.HasSuffix(term, "W"):
		n, err := strconv.Atoi(term[:len(term)-1])
		if err != nil || n < 1 || n > 31 {
			return fp.fail(ErrRange, domField, term, offset, "nW needs a day n from 1 to 31 (the weekday nearest to it)")
		}
		t.nearestWeekday |= 1 << uint(n)
	default:
		return fp.fail(ErrSyntax, domField, term, offset, "is not a day of month; extended forms are L, L-n, LW and nW")
	}
	return nil
}

func (fp *fieldParser) parseDayOfWeekTerm(term string, offset int) error {
	t := &fp.terms
	if day, ok := strings.CutSuffix(term, "L"); ok && day != "" {
		w, err := fp.weekday(day, offset)
		if err != nil {
			return err
		}
		t.lastOfWeekday |= 1 << uint(w)
		return nil
	}
	if day, nth, ok := strings.Cut(term, "#"); ok {
		w, err := fp.weekday(day, offset)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(nth)
		if err != nil || n < 1 || n > 5 {
			return fp.fail(ErrRange, dowField, term, offset, "d#n needs n from 1 to 5 (the nth such weekday of the month)")
		}
		t.nth[w] |= 1 << uint(n-1)
		return nil
	}
	return fp.fail(ErrSyntax, dowField, term, offset, "is not a day of week; extended forms are dL (last d of the month) and d#n (nth d)")
}

// weekday parses 0-7 or a name; 7 is Sunday.
func (fp *fieldParser) weekday(text string, offset int) (int, error) {
	w, err := fp.value(dowField, text, offset)
	if err != nil {
		return 0, err
	}
	if w > 7 {
		return 0, fp.fail(ErrRange, dowField, text, offset, strconv.Itoa(w)+" is above the maximum 7")
	}
	return w % 7, nil
}

// parseHash expands an H term with Jenkins' rules (BaseParser.doHash): H is
// one value in the field's range (1-28 for day of month, 0-6 for day of
// week, so it is valid in every month and week); H/n starts at a hashed
// offset below n and repeats every n; H(a-b) and H(a-b)/n do the same within
// a-b. As in Jenkins, H/1 is a single value.
func (fp *fieldParser) parseHash(k fieldKind, term string, offset int) (uint64, error) {
	info := &fieldInfos[k]
	low, high := info.min, info.hashMax
	rest := term[1:]
	if strings.HasPrefix(rest, "(") {
		var err error
		if low, high, rest, err = fp.hashRange(k, term, offset); err != nil {
			return 0, err
		}
	}
	step := 1
	if rest != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(rest, "/"))
		if !strings.HasPrefix(rest, "/") || err != nil || n < 1 {
			return 0, fp.fail(ErrSyntax, k, term, offset, "H takes the forms H, H/n, H(a-b) and H(a-b)/n with n at least 1")
		}
		if n > high-low+1 {
			return 0, fp.fail(ErrRange, k, term, offset, "step "+strconv.Itoa(n)+" is larger than the range "+strconv.Itoa(low)+"-"+strconv.Itoa(high))
		}
		step = n
	}
	if fp.parser.HashKey == "" {
		return 0, fp.fail(ErrMissingHashKey, k, term, offset, "H needs a hash key (ontime next --hash-key; a ScheduledJob uses its namespace/name)")
	}
	choices := high - low + 1
	if step > 1 {
		choices = step
	}
	choice, err := fp.hashChoice(k, term, offset, choices)
	if err != nil {
		return 0, err
	}
	start := low + choice
	effective := strconv.Itoa(start)
	bits := uint64(1) << uint(start)
	if step > 1 {
		effective = strconv.Itoa(start) + "-" + strconv.Itoa(high) + "/" + strconv.Itoa(step)
		bits = valueBits(start, high, step)
	}
	fp.s.hashTerms = append(fp.s.hashTerms, HashTerm{Field: fieldInfos[k].name, Offset: offset, Text: term,
		Choices: choices, Choice: choice, Effective: effective})
	return bits, nil
}

// hashChoice draws the next H term's value from the hash, as Jenkins does,
// and lets Parser.HashChoices override it. The draw is made either way, so
// that later terms without an override keep their hashed values.
func (fp *fieldParser) hashChoice(k fieldKind, term string, offset, choices int) (int, error) {
	if fp.hash == nil {
		fp.hash = newHashSource(fp.parser.HashKey)
	}
	choice := fp.hash.intn(choices)
	index := len(fp.s.hashTerms)
	if index < len(fp.parser.HashChoices) {
		choice = fp.parser.HashChoices[index]
		if choice < 0 || choice >= choices {
			return 0, fp.fail(ErrRange, k, term, offset, "hash choice "+strconv.Itoa(choice)+" is outside 0-"+strconv.Itoa(choices-1))
		}
	}
	return choice, nil
}

// hashRange parses the "(a-b)" of an H(a-b) term and returns the range and
// what follows it.
func (fp *fieldParser) hashRange(k fieldKind, term string, offset int) (low, high int, rest string, err error) {
	info := &fieldInfos[k]
	inner, after, ok := strings.Cut(term[len("H("):], ")")
	a, b, isRange := strings.Cut(inner, "-")
	if !ok || !isRange {
		return 0, 0, "", fp.fail(ErrSyntax, k, term, offset, "H(a-b) needs a range in parentheses, such as H(0-29)")
	}
	if low, err = fp.value(k, a, offset+len("H(")); err != nil {
		return 0, 0, "", err
	}
	if high, err = fp.value(k, b, offset+len("H(")+len(a)+len("-")); err != nil {
		return 0, 0, "", err
	}
	if low < info.min || high > fp.maxValue(k) || low > high {
		return 0, 0, "", fp.fail(ErrRange, k, term, offset, "range must lie within "+strconv.Itoa(info.min)+"-"+strconv.Itoa(fp.maxValue(k))+" and start before it ends")
	}
	return low, high, after, nil
}
