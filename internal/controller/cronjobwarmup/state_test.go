package cronjobwarmup

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestStateOf: the annotation is the state, unless the controller wrote a
// newer one the cache does not show yet; an annotation that cannot be read
// is no state.
func TestStateOf(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC))
	cronJob := func(rv, annotation string) *batchv1.CronJob {
		return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly", UID: "uid-1", ResourceVersion: rv,
			Annotations: map[string]string{v1alpha1.WarmUpStateAnnotation: annotation}}}
	}
	stored := `{"problem":"from the annotation"}`
	var w writtenStates
	if got := w.stateOf(cronJob("10", stored)); got.Problem != "from the annotation" {
		t.Errorf("nothing written: %+v", got)
	}
	if got := w.stateOf(cronJob("10", "{not json")); got.Problem != "" || got.WarmUp != nil {
		t.Errorf("unreadable annotation: %+v, want no state", got)
	}
	cj := cronJob("10", stored)
	w.m.Store(client.ObjectKeyFromObject(cj), writtenState{uid: "uid-1", resourceVersion: "12",
		state: v1alpha1.CronJobWarmUpState{WarmUp: &v1alpha1.WarmUpStatus{ScheduledTime: at}}})
	if got := w.stateOf(cj); got.WarmUp == nil || got.Problem != "" {
		t.Errorf("cache behind the write: %+v, want the write", got)
	}
	if got := w.stateOf(cronJob("12", stored)); got.Problem != "from the annotation" {
		t.Errorf("cache caught up: %+v, want the annotation", got)
	}
	other := cronJob("5", stored)
	other.UID = "uid-2" // deleted and created again
	if got := w.stateOf(other); got.Problem != "from the annotation" {
		t.Errorf("another CronJob of the name: %+v, want its annotation", got)
	}
}

// TestOwnStateWritesAreNotChanges: a write of the state annotation alone
// does not reconcile the CronJob again; any other change does.
func TestOwnStateWritesAreNotChanges(t *testing.T) {
	old := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", ResourceVersion: "1",
		Annotations: map[string]string{v1alpha1.WarmUpLeadAnnotation: "10m"}}}
	stateWritten := old.DeepCopy()
	stateWritten.ResourceVersion = "2"
	stateWritten.Annotations[v1alpha1.WarmUpStateAnnotation] = "{}"
	suspended := stateWritten.DeepCopy()
	suspended.Spec.Suspend = new(bool)
	if notOnlyStateWritten.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: stateWritten}) {
		t.Error("the state write reconciles the CronJob again")
	}
	if !notOnlyStateWritten.Update(event.UpdateEvent{ObjectOld: stateWritten, ObjectNew: suspended}) {
		t.Error("a spec change is ignored")
	}
}
