package cronjobwarmup

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
)

// A CronJob's warm-up state lives in its warmup.ontime.dev/state
// annotation, not in the controller's memory: a new leader, after a
// failover or an upgrade, goes on from it (no second WarmUpReady event, no
// run measured twice, a CapacityBuffer left behind still found), and it
// goes when the CronJob goes. An annotation rather than an object of its
// own (a ConfigMap per CronJob) because it needs no create or update right
// on another kind across the cluster, only patch on CronJobs, and leaves
// nothing behind; the CronJob's spec is never touched, and GitOps tools
// leave an annotation they do not manage alone.

// writtenStates remembers the state written on each CronJob with the
// resourceVersion the write produced (types.NamespacedName ->
// writtenState): until the cache shows that version, the reconcile goes on
// from what it wrote rather than the older annotation the cache has.
type writtenStates struct{ m sync.Map }

type writtenState struct {
	uid             types.UID
	resourceVersion string
	state           v1alpha1.CronJobWarmUpState
}

// stateOf is the CronJob's warm-up state: its annotation, or the
// controller's own write if the cache does not show that yet. An
// annotation that cannot be read (edited by hand) counts as no state: the
// next write replaces it.
func (w *writtenStates) stateOf(cj *batchv1.CronJob) v1alpha1.CronJobWarmUpState {
	if v, ok := w.m.Load(client.ObjectKeyFromObject(cj)); ok {
		written := v.(writtenState)
		if written.uid == cj.UID && jobcontrol.NewerVersion(written.resourceVersion, cj.ResourceVersion) {
			return *written.state.DeepCopy()
		}
	}
	var state v1alpha1.CronJobWarmUpState
	if value := cj.Annotations[v1alpha1.WarmUpStateAnnotation]; value != "" {
		if err := json.Unmarshal([]byte(value), &state); err != nil {
			return v1alpha1.CronJobWarmUpState{}
		}
	}
	return state
}

func (w *writtenStates) forget(key types.NamespacedName) { w.m.Delete(key) }

// writeState patches the state annotation when the state changed: one
// key of the CronJob's metadata, nothing else. An empty state removes it.
func (c *Controller) writeState(ctx context.Context, cj *batchv1.CronJob, old, state v1alpha1.CronJobWarmUpState) error {
	if equality.Semantic.DeepEqual(old, state) {
		return nil
	}
	var value any // JSON null removes the annotation
	if !equality.Semantic.DeepEqual(state, v1alpha1.CronJobWarmUpState{}) {
		encoded, err := json.Marshal(state)
		if err != nil {
			return err
		}
		value = string(encoded)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{v1alpha1.WarmUpStateAnnotation: value}}})
	if err != nil {
		return err
	}
	patched := cj.DeepCopy()
	if err := c.kubeClient.Patch(ctx, patched, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return client.IgnoreNotFound(err)
	}
	c.written.m.Store(client.ObjectKeyFromObject(cj), writtenState{uid: cj.UID, resourceVersion: patched.ResourceVersion, state: state})
	return nil
}

// measuredRun is the scheduled time of the latest run whose start was
// measured; zero if none.
func measuredRun(state v1alpha1.CronJobWarmUpState) time.Time {
	if state.LastRunStart == nil {
		return time.Time{}
	}
	return state.LastRunStart.ScheduledTime.Time
}

// notOnlyStateWritten passes every change to a CronJob except a write of
// the state annotation alone: the controller's own writes.
var notOnlyStateWritten = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	oldCJ, okOld := e.ObjectOld.(*batchv1.CronJob)
	newCJ, okNew := e.ObjectNew.(*batchv1.CronJob)
	if !okOld || !okNew {
		return true
	}
	return !equality.Semantic.DeepEqual(withoutState(oldCJ), withoutState(newCJ))
}}

// withoutState is the CronJob without its state annotation and the
// metadata every write changes.
func withoutState(cj *batchv1.CronJob) *batchv1.CronJob {
	out := cj.DeepCopy()
	delete(out.Annotations, v1alpha1.WarmUpStateAnnotation)
	if len(out.Annotations) == 0 {
		out.Annotations = nil
	}
	out.ResourceVersion, out.ManagedFields = "", nil
	return out
}
