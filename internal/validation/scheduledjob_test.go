package validation

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestSuspendAfterFailures: out of bounds is refused with the field's path
// and value (the CRD refuses it too; this is what reports a spec stored
// without admission); failed Jobs deleted at once are warned about.
func TestSuspendAfterFailures(t *testing.T) {
	path := field.NewPath("spec", "suspendAfterFailures")
	for name, tc := range map[string]struct {
		n, failedKept *int32
		refused       string
		warned        string
	}{
		"unset":              {},
		"3":                  {n: ptr.To[int32](3)},
		"0":                  {n: ptr.To[int32](0), refused: "spec.suspendAfterFailures: Invalid value: 0: must be between 1 and 1000"},
		"1001":               {n: ptr.To[int32](1001), refused: "spec.suspendAfterFailures: Invalid value: 1001: must be between 1 and 1000"},
		"no failed Job kept": {n: ptr.To[int32](3), failedKept: ptr.To[int32](0), warned: "spec.suspendAfterFailures: with failedJobsHistoryLimit 0"},
	} {
		t.Run(name, func(t *testing.T) {
			errs, warnings := validateSuspendAfterFailures(v1alpha1.ScheduledJobSpec{SuspendAfterFailures: tc.n, FailedJobsHistoryLimit: tc.failedKept}, path)
			if got := errs.ToAggregate(); (got == nil) != (tc.refused == "") || (got != nil && got.Error() != tc.refused) {
				t.Errorf("errors %v, want %q", got, tc.refused)
			}
			if warned := strings.Join(warnings, "; "); (warned == "") != (tc.warned == "") || !strings.HasPrefix(warned, tc.warned) {
				t.Errorf("warnings %q, want %q", warned, tc.warned)
			}
		})
	}
}

// TestCatchUp: out of bounds, with Replace or with runAt is refused with
// the field's path and value.
func TestCatchUp(t *testing.T) {
	path := field.NewPath("spec", "catchUp")
	for name, tc := range map[string]struct {
		spec    v1alpha1.ScheduledJobSpec
		refused string
	}{
		"unset":        {},
		"3 with Allow": {spec: v1alpha1.ScheduledJobSpec{CatchUp: &v1alpha1.CatchUp{MaxRuns: 3}}},
		"with Forbid":  {spec: v1alpha1.ScheduledJobSpec{CatchUp: &v1alpha1.CatchUp{MaxRuns: 3}, ConcurrencyPolicy: v1alpha1.ForbidConcurrent}},
		"0":            {spec: v1alpha1.ScheduledJobSpec{CatchUp: &v1alpha1.CatchUp{}}, refused: "spec.catchUp.maxRuns: Invalid value: 0: must be between 1 and 1000"},
		"1001":         {spec: v1alpha1.ScheduledJobSpec{CatchUp: &v1alpha1.CatchUp{MaxRuns: 1001}}, refused: "spec.catchUp.maxRuns: Invalid value: 1001: must be between 1 and 1000"},
		"with Replace": {spec: v1alpha1.ScheduledJobSpec{CatchUp: &v1alpha1.CatchUp{MaxRuns: 3}, ConcurrencyPolicy: v1alpha1.ReplaceConcurrent},
			refused: `spec.catchUp: Invalid value: "maxRuns: 3": not with concurrencyPolicy Replace: each run caught up would replace the one before it`},
		"with runAt": {spec: v1alpha1.ScheduledJobSpec{CatchUp: &v1alpha1.CatchUp{MaxRuns: 3}, RunAt: &metav1.Time{}},
			refused: `spec.catchUp: Invalid value: "maxRuns: 3": not with runAt, which runs once`},
	} {
		t.Run(name, func(t *testing.T) {
			errs := validateCatchUp(tc.spec, path)
			if got := errs.ToAggregate(); (got == nil) != (tc.refused == "") || (got != nil && got.Error() != tc.refused) {
				t.Errorf("errors %v, want %q", got, tc.refused)
			}
		})
	}
}

// TestMaxActive: out of bounds, or with a policy other than Allow, is
// refused with the field's path and value.
func TestMaxActive(t *testing.T) {
	path := field.NewPath("spec", "maxActive")
	for name, tc := range map[string]struct {
		n       *int32
		policy  v1alpha1.ConcurrencyPolicy
		refused string
	}{
		"unset":        {},
		"2 with Allow": {n: ptr.To[int32](2), policy: v1alpha1.AllowConcurrent},
		"2, default":   {n: ptr.To[int32](2)},
		"0":            {n: ptr.To[int32](0), refused: "spec.maxActive: Invalid value: 0: must be between 1 and 1000"},
		"1001":         {n: ptr.To[int32](1001), refused: "spec.maxActive: Invalid value: 1001: must be between 1 and 1000"},
		"with Forbid": {n: ptr.To[int32](2), policy: v1alpha1.ForbidConcurrent,
			refused: "spec.maxActive: Invalid value: 2: only with concurrencyPolicy Allow, not Forbid (Forbid is maxActive 1; Replace keeps one run)"},
		"with Replace": {n: ptr.To[int32](2), policy: v1alpha1.ReplaceConcurrent,
			refused: "spec.maxActive: Invalid value: 2: only with concurrencyPolicy Allow, not Replace (Forbid is maxActive 1; Replace keeps one run)"},
	} {
		t.Run(name, func(t *testing.T) {
			errs := validateMaxActive(v1alpha1.ScheduledJobSpec{MaxActive: tc.n, ConcurrencyPolicy: tc.policy}, path)
			if got := errs.ToAggregate(); (got == nil) != (tc.refused == "") || (got != nil && got.Error() != tc.refused) {
				t.Errorf("errors %v, want %q", got, tc.refused)
			}
		})
	}
}

// TestStartObjective: within, percent and windowDays out of their bounds
// are each refused with the field's path and value.
func TestStartObjective(t *testing.T) {
	path := field.NewPath("spec", "startObjective")
	objective := func(within time.Duration, percent string, days int32) *v1alpha1.StartObjective {
		return &v1alpha1.StartObjective{Within: metav1.Duration{Duration: within}, Percent: percent, WindowDays: days}
	}
	for name, tc := range map[string]struct {
		objective *v1alpha1.StartObjective
		refused   string
	}{
		"unset":                 {},
		"99% within 30s":        {objective: objective(30*time.Second, "99", 0)},
		"99.95% within 1h, 31d": {objective: objective(time.Hour, "99.95", 31)},
		"within 0":              {objective: objective(0, "99", 7), refused: `spec.startObjective.within: Invalid value: "0s": must be more than 0 and at most 1h0m0s`},
		"within 2h":             {objective: objective(2*time.Hour, "99", 7), refused: `spec.startObjective.within: Invalid value: "2h0m0s": must be more than 0 and at most 1h0m0s`},
		"percent 100":           {objective: objective(time.Minute, "100", 7), refused: `spec.startObjective.percent: Invalid value: "100": must be a number more than 0 and less than 100, such as "99" or "99.5"`},
		"percent 0":             {objective: objective(time.Minute, "0.0", 7), refused: `spec.startObjective.percent: Invalid value: "0.0": must be a number`},
		"percent with a % sign": {objective: objective(time.Minute, "99%", 7), refused: `spec.startObjective.percent: Invalid value: "99%": must be a number`},
		"percent NaN":           {objective: objective(time.Minute, "NaN", 7), refused: `spec.startObjective.percent: Invalid value: "NaN": must be a number`},
		"windowDays 32":         {objective: objective(time.Minute, "99", 32), refused: "spec.startObjective.windowDays: Invalid value: 32: must be between 1 and 31"},
		"windowDays below 1":    {objective: objective(time.Minute, "99", -1), refused: "spec.startObjective.windowDays: Invalid value: -1: must be between 1 and 31"},
	} {
		t.Run(name, func(t *testing.T) {
			got := validateStartObjective(tc.objective, path).ToAggregate()
			if (got == nil) != (tc.refused == "") || (got != nil && !strings.HasPrefix(got.Error(), tc.refused)) {
				t.Errorf("errors %v, want %q", got, tc.refused)
			}
		})
	}
}

// TestRunDeadline: one of after and at, each in bounds, refused with the
// field's path and value; a starting deadline that leaves no time warned
// about.
func TestRunDeadline(t *testing.T) {
	path := field.NewPath("spec", "deadline")
	after := func(d time.Duration) *v1alpha1.Deadline {
		return &v1alpha1.Deadline{After: &metav1.Duration{Duration: d}}
	}
	for name, tc := range map[string]struct {
		deadline *v1alpha1.Deadline
		starting *int64
		refused  string
		warned   string
	}{
		"unset":           {},
		"4h after":        {deadline: after(4 * time.Hour)},
		"by 07:00":        {deadline: &v1alpha1.Deadline{At: "07:00"}},
		"neither":         {deadline: &v1alpha1.Deadline{}, refused: "spec.deadline: Required value: set after (such as 4h after each run's time) or at (a time of day such as 07:00)"},
		"both":            {deadline: &v1alpha1.Deadline{After: &metav1.Duration{Duration: time.Hour}, At: "07:00"}, refused: `spec.deadline: Invalid value: "after: 1h0m0s, at: 07:00": set after or at, not both`},
		"after 0":         {deadline: after(0), refused: `spec.deadline.after: Invalid value: "0s": must be more than 0 and at most 168h0m0s`},
		"after 8 days":    {deadline: after(192 * time.Hour), refused: `spec.deadline.after: Invalid value: "192h0m0s": must be more than 0`},
		"at 24:00":        {deadline: &v1alpha1.Deadline{At: "24:00"}, refused: `spec.deadline.at: Invalid value: "24:00": must be a time of day as HH:MM, such as 07:00`},
		"at 7:00":         {deadline: &v1alpha1.Deadline{At: "7:00"}, refused: `spec.deadline.at: Invalid value: "7:00": must be a time of day as HH:MM`},
		"starting later":  {deadline: after(time.Hour), starting: ptr.To[int64](3600), warned: "spec.deadline.after: startingDeadlineSeconds 3600 lets a run start 1h0m0s after its time"},
		"starting before": {deadline: after(time.Hour), starting: ptr.To[int64](600)},
	} {
		t.Run(name, func(t *testing.T) {
			errs, warnings := validateRunDeadline(v1alpha1.ScheduledJobSpec{Deadline: tc.deadline, StartingDeadlineSeconds: tc.starting}, path)
			if got := errs.ToAggregate(); (got == nil) != (tc.refused == "") || (got != nil && !strings.Contains(got.Error(), tc.refused)) {
				t.Errorf("errors %v, want %q", got, tc.refused)
			}
			if warned := strings.Join(warnings, "; "); (warned == "") != (tc.warned == "") || !strings.HasPrefix(warned, tc.warned) {
				t.Errorf("warnings %q, want %q", warned, tc.warned)
			}
		})
	}
}
