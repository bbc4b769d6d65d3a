package scheduledjob

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// statusOverlay lays over the cache the statuses this controller wrote or
// deferred that the cache does not show yet, as upstream's
// ControllerExpectations lay over its informers the creations and
// deletions it expects to see. A Job's creation or deletion often triggers
// the next reconcile before the status write reaches the cache; planning
// from the older status would report a Job that Replace deleted as missing
// (MissingJob), count a run twice, or write the same status again. And a
// reconcile that started a run may leave its status for the next one to
// write (deferStatus), so that many runs due at one instant all get their
// Jobs before the first status write.
//
// It does no I/O: the controller tells it what it wrote and what the cache
// shows.
type statusOverlay struct {
	// written is the last status written per ScheduledJob, until the cache
	// shows it (types.NamespacedName -> *writtenStatus).
	written sync.Map
	// deferred is the status a reconcile left for the next one to write
	// (types.NamespacedName -> deferredStatus).
	deferred sync.Map
}

// writtenStatus is the last status written for a ScheduledJob, the
// resourceVersion it was written over (base) and the one it produced.
type writtenStatus struct {
	uid           types.UID
	base, written string
	status        v1alpha1.ScheduledJobStatus
}

// seenIn reports whether cached is the object the write produced, or a
// re-created one: planning from cached then needs the write no more.
// (Resource versions are opaque, so a cache that has moved past the write
// is not recognized; the next write replaces the entry.)
func (w *writtenStatus) seenIn(cached *v1alpha1.ScheduledJob) bool {
	return w.uid != cached.UID || w.written == cached.ResourceVersion
}

// deferredStatus is a status computed but left for the next reconcile to
// write.
type deferredStatus struct {
	uid    types.UID
	status v1alpha1.ScheduledJobStatus
}

// view returns, for a ScheduledJob as the cache has it, the object as the
// API server has it as far as this controller knows (stored: the cached one,
// or, when the cache still holds the object the last write was made over,
// that object with the written status and resourceVersion), and the object
// to plan from (current: stored with the deferred status, if any; only this
// controller writes status, so a deferred status is newer than the stored
// one).
func (o *statusOverlay) view(cached *v1alpha1.ScheduledJob) (stored, current *v1alpha1.ScheduledJob) {
	stored = o.withWritten(cached)
	current = stored
	if last, ok := o.deferred.Load(client.ObjectKeyFromObject(cached)); ok && last.(deferredStatus).uid == cached.UID {
		current = withStatus(stored, last.(deferredStatus).status)
	}
	return stored, current
}

func (o *statusOverlay) withWritten(cached *v1alpha1.ScheduledJob) *v1alpha1.ScheduledJob {
	key := client.ObjectKeyFromObject(cached)
	last, ok := o.written.Load(key)
	if !ok {
		return cached
	}
	w := last.(*writtenStatus)
	if w.seenIn(cached) {
		o.written.CompareAndDelete(key, last)
		return cached
	}
	if w.base != cached.ResourceVersion {
		// The cache has seen something after the write (the write was the
		// next change after base).
		return cached
	}
	current := withStatus(cached, w.status)
	current.ResourceVersion = w.written
	return current
}

// wrote remembers that status was written over base, producing the
// resourceVersion written.
func (o *statusOverlay) wrote(base *v1alpha1.ScheduledJob, written string, status v1alpha1.ScheduledJobStatus) {
	o.written.Store(client.ObjectKeyFromObject(base), &writtenStatus{uid: base.UID, base: base.ResourceVersion, written: written, status: status})
}

// observed forgets the remembered write of a ScheduledJob once the cache
// holds the object that write produced: view no longer needs it, and ten
// thousand ScheduledJobs would otherwise each keep a copy of their status
// between runs. The informer calls it with each update it caches.
func (o *statusOverlay) observed(obj any) {
	sj, ok := obj.(*v1alpha1.ScheduledJob)
	if !ok {
		return
	}
	key := client.ObjectKeyFromObject(sj)
	if last, ok := o.written.Load(key); ok && last.(*writtenStatus).seenIn(sj) {
		o.written.CompareAndDelete(key, last)
	}
}

// deferStatus remembers a status left for the next reconcile to write.
func (o *statusOverlay) deferStatus(sj *v1alpha1.ScheduledJob, status v1alpha1.ScheduledJobStatus) {
	o.deferred.Store(client.ObjectKeyFromObject(sj), deferredStatus{uid: sj.UID, status: status})
}

// undefer forgets a deferred status once a status is written.
func (o *statusOverlay) undefer(key types.NamespacedName) { o.deferred.Delete(key) }

// forget forgets everything about a deleted ScheduledJob.
func (o *statusOverlay) forget(key types.NamespacedName) {
	o.written.Delete(key)
	o.deferred.Delete(key)
}

// withStatus returns a copy of sj with status.
func withStatus(sj *v1alpha1.ScheduledJob, status v1alpha1.ScheduledJobStatus) *v1alpha1.ScheduledJob {
	out := sj.DeepCopy()
	status.DeepCopyInto(&out.Status)
	return out
}
