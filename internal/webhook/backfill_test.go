//go:build integration

package webhook

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestBackfillAdmission: a Backfill is refused, naming the field and its
// value, for times in the future (the webhook), a range backwards, bounds
// and a redo not in the enum (the CRD), and any change of its spec (CEL);
// one of a ScheduledJob that does not exist is admitted with a warning.
func TestBackfillAdmission(t *testing.T) {
	ctx := context.Background()
	past := metav1.NewTime(time.Now().Add(-48 * time.Hour).Truncate(time.Minute))
	backfill := func(name string, mutate func(*v1alpha1.Backfill)) *v1alpha1.Backfill {
		bf := &v1alpha1.Backfill{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1alpha1.BackfillSpec{ScheduledJobName: "absent", From: past, To: metav1.NewTime(past.Add(time.Hour)), MaxActive: 2}}
		if mutate != nil {
			mutate(bf)
		}
		return bf
	}
	for _, tc := range []struct {
		bf   *v1alpha1.Backfill
		want string
	}{
		{backfill("future", func(bf *v1alpha1.Backfill) { bf.Spec.To = metav1.NewTime(time.Now().Add(time.Hour)) }), "spec.to: Invalid value:"},
		{backfill("backwards", func(bf *v1alpha1.Backfill) { bf.Spec.To = metav1.NewTime(past.Add(-time.Hour)) }), "spec.to must not be before spec.from"},
		{backfill("too-many-at-once", func(bf *v1alpha1.Backfill) { bf.Spec.MaxActive = 101 }), "spec.maxActive: Invalid value: 101"},
		{backfill("redo-some", func(bf *v1alpha1.Backfill) { bf.Spec.Redo = "Some" }), `spec.redo: Unsupported value: "Some"`},
		{backfill("no-name", func(bf *v1alpha1.Backfill) { bf.Spec.ScheduledJobName = "" }), "spec.scheduledJobName"},
	} {
		err := apiClient.Create(ctx, tc.bf)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.bf.Name, err, tc.want)
		}
	}
	warnings.take()
	bf := backfill("of-an-absent-one", nil)
	if err := apiClient.Create(ctx, bf); err != nil {
		t.Fatal(err)
	}
	if got := warnings.take(); len(got) != 1 || !strings.Contains(got[0], `spec.scheduledJobName: ScheduledJob "absent" does not exist in namespace "default"`) {
		t.Errorf("warnings %q", got)
	}
	bf.Spec.MaxActive = 3
	if err := apiClient.Update(ctx, bf); err == nil || !strings.Contains(err.Error(), "a Backfill's spec cannot be changed") {
		t.Errorf("changing the spec: %v", err)
	}
}
