package webhook

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/validation"
)

// TestEarlyStartLeadInTheExtendedLanguage: the lead of an EarlyStart
// warm-up must be shorter than the shortest interval between runs, in the
// language and zone the controller runs the schedule in. The webhook once
// parsed the schedule without the extended dialect: every schedule with H,
// L, W or # failed to parse there, and the check was skipped.
func TestEarlyStartLeadInTheExtendedLanguage(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		schedule  string
		zone      string
		lead      time.Duration
		placement []int // status.spread's choices under a Balanced spread
		refused   string
	}{
		"H/n":                  {schedule: "H/5 * * * *", lead: 10 * time.Minute, refused: "(5m0s)"},
		"H hourly":             {schedule: "H * * * *", lead: 90 * time.Minute, refused: "(1h0m0s)"},
		"H hourly, lead fits":  {schedule: "H * * * *", lead: 30 * time.Minute},
		"L":                    {schedule: "0 0 1,L * *", lead: 24 * time.Hour, refused: "(24h0m0s)"},
		"W":                    {schedule: "0 0 1W,2 * *", lead: 24 * time.Hour, refused: "(24h0m0s)"},
		"#":                    {schedule: "0 0 * * 1#1,2#1", lead: 24 * time.Hour, refused: "(24h0m0s)"},
		"# monthly, lead fits": {schedule: "0 0 * * 1#1", lead: 24 * time.Hour},
		// Hours 0, 7, 14 and 21: the night's gap is 3 hours.
		"Balanced placement, short night": {schedule: "H H/7 * * *", placement: []int{5, 0}, lead: 4 * time.Hour, refused: "(3h0m0s)"},
		// Hours 3, 10 and 17: the shortest gap is 7 hours.
		"Balanced placement, lead fits": {schedule: "H H/7 * * *", placement: []int{5, 3}, lead: 4 * time.Hour},
		// In London the day of the spring change is 23 hours long, whatever
		// minute H takes; in UTC every day has 24.
		"DST zone": {schedule: "H 1 * * *", zone: "Europe/London", lead: 23*time.Hour + 30*time.Minute, refused: "(23h"},
		"UTC":      {schedule: "H 1 * * *", lead: 23*time.Hour + 30*time.Minute},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "report"}}
			sj.Spec.Schedule = tc.schedule
			sj.Spec.WarmUp = &v1alpha1.WarmUp{Strategy: v1alpha1.WarmUpEarlyStart, Lead: v1alpha1.FixedLead(tc.lead)}
			if tc.zone != "" {
				sj.Spec.TimeZone = ptr.To(tc.zone)
			}
			if tc.placement != nil {
				sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced}
				sj.Status.Spread = &v1alpha1.SpreadStatus{Group: v1alpha1.DefaultSpreadGroup, Schedule: tc.schedule, Choices: tc.placement}
			}
			errs, _ := validation.Validate(sj, nil, now)
			switch {
			case tc.refused == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs)
			case tc.refused == "":
				return
			case len(errs) != 1:
				t.Fatalf("errors %v, want one about spec.warmUp.lead", errs)
			}
			want := `spec.warmUp.lead: Invalid value: "` + tc.lead.String() + `": with strategy EarlyStart, lead must be shorter than the shortest interval between runs ` + tc.refused
			if got := errs[0].Error(); !strings.HasPrefix(got, want) {
				t.Errorf("error\n  %s\nwant it to start with\n  %s", got, want)
			}
		})
	}
}

// TestEarlyStartWarnsWhenHeldInAnInitContainer: admission says when an
// EarlyStart run's pods will be held in an init container (their start is
// then seconds late) and why, and stays quiet when the containers can wait
// in their own process.
func TestEarlyStartWarnsWhenHeldInAnInitContainer(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		command []string
		want    string
	}{
		{[]string{"/app/report"}, ""},
		{nil, "spec.warmUp.strategy: EarlyStart will hold the run's pods in an init container, because spec.jobTemplate.spec.template.spec.containers[0] (main) names no command"},
	} {
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "report"}}
		sj.Spec.Schedule = "0 * * * *"
		sj.Spec.WarmUp = &v1alpha1.WarmUp{Strategy: v1alpha1.WarmUpEarlyStart, Lead: v1alpha1.FixedLead(5 * time.Minute)}
		sj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "main", Image: "report", Command: tc.command}}
		errs, warnings := validation.Validate(sj, nil, now)
		if len(errs) > 0 {
			t.Fatalf("command %q: refused: %v", tc.command, errs)
		}
		switch {
		case tc.want == "" && len(warnings) > 0:
			t.Errorf("command %q: warnings %q, want none", tc.command, warnings)
		case tc.want != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0], tc.want)):
			t.Errorf("command %q: warnings %q, want one starting with %q", tc.command, warnings, tc.want)
		}
	}
}

// TestUndecodableIsRefused: a ScheduledJob the webhook's decoder could not
// decode (a value the CRD's schema let through: an older CRD without its
// bounds) is refused on create and on update, even when the spec it
// replaces was equally undecodable (both decode to an empty spec).
func TestUndecodableIsRefused(t *testing.T) {
	v := &Validator{}
	bad := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		DecodeError: "json: cannot unmarshal number 2147483648 into Go struct field ScheduledJobSpec.spec.successfulJobsHistoryLimit of type int32"}
	want := "ScheduledJob broken cannot be decoded: json: cannot unmarshal number 2147483648 into Go struct field ScheduledJobSpec.spec.successfulJobsHistoryLimit"
	if _, err := v.ValidateCreate(context.Background(), bad); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("create: %v, want %q", err, want)
	}
	if _, err := v.ValidateUpdate(context.Background(), bad.DeepCopy(), bad); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("update: %v, want %q", err, want)
	}
}

// TestAutoLead: lead Auto's bounds are checked by field; maxLead stands
// for the lead in the EarlyStart interval check; CapacityBuffer refuses
// Auto, naming why.
func TestAutoLead(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	d := func(x time.Duration) *metav1.Duration { return &metav1.Duration{Duration: x} }
	tests := map[string]struct {
		warmUp  v1alpha1.WarmUp
		refused string
	}{
		"defaults":                     {warmUp: v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}}},
		"bounds":                       {warmUp: v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}, MinLead: d(time.Minute), MaxLead: d(10 * time.Minute)}},
		"minLead too short":            {warmUp: v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}, MinLead: d(10 * time.Second)}, refused: `spec.warmUp.minLead: Invalid value: "10s": must be from 30s to 24h0m0s`},
		"maxLead below minLead":        {warmUp: v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}, MinLead: d(10 * time.Minute), MaxLead: d(5 * time.Minute)}, refused: `spec.warmUp.maxLead: Invalid value: "5m0s": must not be below minLead (10m0s)`},
		"EarlyStart, maxLead too long": {warmUp: v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}, Strategy: v1alpha1.WarmUpEarlyStart, MaxLead: d(2 * time.Hour)}, refused: `spec.warmUp.maxLead: Invalid value: "2h0m0s": with strategy EarlyStart, lead must be shorter than the shortest interval between runs (1h0m0s)`},
		"EarlyStart, maxLead fits":     {warmUp: v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}, Strategy: v1alpha1.WarmUpEarlyStart}},
		"CapacityBuffer refuses Auto":  {warmUp: v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}, Strategy: v1alpha1.WarmUpCapacityBuffer}, refused: `spec.warmUp.lead: Invalid value: "Auto": lead Auto learns from when warm-up pods get their nodes`},
		"CapacityBuffer, a fixed lead": {warmUp: v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(5 * time.Minute), Strategy: v1alpha1.WarmUpCapacityBuffer}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "report"}}
			sj.Spec.Schedule = "0 * * * *"
			sj.Spec.WarmUp = &tc.warmUp
			errs, _ := validation.Validate(sj, nil, now)
			switch {
			case tc.refused == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs)
			case tc.refused == "":
			case len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.refused):
				t.Errorf("errors %v, want one starting %s", errs, tc.refused)
			}
		})
	}
}
