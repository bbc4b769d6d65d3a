package v1alpha1

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestGroupRefHasNoNamespace: a member names its group without a
// namespace, and a ConcurrencyGroup is always the one in the member's own
// namespace, so a tenant cannot join another namespace's group
// (docs/security.md). A namespace field added to the reference fails here.
func TestGroupRefHasNoNamespace(t *testing.T) {
	ref := reflect.TypeFor[ConcurrencyGroupRef]()
	for i := range ref.NumField() {
		field := ref.Field(i)
		if tag := field.Tag.Get("json"); strings.Contains(strings.ToLower(field.Name), "namespace") || strings.HasPrefix(tag, "namespace") {
			t.Errorf("ConcurrencyGroupRef.%s (json %q): a member could name another namespace's group", field.Name, tag)
		}
	}
	for _, tc := range []struct {
		ref  ConcurrencyGroupRef
		want types.NamespacedName
	}{
		{ConcurrencyGroupRef{Name: "db"}, types.NamespacedName{Namespace: "team-a", Name: "db"}},
		{ConcurrencyGroupRef{Kind: KindConcurrencyGroup, Name: "db"}, types.NamespacedName{Namespace: "team-a", Name: "db"}},
		{ConcurrencyGroupRef{Kind: KindClusterConcurrencyGroup, Name: "db"}, types.NamespacedName{Name: "db"}},
	} {
		if got := tc.ref.Key("team-a"); got != tc.want {
			t.Errorf("%+v.Key(team-a) = %v, want %v", tc.ref, got, tc.want)
		}
	}
}
