package validation

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// FuzzValidate decodes any document as each kind a user writes
// (ScheduledJob, Backfill, ConcurrencyGroup, ClusterConcurrencyGroup) and
// validates it, on create and on an update to itself: nothing panics, and
// every error names a field of the object and says what is wrong, as the
// webhook returns it to kubectl.
func FuzzValidate(f *testing.F) {
	for _, sample := range testenv.SampleDocuments(f) {
		f.Add([]byte(sample.Doc), int64(1767225600))
	}
	f.Add([]byte(`{"spec":{"schedule":"TZ=Nowhere/City H(70-3) * * * *","timeZone":"Mars/Olympus","startingDeadlineSeconds":-4,"runAt":"soon"}}`), int64(0))
	f.Add([]byte(`{"spec":{"schedule":"@every 1s","warmUp":{"lead":"-5m","strategy":"Nope"},"concurrencyGroup":{"name":""}}}`), int64(-1))
	f.Add([]byte(`{"spec":{"schedule":"0 2 * * *","startObjective":{"within":"-30s","percent":"NaN","windowDays":99},"deadline":{"after":"4h","at":"25:61"}}}`), int64(1767225600))
	f.Add([]byte(`{"spec":{"schedule":"0 2 * * *","startObjective":{"within":"30s","percent":"99.5"},"deadline":{"at":"07:00"},"startingDeadlineSeconds":99999}}`), int64(1767225600))
	f.Fuzz(func(t *testing.T, doc []byte, unix int64) {
		now := time.Unix(unix%(1<<40), 0).UTC()
		var sj v1alpha1.ScheduledJob
		if yaml.Unmarshal(doc, &sj) == nil {
			errs, _ := Validate(&sj, nil, now)
			checkErrors(t, "ScheduledJob create", errs)
			errs, _ = Validate(&sj, &sj, now)
			checkErrors(t, "ScheduledJob update", errs)
		}
		var bf v1alpha1.Backfill
		if yaml.Unmarshal(doc, &bf) == nil {
			checkErrors(t, "Backfill", ValidateBackfill(&bf, now))
		}
		var group v1alpha1.ConcurrencyGroup
		if yaml.Unmarshal(doc, &group) == nil {
			checkErrors(t, "ConcurrencyGroup", ValidateGroupSpec(group.Spec))
		}
		var clusterGroup v1alpha1.ClusterConcurrencyGroup
		if yaml.Unmarshal(doc, &clusterGroup) == nil {
			checkErrors(t, "ClusterConcurrencyGroup", ValidateClusterGroupSpec(clusterGroup.Spec))
		}
	})
}

// checkErrors: each error names a field path within the object and has a
// message or a value to show.
func checkErrors(t *testing.T, what string, errs field.ErrorList) {
	t.Helper()
	for _, err := range errs {
		if err == nil {
			t.Fatalf("%s: a nil error in %v", what, errs)
		}
		if !strings.HasPrefix(err.Field, "spec") && !strings.HasPrefix(err.Field, "metadata") {
			t.Errorf("%s: error %q names the field %q, not one of the object's", what, err.Error(), err.Field)
		}
		if err.Error() == "" || (err.Detail == "" && err.BadValue == nil && err.Type != field.ErrorTypeRequired) {
			t.Errorf("%s: error on %s says nothing: %#v", what, err.Field, err)
		}
	}
}
