package scheduledjob

import (
	"context"
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
		in.RunPods, err = jobcontrol.RunPods(ctx, c.apiReader, job)
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

// group reads, for a member with warm-up, its concurrency group from the
// cache (warmupobjects.Group); the zero Group when it is not such a
// member, the group is not there, or its API is not served.
func (c *Controller) group(ctx context.Context, sj *v1alpha1.ScheduledJob) (warmup.Group, error) {
	if sj.Spec.ConcurrencyGroup == nil || sj.Spec.WarmUp == nil {
		return warmup.Group{}, nil
	}
	return warmupobjects.Group(ctx, c.kubeClient, *sj.Spec.ConcurrencyGroup, sj.Namespace)
}
