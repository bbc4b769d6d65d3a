package jobcontrol

import (
	"context"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Recorded is a Job an actor's status records as its own: a run it
// started, claimed or admitted. A cache behind must not make such a run
// look gone, nor unstarted.
type Recorded struct {
	types.NamespacedName
	// UID, when set, tells the recorded Job from another of its name:
	// the cache has it only if it has that UID. Without one (a claim made
	// before its Job), the cache has it if it has a Job of that name.
	UID types.UID
}

// Reread says which recorded Jobs CachedAndRecorded reads from the API
// server.
type Reread int

const (
	// WhenUncached reads those the cache lacks: just created, or the
	// cache is behind.
	WhenUncached Reread = iota
	// Always reads every one, so that one deleted is gone at once and one
	// a predecessor created is seen at once, whatever the cache shows.
	Always
)

// CachedAndRecorded is the one way an actor reads the Jobs it answers for:
// it lists them from the cache with opts, then reads recorded Jobs from
// the API server (live) as reread says. A recorded Job read live replaces
// the cached one of its name, if keep accepts it (nil keeps every one); a
// recorded Job the API server no longer has is left out. readLive reports
// that a recorded Job was read live and kept: the Jobs then show no one
// moment.
func CachedAndRecorded(ctx context.Context, cached, live client.Reader, opts []client.ListOption, recorded []Recorded, reread Reread,
	keep func(*batchv1.Job) bool) (jobs []*batchv1.Job, readLive bool, err error) {
	var list batchv1.JobList
	if err := cached.List(ctx, &list, opts...); err != nil {
		return nil, false, err
	}
	jobs = make([]*batchv1.Job, 0, len(list.Items))
	for i := range list.Items {
		jobs = append(jobs, &list.Items[i])
	}
	for _, ref := range recorded {
		if reread == WhenUncached && cachedHas(jobs, ref) {
			continue
		}
		job, err := ReadLive(ctx, live, ref.NamespacedName)
		switch {
		case err != nil:
			return nil, false, err
		case job == nil:
			jobs = slices.DeleteFunc(jobs, func(j *batchv1.Job) bool { return named(j, ref.NamespacedName) })
		case keep == nil || keep(job):
			jobs, readLive = replaceNamed(jobs, job), true
		}
	}
	return jobs, readLive, nil
}

// cachedHas reports whether the cache's Jobs hold the recorded one.
func cachedHas(jobs []*batchv1.Job, ref Recorded) bool {
	return slices.ContainsFunc(jobs, func(j *batchv1.Job) bool {
		if ref.UID != "" {
			return j.UID == ref.UID
		}
		return named(j, ref.NamespacedName)
	})
}

func named(job *batchv1.Job, key types.NamespacedName) bool {
	return job.Namespace == key.Namespace && job.Name == key.Name
}

// replaceNamed puts job in place of the Job of its name, or adds it.
func replaceNamed(jobs []*batchv1.Job, job *batchv1.Job) []*batchv1.Job {
	key := types.NamespacedName{Namespace: job.Namespace, Name: job.Name}
	if i := slices.IndexFunc(jobs, func(j *batchv1.Job) bool { return named(j, key) }); i >= 0 {
		jobs[i] = job
		return jobs
	}
	return append(jobs, job)
}
