package scheduledjob

import (
	"context"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Gathering: what the planner reads, from the cache, and from the API
// server where a cache behind would mislead it.

// jobsRead says where a plan reads a ScheduledJob's Jobs from.
type jobsRead int

const (
	// cachedJobs: the cache, and the API server for the Jobs status.active
	// names that the cache lacks (jobcontrol.ScheduledJobJobs).
	cachedJobs jobsRead = iota
	// liveActiveJobs: as cachedJobs, then the Jobs the cache shows
	// running that status.active names are read again from the API
	// server, one by name: whether a held run may start.
	liveActiveJobs
	// liveJobs: every Job from the API server (a Job reported missing).
	liveJobs
)

// gather reads what the planner looks at: the ScheduledJob's Jobs, its
// warm-up pods, its concurrency group's predictions, and the pods of the
// run whose start is being measured.
func (c *Controller) gather(ctx context.Context, sj *v1alpha1.ScheduledJob, now time.Time, read jobsRead) (planner.Input, error) {
	in, err := c.gatherRuns(ctx, sj, now, read)
	if err != nil {
		return in, err
	}
	var wanted v1alpha1.WarmUpStrategy
	if sj.Spec.WarmUp != nil {
		wanted = sj.Spec.WarmUp.Strategy
	}
	observed, err := c.warmUp.Gather(ctx, sj, wanted, warmupobjects.LastStrategy(sj.Status.WarmUp))
	if err != nil {
		return in, err
	}
	in.WarmUpPods, in.BufferAPI, in.WarmUpBuffers = observed.Pods, observed.BufferAPI, observed.Buffers
	if in.Group, err = c.group(ctx, sj); err != nil {
		return in, err
	}
	if job := planner.RunToMeasure(sj, in.Jobs, now); job != nil {
		in.RunPods, in.RunNode, err = jobcontrol.RunPods(ctx, c.apiReader, job)
	}
	return in, err
}

// gatherRuns reads what deciding the runs needs: the ScheduledJob's Jobs and
// the ScheduledJobs whose warm-up leads it learns from.
func (c *Controller) gatherRuns(ctx context.Context, sj *v1alpha1.ScheduledJob, now time.Time, read jobsRead) (planner.Input, error) {
	in := planner.Input{ScheduledJob: sj, Now: now, EarlyStartImage: c.earlyStartImage, Defaults: c.defaults}
	var cached client.Reader = c.kubeClient
	if read == liveJobs {
		cached = jobcontrol.ListedLive(c.apiReader, sj.Name)
	}
	jobs, readAhead, err := jobcontrol.ScheduledJobJobs(ctx, cached, c.apiReader, sj, sj.Status.Active)
	if err == nil && read == liveActiveJobs {
		var activeAhead bool
		jobs, activeAhead, err = c.liveActive(ctx, sj, jobs)
		readAhead = readAhead || activeAhead
	}
	if err != nil {
		c.emit(sj, []planner.Event{planner.FailedGetEvent(err)})
		return in, err
	}
	in.Jobs, in.Deleted = c.known.withoutDeleted(sj, jobs, now)
	var supersededAhead bool
	if in.Jobs, supersededAhead, err = c.withoutSuperseded(ctx, sj, in.Jobs); err != nil {
		return in, err
	}
	// The Jobs this controller deleted itself were counted before (or
	// were running, Replace's): leaving them out hides no run's end.
	in.CountFailures = !readAhead && !supersededAhead
	if read != liveJobs && (activeGone(sj, in.Jobs, in.Deleted) || (!in.CountFailures && sj.Spec.SuspendAfterFailures != nil)) {
		// A Job status.active names is gone from the API server: what
		// replaced it, if anything, must not be judged from a cache
		// behind. Or failures to count are among Jobs read ahead of the
		// cache, which shows no one moment. Either way every Job is
		// read at once from the API server, before the decision.
		return c.gatherRuns(ctx, sj, now, liveJobs)
	}
	in.LeadPeers, err = c.gatherLeadPeers(ctx, sj)
	return in, err
}

// activeGone reports whether a Job status.active lists (a claim aside) is
// neither among jobs nor one this controller deleted: the planner reports
// it missing unless a later run replaced it.
func activeGone(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, deleted map[types.UID]bool) bool {
	present := make(map[types.UID]bool, len(jobs))
	for _, job := range jobs {
		present[job.UID] = true
	}
	for _, ref := range sj.Status.Active {
		if ref.UID != "" && !present[ref.UID] && !deleted[ref.UID] {
			return true
		}
	}
	return false
}

// liveActive reads again from the API server each Job that status.active
// lists and the cache shows running: one GET by name each, where a list
// of the namespace's Jobs would read them all. A Job the API server no
// longer has is left out, as a deleted one is.
func (c *Controller) liveActive(ctx context.Context, sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job) ([]*batchv1.Job, bool, error) {
	recorded := map[types.UID]bool{}
	for _, ref := range sj.Status.Active {
		recorded[ref.UID] = ref.UID != ""
	}
	return c.readLive(ctx, jobs, func(job *batchv1.Job) bool {
		_, done := v1alpha1.JobFinished(job)
		return !done && recorded[job.UID]
	})
}

// withoutSuperseded reads from the API server the running Jobs the cache
// lists that status neither lists as active nor could have: runs older
// than status.lastScheduleTime, and runs asked for by hand (only a leader
// creates those, and records them). Such a Job is one a cache behind shows
// after another replica deleted it (a Replace, or a history cleanup): it
// is dropped when the API server no longer has it, instead of being listed
// in status.active again and reported missing later.
func (c *Controller) withoutSuperseded(ctx context.Context, sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job) ([]*batchv1.Job, bool, error) {
	last := sj.Status.LastScheduleTime
	if last == nil {
		last = &metav1.Time{}
	}
	recorded := map[types.UID]bool{}
	for _, ref := range sj.Status.Active {
		recorded[ref.UID] = true
	}
	return c.readLive(ctx, jobs, func(job *batchv1.Job) bool {
		scheduled, ok := v1alpha1.ScheduledTime(job)
		superseded := ok && (v1alpha1.IsTriggered(job) || scheduled.Before(last.Time))
		_, done := v1alpha1.JobFinished(job)
		return !done && !recorded[job.UID] && superseded
	})
}

// readLive replaces each of jobs that stale says a cache may show stale by
// the API server's copy, one GET by name each; a Job the API server no
// longer has, or has under another UID, is left out. ahead says that a
// copy differed from the cache's: the Jobs then show no one moment.
func (c *Controller) readLive(ctx context.Context, jobs []*batchv1.Job, stale func(*batchv1.Job) bool) (read []*batchv1.Job, ahead bool, err error) {
	read = make([]*batchv1.Job, 0, len(jobs))
	for _, job := range jobs {
		if !stale(job) {
			read = append(read, job)
			continue
		}
		live, err := jobcontrol.ReadLive(ctx, c.apiReader, client.ObjectKeyFromObject(job))
		switch {
		case err != nil:
			return nil, false, err
		case live == nil:
			ahead = true
		case live.UID == job.UID:
			read = append(read, live)
			ahead = ahead || live.ResourceVersion != job.ResourceVersion
		default:
			ahead = true
		}
	}
	return read, ahead, nil
}

// group reads, for a member with warm-up or a deadline (both place its
// runs at the group's predicted admissions), its concurrency group from
// the cache (warmupobjects.Group); the zero Group when it is not such a
// member, the group is not there, or its API is not served.
func (c *Controller) group(ctx context.Context, sj *v1alpha1.ScheduledJob) (warmup.Group, error) {
	if sj.Spec.ConcurrencyGroup == nil || (sj.Spec.WarmUp == nil && sj.Spec.Deadline == nil) {
		return warmup.Group{}, nil
	}
	return warmupobjects.Group(ctx, c.kubeClient, *sj.Spec.ConcurrencyGroup, sj.Namespace)
}

// knownObjects lays over the cache what this controller knows of each
// ScheduledJob that the cache may not show yet, as upstream's
// ControllerExpectations lay over its informers the creations and
// deletions it expects. It is the controller's one expectation cache; it
// does no I/O of its own: the controller tells it what it read, wrote and
// cached.
//
// Locking: mu guards every field. Each method holds it for its whole body
// and calls nothing that waits on the API server; view also holds it
// across its read of the cache, so that observed (the informer's
// callback) cannot forget a copy between that read and the lay-over.
type knownObjects struct {
	mu sync.Mutex
	// byKey is what the controller knows of each ScheduledJob, by key.
	byKey map[types.NamespacedName]*knownScheduledJob
	// deletedJobs are the Jobs this controller deleted that its cache may
	// still list, by UID: planning from them would list a Job Replace
	// deleted in status.active again, and report it missing once the
	// cache drops it.
	deletedJobs map[types.UID]*deletedJob
}

// knownScheduledJob is what the controller knows of one ScheduledJob.
type knownScheduledJob struct {
	// newest is the newest copy the controller got from the API server
	// itself, the answer to a write or a live read. The view is whichever
	// of it and the cached copy has the higher resourceVersion, so that a
	// cache behind by one write or by several is never taken for the API
	// server.
	newest *v1alpha1.ScheduledJob
	// deferred is a status computed and left for the next reconcile to
	// write (deferStatus), newer than any stored one, since only this
	// controller writes a status it defers.
	deferred *deferredStatus
	// confirmed is whether the controller has read the status from, or
	// written it to, the API server since it started leading, and not had
	// a write refused since. It starts a run only from such a view: a new
	// leader's cache may predate what the last leader recorded before
	// deleting a run's Job.
	confirmed bool
}

// entry returns key's knowledge, created empty when absent. mu is held.
func (k *knownObjects) entry(key types.NamespacedName) *knownScheduledJob {
	if k.byKey == nil {
		k.byKey = map[types.NamespacedName]*knownScheduledJob{}
	}
	e := k.byKey[key]
	if e == nil {
		e = &knownScheduledJob{}
		k.byKey[key] = e
	}
	return e
}

// prune drops key's knowledge once it holds nothing. mu is held.
func (k *knownObjects) prune(key types.NamespacedName) {
	if e := k.byKey[key]; e != nil && *e == (knownScheduledJob{}) {
		delete(k.byKey, key)
	}
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
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.deletedJobs == nil {
		k.deletedJobs = map[types.UID]*deletedJob{}
	}
	k.deletedJobs[job.UID] = &deletedJob{owner: sj.UID, at: now}
}

// withoutDeleted drops from sj's Jobs as the cache lists them those this
// controller deleted, and returns those it remembers.
func (k *knownObjects) withoutDeleted(sj *v1alpha1.ScheduledJob, jobs []*batchv1.Job, now time.Time) (kept []*batchv1.Job, deleted map[types.UID]bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	inStatus := map[types.UID]bool{}
	for _, ref := range sj.Status.Active {
		inStatus[ref.UID] = true
	}
	listed := map[types.UID]bool{}
	for _, job := range jobs {
		listed[job.UID] = true
		if _, gone := k.deletedJobs[job.UID]; !gone {
			kept = append(kept, job)
		}
	}
	deleted = map[types.UID]bool{}
	for uid, d := range k.deletedJobs {
		switch {
		case d.owner != sj.UID:
		case listed[uid]:
			d.cached = true
			deleted[uid] = true
		case !inStatus[uid] && (d.cached || now.Sub(d.at) > forgetDeletedAfter):
			delete(k.deletedJobs, uid)
		default:
			deleted[uid] = true
		}
	}
	return kept, deleted
}

// deferredStatus is a status computed but left for the next reconcile to
// write.
type deferredStatus struct {
	uid    types.UID
	status v1alpha1.ScheduledJobStatus
}

// view reads the ScheduledJob key as the cache has it (readCached), and
// returns the object as the API server has it as far as this controller
// knows (stored), and the object to plan from (current: stored with the
// deferred status, if any).
func (k *knownObjects) view(key types.NamespacedName, readCached func(*v1alpha1.ScheduledJob) error) (stored, current *v1alpha1.ScheduledJob, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	cached := &v1alpha1.ScheduledJob{}
	if err := readCached(cached); err != nil {
		return nil, nil, err
	}
	stored = cached
	e := k.byKey[key]
	if e == nil {
		return stored, stored, nil
	}
	if known := e.newest; known != nil {
		if known.UID == cached.UID && jobcontrol.NewerVersion(known.ResourceVersion, cached.ResourceVersion) {
			stored = known.DeepCopy()
		} else {
			// The cache has caught up, or holds a re-created object.
			e.newest = nil
		}
	}
	current = stored
	if d := e.deferred; d != nil && d.uid == cached.UID {
		current = withStatus(stored, d.status)
	}
	k.prune(key)
	return stored, current, nil
}

// saw remembers a copy read from or written to the API server: the
// ScheduledJob's status there is confirmed.
func (k *knownObjects) saw(obj *v1alpha1.ScheduledJob) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.entry(client.ObjectKeyFromObject(obj))
	e.confirmed = true
	if known := e.newest; known != nil && known.UID == obj.UID && !jobcontrol.NewerVersion(obj.ResourceVersion, known.ResourceVersion) {
		return
	}
	e.newest = obj.DeepCopy()
}

// isConfirmed reports whether the ScheduledJob's status has been read from
// or written to the API server since the controller started, without a
// refused write since.
func (k *knownObjects) isConfirmed(key types.NamespacedName) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.byKey[key]
	return e != nil && e.confirmed
}

// refused forgets the confirmation after a write was refused for a
// conflict: someone else wrote meanwhile.
func (k *knownObjects) refused(key types.NamespacedName) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := k.byKey[key]; e != nil {
		e.confirmed = false
		k.prune(key)
	}
}

// observed forgets the newest copy once the cache holds it, so that ten
// thousand ScheduledJobs do not each keep a copy between runs. The
// informer calls it with each update it caches.
func (k *knownObjects) observed(obj any) {
	sj, ok := obj.(*v1alpha1.ScheduledJob)
	if !ok {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	key := client.ObjectKeyFromObject(sj)
	e := k.byKey[key]
	if e == nil || e.newest == nil {
		return
	}
	if known := e.newest; known.UID != sj.UID || !jobcontrol.NewerVersion(known.ResourceVersion, sj.ResourceVersion) {
		e.newest = nil
		k.prune(key)
	}
}

// deferStatus remembers a status left for the next reconcile to write.
func (k *knownObjects) deferStatus(sj *v1alpha1.ScheduledJob, status v1alpha1.ScheduledJobStatus) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.entry(client.ObjectKeyFromObject(sj)).deferred = &deferredStatus{uid: sj.UID, status: status}
}

// undefer forgets a deferred status once a status is written.
func (k *knownObjects) undefer(key types.NamespacedName) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := k.byKey[key]; e != nil {
		e.deferred = nil
		k.prune(key)
	}
}

// forget forgets everything about a deleted ScheduledJob.
func (k *knownObjects) forget(key types.NamespacedName) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.byKey, key)
}

// withStatus returns a copy of sj with status.
func withStatus(sj *v1alpha1.ScheduledJob, status v1alpha1.ScheduledJobStatus) *v1alpha1.ScheduledJob {
	out := sj.DeepCopy()
	status.DeepCopyInto(&out.Status)
	return out
}
