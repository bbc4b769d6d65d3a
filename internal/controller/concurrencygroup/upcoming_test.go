package concurrencygroup

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestCronJobRunMoved: a member CronJob's change reconciles its group when
// it moves the CronJob's next run (schedule, zone, suspension) or its
// place in a group (group, priority), not when CronJob warm-up writes its
// state annotation.
func TestCronJobRunMoved(t *testing.T) {
	member := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "team",
		Annotations: map[string]string{v1alpha1.GroupLabel: "db", v1alpha1.WarmUpLeadAnnotation: "10m"}},
		Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
	tests := map[string]struct {
		change func(*batchv1.CronJob)
		moved  bool
	}{
		"schedule":      {func(cj *batchv1.CronJob) { cj.Spec.Schedule = "30 * * * *" }, true},
		"time zone":     {func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Europe/Amsterdam") }, true},
		"suspended":     {func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }, true},
		"another group": {func(cj *batchv1.CronJob) { cj.Annotations[v1alpha1.GroupLabel] = "cache" }, true},
		"a cluster group": {func(cj *batchv1.CronJob) {
			delete(cj.Annotations, v1alpha1.GroupLabel)
			cj.Annotations[v1alpha1.ClusterGroupLabel] = "db"
		}, true},
		"priority":         {func(cj *batchv1.CronJob) { cj.Annotations[v1alpha1.GroupPriorityAnnotation] = "5" }, true},
		"warm-up state":    {func(cj *batchv1.CronJob) { cj.Annotations[v1alpha1.WarmUpStateAnnotation] = `{"warmUp":{}}` }, false},
		"last schedule":    {func(cj *batchv1.CronJob) { cj.Status.LastScheduleTime = &metav1.Time{Time: time.Now()} }, false},
		"nothing it reads": {func(cj *batchv1.CronJob) { cj.Labels = map[string]string{"team": "a"} }, false},
	}
	for name, tt := range tests {
		updated := member.DeepCopy()
		tt.change(updated)
		if got := cronJobRunMoved.Update(event.UpdateEvent{ObjectOld: member, ObjectNew: updated}); got != tt.moved {
			t.Errorf("%s: moved %v, want %v", name, got, tt.moved)
		}
	}
}
