package validation

import (
	"strings"
	"testing"

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
