package scheduledjob

import (
	"hash/fnv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
)

// knownObjects lays over the cache what this controller knows of each
// ScheduledJob that the cache may not show yet, as upstream's
// ControllerExpectations lay over its informers the creations and
// deletions it expects:
//
//   - newest: the newest copy the controller got from the API server
//     itself, the answer to a write or a live read. The view is whichever
//     of it and the cached copy has the higher resourceVersion, so that a
//     cache behind by one write or by several is never taken for the API
//     server;
//   - deferred: a status computed and left for the next reconcile to write
//     (deferStatus), newer than any stored one, since only this controller
//     writes a status it defers;
//   - deletedJobs: the Jobs this controller deleted that its cache may
//     still list: planning from them would list a Job Replace deleted in
//     status.active again, and report it missing once the cache drops it;
//   - confirmed: the ScheduledJobs whose status this controller has read
//     from, or written to, the API server since it started leading, and not
//     had a write refused since. It starts a run only from such a view: a
//     new leader's cache may predate what the last leader recorded before
//     deleting a run's Job.
//
// It does no I/O: the controller tells it what it read, wrote and cached.
type knownObjects struct {
	newest    sync.Map // types.NamespacedName -> *v1alpha1.ScheduledJob
	deferred  sync.Map // types.NamespacedName -> deferredStatus
	confirmed sync.Map // types.NamespacedName -> struct{}
	// deletedJobs: types.UID of a Job -> *deletedJob
	deletedJobs sync.Map
	// locks keep observed from forgetting a copy between a reconcile's
	// read of the cache and its view (striped by key).
	locks [64]sync.Mutex
}

// lock locks the key against observed and returns the unlock.
func (k *knownObjects) lock(key types.NamespacedName) func() {
	h := fnv.New32a()
	h.Write([]byte(key.String()))
	m := &k.locks[h.Sum32()%uint32(len(k.locks))]
	m.Lock()
	return m.Unlock
}

// deletedJob is a Job this controller deleted, until its cache has shown
// the deletion.
type deletedJob struct {
	owner types.UID
	at    time.Time
	// cached is set once the cache listed the Job after its deletion: the
	// cache was behind it; once it lists it no more, it has caught up.
	cached bool
}

// forgetDeletedAfter bounds how long a deleted Job is remembered when the
// cache never showed it (created and deleted while the cache was behind).
const forgetDeletedAfter = 10 * time.Minute

// deleted remembers a Job of sj that this controller deleted (or found
// gone).
func (k *knownObjects) deleted(sj *v1alpha1.ScheduledJob, job *batchv1.Job, now time.Time) {
	k.deletedJobs.Store(job.UID, &deletedJob{owner: sj.UID, at: now})
}

// withoutDeleted drops from sj's Jobs as the cache lists them those this
// controller deleted, and returns those it remembers.
func (k *knownObjects) withoutDeleted(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, now time.Time) (kept []*batchv1.Job, deleted map[types.UID]bool) {
	inStatus := map[types.UID]bool{}
	for _, ref := range sj.Status.Active {
		inStatus[ref.UID] = true
	}
	listed := map[types.UID]bool{}
	for _, job := range jobs {
		listed[job.UID] = true
		if _, gone := k.deletedJobs.Load(job.UID); !gone {
			kept = append(kept, job)
		}
	}
	deleted = map[types.UID]bool{}
	k.deletedJobs.Range(func(key, value any) bool {
		uid, d := key.(types.UID), value.(*deletedJob)
		switch {
		case d.owner != sj.UID:
		case listed[uid]:
			d.cached = true
			deleted[uid] = true
		case !inStatus[uid] && (d.cached || now.Sub(d.at) > forgetDeletedAfter):
			k.deletedJobs.Delete(uid)
		default:
			deleted[uid] = true
		}
		return true
	})
	return kept, deleted
}

// deferredStatus is a status computed but left for the next reconcile to
// write.
type deferredStatus struct {
	uid    types.UID
	status v1alpha1.ScheduledJobStatus
}

// view returns, for a ScheduledJob as the cache has it, the object as the
// API server has it as far as this controller knows (stored), and the
// object to plan from (current: stored with the deferred status, if any).
func (k *knownObjects) view(cached *v1alpha1.ScheduledJob) (stored, current *v1alpha1.ScheduledJob) {
	key := client.ObjectKeyFromObject(cached)
	stored = cached
	if last, ok := k.newest.Load(key); ok {
		known := last.(*v1alpha1.ScheduledJob)
		if known.UID == cached.UID && jobcontrol.NewerVersion(known.ResourceVersion, cached.ResourceVersion) {
			stored = known.DeepCopy()
		} else {
			// The cache has caught up, or holds a re-created object.
			k.newest.CompareAndDelete(key, last)
		}
	}
	current = stored
	if last, ok := k.deferred.Load(key); ok && last.(deferredStatus).uid == cached.UID {
		current = withStatus(stored, last.(deferredStatus).status)
	}
	return stored, current
}

// saw remembers a copy read from or written to the API server: the
// ScheduledJob's status there is confirmed.
func (k *knownObjects) saw(obj *v1alpha1.ScheduledJob) {
	key := client.ObjectKeyFromObject(obj)
	k.confirmed.Store(key, struct{}{})
	if last, ok := k.newest.Load(key); ok {
		known := last.(*v1alpha1.ScheduledJob)
		if known.UID == obj.UID && !jobcontrol.NewerVersion(obj.ResourceVersion, known.ResourceVersion) {
			return
		}
	}
	k.newest.Store(key, obj.DeepCopy())
}

// isConfirmed reports whether the ScheduledJob's status has been read from
// or written to the API server since the controller started, without a
// refused write since.
func (k *knownObjects) isConfirmed(key types.NamespacedName) bool {
	_, ok := k.confirmed.Load(key)
	return ok
}

// refused forgets the confirmation after a write was refused for a
// conflict: someone else wrote meanwhile.
func (k *knownObjects) refused(key types.NamespacedName) { k.confirmed.Delete(key) }

// observed forgets the newest copy once the cache holds it, so that ten
// thousand ScheduledJobs do not each keep a copy between runs. The
// informer calls it with each update it caches.
func (k *knownObjects) observed(obj any) {
	sj, ok := obj.(*v1alpha1.ScheduledJob)
	if !ok {
		return
	}
	key := client.ObjectKeyFromObject(sj)
	defer k.lock(key)()
	if last, ok := k.newest.Load(key); ok {
		known := last.(*v1alpha1.ScheduledJob)
		if known.UID != sj.UID || !jobcontrol.NewerVersion(known.ResourceVersion, sj.ResourceVersion) {
			k.newest.CompareAndDelete(key, last)
		}
	}
}

// deferStatus remembers a status left for the next reconcile to write.
func (k *knownObjects) deferStatus(sj *v1alpha1.ScheduledJob, status v1alpha1.ScheduledJobStatus) {
	k.deferred.Store(client.ObjectKeyFromObject(sj), deferredStatus{uid: sj.UID, status: status})
}

// undefer forgets a deferred status once a status is written.
func (k *knownObjects) undefer(key types.NamespacedName) { k.deferred.Delete(key) }

// forget forgets everything about a deleted ScheduledJob.
func (k *knownObjects) forget(key types.NamespacedName) {
	k.newest.Delete(key)
	k.deferred.Delete(key)
	k.confirmed.Delete(key)
}

// withStatus returns a copy of sj with status.
func withStatus(sj *v1alpha1.ScheduledJob, status v1alpha1.ScheduledJobStatus) *v1alpha1.ScheduledJob {
	out := sj.DeepCopy()
	status.DeepCopyInto(&out.Status)
	return out
}
