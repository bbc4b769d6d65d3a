package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestConcurrencyGroupRef: a ScheduledJob's group must be nameable as a
// label value, and not with EarlyStart; refused with the field's path and
// value.
func TestConcurrencyGroupRef(t *testing.T) {
	path := field.NewPath("spec", "concurrencyGroup")
	for name, tc := range map[string]struct {
		spec    v1alpha1.ScheduledJobSpec
		refused string
	}{
		"unset": {},
		"db":    {spec: v1alpha1.ScheduledJobSpec{ConcurrencyGroup: &v1alpha1.ConcurrencyGroupRef{Name: "db"}}},
		"not a label value": {spec: v1alpha1.ScheduledJobSpec{ConcurrencyGroup: &v1alpha1.ConcurrencyGroupRef{Name: "DB_1"}},
			refused: `spec.concurrencyGroup.name: Invalid value: "DB_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		"with EarlyStart": {spec: v1alpha1.ScheduledJobSpec{ConcurrencyGroup: &v1alpha1.ConcurrencyGroupRef{Name: "db"}, WarmUp: &v1alpha1.WarmUp{Strategy: v1alpha1.WarmUpEarlyStart}},
			refused: `spec.concurrencyGroup: Invalid value: "db": not with warmUp strategy EarlyStart, whose Job is created before its time and cannot wait for the group; use Placeholder or CapacityBuffer`},
	} {
		t.Run(name, func(t *testing.T) {
			got := validateConcurrencyGroup(tc.spec, path).ToAggregate()
			if (got == nil) != (tc.refused == "") || (got != nil && got.Error() != tc.refused) {
				t.Errorf("errors %v, want %q", got, tc.refused)
			}
		})
	}
}

// TestGroupSpec: the per-value limit's key must be a label key, and its
// limit not above the group's.
func TestGroupSpec(t *testing.T) {
	for name, tc := range map[string]struct {
		spec    v1alpha1.ConcurrencyGroupSpec
		refused string
	}{
		"5":                 {spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 5}},
		"5, 2 per tenant":   {spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 5, LimitPerLabelValue: &v1alpha1.LabelValueLimit{Key: "example.com/tenant", MaxActive: 2}}},
		"not a label key":   {spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 5, LimitPerLabelValue: &v1alpha1.LabelValueLimit{Key: "a b", MaxActive: 2}}, refused: `spec.limitPerLabelValue.key: Invalid value: "a b": not a label key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		"above the group's": {spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 2, LimitPerLabelValue: &v1alpha1.LabelValueLimit{Key: "tenant", MaxActive: 3}}, refused: `spec.limitPerLabelValue.maxActive: Invalid value: 3: is above spec.maxActive (2), which bounds every value's runs anyway`},
	} {
		t.Run(name, func(t *testing.T) {
			got := ValidateGroupSpec(tc.spec).ToAggregate()
			if (got == nil) != (tc.refused == "") || (got != nil && got.Error() != tc.refused) {
				t.Errorf("errors %v, want %q", got, tc.refused)
			}
		})
	}
}
