package scheduledjob

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestStandbyWithAStaleCacheKeepsForbid: after an API outage, a standby's
// watches come back only when client-go's reflector next lists (30 to 60 s
// later), so its cache can miss the run the leader started since. Acting on
// that cache, it would start a Forbid ScheduledJob's next run beside the
// active one; it reads the ScheduledJob from the API server before acting,
// and the leader's status names the active run.
func TestStandbyWithAStaleCacheKeepsForbid(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "forbid", "* * * * *")
	sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
	create(t, sj)
	beforeTheRun := get(t, sj)
	run := sj.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
	reconcileAt(t, sj, run.Add(100*time.Millisecond))
	if active := get(t, sj).Status.Active; len(active) != 1 {
		t.Fatalf("the leader's run at %s: status.active = %v, want its Job", run.Format(time.TimeOnly), active)
	}

	// The standby's cache still has the ScheduledJob as it was before the
	// run, and none of its Jobs; the run's Job has not finished.
	standby := NewStandby(newSuiteController(staleClient{Client: env.Cached, sj: beforeTheRun}), nil, StandbyGrace)
	env.Clock.SetTime(run.Add(time.Minute + 2*StandbyGrace))
	if _, err := standby.Reconcile(env.Ctx, requestFor(sj)); err != nil {
		t.Fatalf("standby Reconcile: %v", err)
	}
	if got := jobs(t, ns); len(got) != 1 {
		names := []string{}
		for _, job := range got {
			names = append(names, job.Name)
		}
		t.Errorf("Jobs %v: the standby started the next run beside the active one (Forbid)", names)
	}
}

// staleClient is a cache that missed everything since sj: it serves sj as
// it was and lists no Jobs.
type staleClient struct {
	client.Client
	sj *v1alpha1.ScheduledJob
}

func (c staleClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if stored, ok := obj.(*v1alpha1.ScheduledJob); ok && key == client.ObjectKeyFromObject(c.sj) {
		c.sj.DeepCopyInto(stored)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c staleClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*batchv1.JobList); ok {
		return nil
	}
	return c.Client.List(ctx, list, opts...)
}
