package scheduledjob

import (
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/planner"
)

// Confirming: the first run a leader starts for a ScheduledJob, or a Job
// it reports missing, is planned from a status read from the API server.

// confirm reads the ScheduledJob from the API server and plans again: the
// first run this controller starts for it, or Job it reports missing, must
// be planned from a status no older than what the last leader wrote (a nil
// sj: it is gone). read says where the Jobs are read from, as for the plan
// being confirmed. The first time, it lists the whole namespace instead:
// a new leader confirms all its ScheduledJobs with one request.
func (c *Controller) confirm(ctx context.Context, cached *v1alpha1.ScheduledJob, now time.Time, read jobsRead) (planned, error) {
	key := client.ObjectKeyFromObject(cached)
	if err := c.confirmNamespace(ctx, cached.Namespace); err != nil {
		return planned{}, err
	}
	if !c.known.isConfirmed(key) {
		live := &v1alpha1.ScheduledJob{}
		if err := c.apiReader.Get(ctx, key, live); err != nil {
			return planned{}, client.IgnoreNotFound(err)
		}
		c.confirmWith(ctx, live)
	}
	if !c.known.isConfirmed(key) {
		return planned{}, nil // gone, or re-created: the next reconcile sees it
	}
	return c.plan(ctx, cached, now, read)
}

// confirmNamespace lists the namespace's ScheduledJobs from the API server
// once, however many reconciles ask at once.
func (c *Controller) confirmNamespace(ctx context.Context, namespace string) error {
	lock, _ := c.listed.LoadOrStore(namespace, &namespaceListing{})
	listing := lock.(*namespaceListing)
	listing.mu.Lock()
	defer listing.mu.Unlock()
	if listing.done {
		return nil
	}
	var list v1alpha1.ScheduledJobList
	if err := c.apiReader.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range list.Items {
		c.confirmWith(ctx, &list.Items[i])
	}
	listing.done = true
	return nil
}

// namespaceListing is whether a namespace's ScheduledJobs were listed.
type namespaceListing struct {
	mu   sync.Mutex
	done bool
}

// confirmWith records a ScheduledJob read from the API server, keeping a
// copy only while the cache is behind it.
func (c *Controller) confirmWith(ctx context.Context, live *v1alpha1.ScheduledJob) {
	if live.DecodeError != "" {
		return
	}
	c.known.saw(live)
	cached := &v1alpha1.ScheduledJob{}
	if err := c.kubeClient.Get(ctx, client.ObjectKeyFromObject(live), cached); err == nil {
		c.known.observed(cached)
	}
}

// needsConfirmation reports whether a plan must be made from a confirmed
// status: it creates a run's Job, or reports a Job missing that a cache
// behind the status may have shown.
func needsConfirmation(plan planner.Plan) bool {
	return plan.Create != nil || plan.Early != nil || plan.Trigger != nil || plan.Reports(v1alpha1.ReasonMissingJob)
}
