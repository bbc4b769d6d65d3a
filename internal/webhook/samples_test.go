package webhook

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/internal/validation"
)

// TestSamplesAreAdmitted: every ScheduledJob, Backfill and concurrency group in
// config/samples, which make dev applies, decodes without unknown fields
// and passes admission.
func TestSamplesAreAdmitted(t *testing.T) {
	checked := 0
	for _, sample := range testenv.SampleDocuments(t) {
		file, doc := sample.File, sample.Doc
		if strings.Contains(doc, "kind: Backfill") {
			bf := &v1alpha1.Backfill{}
			if err := yaml.UnmarshalStrict([]byte(doc), bf); err != nil {
				t.Errorf("%s: %v", file, err)
			} else if errs := validation.ValidateBackfill(bf, time.Now()); len(errs) > 0 {
				t.Errorf("%s: %s refused: %v", file, bf.Name, errs)
			}
			checked++
			continue
		}
		if checkGroupSample(t, file, doc) {
			checked++
			continue
		}
		if !strings.Contains(doc, "kind: ScheduledJob") {
			continue
		}
		sj := &v1alpha1.ScheduledJob{}
		if err := yaml.UnmarshalStrict([]byte(doc), sj); err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if errs, _ := validation.Validate(sj, nil, time.Now()); len(errs) > 0 {
			t.Errorf("%s: %s refused: %v", file, sj.Name, errs)
		}
		checked++
	}
	t.Logf("%d sample ScheduledJobs, Backfills and concurrency groups admitted", checked)
}

// checkGroupSample decodes and validates doc if it is a concurrency group,
// and reports whether it was one.
func checkGroupSample(t *testing.T, file, doc string) bool {
	t.Helper()
	var errs field.ErrorList
	var err error
	switch {
	case strings.Contains("\n"+doc+"\n", "\nkind: ClusterConcurrencyGroup\n"):
		group := &v1alpha1.ClusterConcurrencyGroup{}
		if err = yaml.UnmarshalStrict([]byte(doc), group); err == nil {
			errs = validation.ValidateClusterGroupSpec(group.Spec)
		}
	case strings.Contains("\n"+doc+"\n", "\nkind: ConcurrencyGroup\n"):
		group := &v1alpha1.ConcurrencyGroup{}
		if err = yaml.UnmarshalStrict([]byte(doc), group); err == nil {
			errs = validation.ValidateGroupSpec(group.Spec)
		}
	default:
		return false
	}
	if err != nil {
		t.Errorf("%s: %v", file, err)
	} else if len(errs) > 0 {
		t.Errorf("%s: refused: %v", file, errs)
	}
	return true
}
