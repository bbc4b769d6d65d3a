package cron

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestHashTermsAndEffective(t *testing.T) {
	tests := []struct {
		name, schedule, key string
		choices             []int
		want                string
		wantChoices         []int // of each term, in order
		wantSizes           []int
	}{
		// The draws are Java's (TestHashMatchesJenkins): 18, 1, 2, 0, 1.
		{name: "every form, hashed", schedule: "H H(8-17) H/3 H(1-6)/2 H", key: "my-job",
			want: "18 9 3-28/3 1-6/2 1", wantChoices: []int{18, 1, 2, 0, 1}, wantSizes: []int{60, 10, 3, 2, 7}},
		{name: "chosen", schedule: "H/15 * * * *", key: "my-job", choices: []int{5},
			want: "5-59/15 * * * *", wantChoices: []int{5}, wantSizes: []int{15}},
		{name: "a choice for the first term only keeps the second hashed", schedule: "H H(8-17) * * *", key: "my-job", choices: []int{0},
			want: "0 9 * * *", wantChoices: []int{0, 1}, wantSizes: []int{60, 10}},
		{name: "no H", schedule: "*/5 1 L * *", key: "my-job", want: "*/5 1 L * *"},
		{name: "zone prefix and extended terms kept", schedule: "TZ=Europe/Amsterdam H 3 L * *", key: "reports/nightly", choices: []int{59},
			want: "TZ=Europe/Amsterdam 59 3 L * *", wantChoices: []int{59}, wantSizes: []int{60}},
		{name: "H(a-b)/n", schedule: "H(10-40)/10 * * * *", key: "x", choices: []int{9},
			want: "19-40/10 * * * *", wantChoices: []int{9}, wantSizes: []int{10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parser{Dialect: Extended, HashKey: tt.key, HashChoices: tt.choices}.Parse(tt.schedule)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Effective(); got != tt.want {
				t.Errorf("Effective() = %q, want %q", got, tt.want)
			}
			var choices, sizes []int
			for _, term := range s.HashTerms() {
				choices, sizes = append(choices, term.Choice), append(sizes, term.Choices)
			}
			if !slices.Equal(choices, tt.wantChoices) {
				t.Errorf("choices %v, want %v", choices, tt.wantChoices)
			}
			if !slices.Equal(sizes, tt.wantSizes) {
				t.Errorf("sizes %v, want %v", sizes, tt.wantSizes)
			}
		})
	}
}

// TestEffectiveFiresTheSame: the effective schedule, parsed without H,
// fires exactly when the H schedule does, for many keys.
func TestEffectiveFiresTheSame(t *testing.T) {
	schedules := []string{"H * * * *", "H/5 * * * *", "H H * * *", "H(0-29)/10 H(9-17) * * 1-5", "H H H * *", "H H * * H", "H H L H *"}
	from := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for _, schedule := range schedules {
		for i := range 40 {
			key := fmt.Sprintf("team-%d/job-%d", i%7, i)
			hashed, err := Parser{Dialect: Extended, HashKey: key}.Parse(schedule)
			if err != nil {
				t.Fatal(err)
			}
			effective := hashed.Effective()
			concrete, err := Parser{Dialect: Extended}.Parse(effective)
			if err != nil {
				t.Fatalf("%q with key %q: effective %q does not parse: %v", schedule, key, effective, err)
			}
			if got, want := nextTimes(concrete, from, 30), nextTimes(hashed, from, 30); !slices.Equal(got, want) {
				t.Errorf("%q with key %q: effective %q fires at %v, the H schedule at %v", schedule, key, effective, got, want)
			}
		}
	}
}

func TestHashChoiceOutOfRange(t *testing.T) {
	_, err := Parser{Dialect: Extended, HashKey: "k", HashChoices: []int{15}}.Parse("H/15 * * * *")
	var parseErr *ParseError
	if !errors.As(err, &parseErr) || parseErr.Kind != ErrRange || parseErr.Field != "minute" {
		t.Fatalf("got %v, want a minute range error", err)
	}
}

func TestMinutesOfDay(t *testing.T) {
	tests := []struct {
		schedule string
		want     []int
	}{
		{"30 2 * * *", []int{150}},
		{"0,30 */12 * * *", []int{0, 30, 720, 750}},
		{"@every 90m", nil},
		{"@daily", []int{0}},
	}
	for _, tt := range tests {
		s, err := Parse(tt.schedule)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.MinutesOfDay(); !slices.Equal(got, tt.want) {
			t.Errorf("%q: MinutesOfDay() = %v, want %v", tt.schedule, got, tt.want)
		}
	}
	if n := len(mustParse(t, "* * * * *").MinutesOfDay()); n != 1440 {
		t.Errorf("* * * * *: %d minutes, want 1440", n)
	}
}

func mustParse(t *testing.T, schedule string) *Spec {
	t.Helper()
	s, err := Parse(schedule)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
