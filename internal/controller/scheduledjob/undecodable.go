package scheduledjob

import (
	"context"
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/planner"
)

// undecodableScheduledJobs counts the stored ScheduledJobs this controller
// cannot decode (v1alpha1.ScheduledJob.DecodeError) and leaves alone.
var undecodableScheduledJobs = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "ontime_undecodable_scheduledjobs",
	Help: "ScheduledJobs stored with a value the controller cannot decode (event Undecodable names it): they do not run until fixed or deleted.",
})

// undecodables are the ScheduledJobs the controller found undecodable, by
// the resourceVersion it reported, so that each stored version is reported
// once (its Jobs' changes reconcile it again) and counted once.
type undecodables struct {
	mu       sync.Mutex
	reported map[types.NamespacedName]string
}

// report logs and records an event for sj, which could not be decoded,
// unless this version of it was reported already. Nothing else is done:
// its spec is unknown, so no run is started, no Job deleted and no status
// written (a status built from nothing would erase the one stored).
func (u *undecodables) report(ctx context.Context, c *Controller, sj *v1alpha1.ScheduledJob) {
	key := types.NamespacedName{Namespace: sj.Namespace, Name: sj.Name}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.reported == nil {
		u.reported = map[types.NamespacedName]string{}
	}
	previous, known := u.reported[key]
	if known && previous == sj.ResourceVersion {
		return
	}
	if !known {
		undecodableScheduledJobs.Inc()
	}
	u.reported[key] = sj.ResourceVersion
	log.FromContext(ctx).Error(errors.New(sj.DecodeError), "cannot decode the stored ScheduledJob; leaving it and its Jobs alone until it is fixed or deleted")
	c.emit(sj, []planner.Event{planner.UndecodableEvent(sj.DecodeError)})
}

// forget drops a ScheduledJob that decodes again, or is gone.
func (u *undecodables) forget(key types.NamespacedName) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, known := u.reported[key]; known {
		delete(u.reported, key)
		undecodableScheduledJobs.Dec()
	}
}
