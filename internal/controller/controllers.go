// Package controller wires ontime's reconcilers into a controller-runtime
// manager. Each reconciler lives in its own subpackage; this file is the one
// place that registers them.
package controller

import (
	"context"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ontime-dev/ontime/internal/controller/scheduledjob"
)

// Options tune the controllers.
type Options struct {
	// Workers is how many ScheduledJobs are reconciled at once.
	Workers int
}

// Leader election keeps a Lease, and records events, in the manager's
// namespace.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,verbs=get;list;watch;create;update;patch;delete

// Register adds every ontime reconciler to mgr. clk is the only source of
// the current time below cmd/, so that tests can step it.
func Register(ctx context.Context, mgr ctrl.Manager, clk clock.PassiveClock, opts Options) error {
	scheduledJobs := scheduledjob.NewController(mgr.GetClient(), mgr.GetAPIReader(), clk, mgr.GetEventRecorderFor("scheduledjob-controller"))
	return scheduledJobs.Register(ctx, mgr, opts.Workers)
}
