package backfill

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestDeletedBackfillStartsNothing: a Backfill being deleted (its Jobs go
// with it, by their owner reference) starts no more runs; the same one not
// being deleted does.
func TestDeletedBackfillStartsNothing(t *testing.T) {
	from := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for _, deleting := range []bool{false, true} {
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: "team", UID: "sj-uid"},
			Spec: v1alpha1.ScheduledJobSpec{Schedule: "* * * * *", SuccessfulJobsHistoryLimit: ptr.To[int32](3)}}
		bf := &v1alpha1.Backfill{ObjectMeta: metav1.ObjectMeta{Name: "bf", Namespace: "team", UID: "bf-uid", Finalizers: []string{"test/hold"}},
			Spec: v1alpha1.BackfillSpec{ScheduledJobName: "report", From: metav1.Time{Time: from}, To: metav1.Time{Time: from.Add(10 * time.Minute)}, MaxActive: 3}}
		api := newFakeClient().WithStatusSubresource(&v1alpha1.Backfill{}).WithObjects(sj, bf).Build()
		ctx := context.Background()
		if deleting {
			if err := api.Delete(ctx, bf); err != nil { // held by the finalizer: deletionTimestamp set
				t.Fatal(err)
			}
		}
		c := NewController(api, api, clocktesting.NewFakePassiveClock(from.AddDate(0, 0, 7)), record.NewFakeRecorder(10))
		if _, err := c.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(bf)}); err != nil {
			t.Fatal(err)
		}
		var jobs batchv1.JobList
		if err := api.List(ctx, &jobs); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 3, true: 0}[deleting]; len(jobs.Items) != want {
			t.Errorf("deleting %v: %d Jobs created, want %d", deleting, len(jobs.Items), want)
		}
	}
}
