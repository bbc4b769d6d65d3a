// Package controller wires ontime's reconcilers into a controller-runtime
// manager. Each reconciler lives in its own subpackage; this file is the one
// place that registers them.
package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/internal/controller/cronjobwarmup"
	"github.com/ontime-dev/ontime/internal/controller/scheduledjob"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Options tune the controllers.
type Options struct {
	// Workers is how many ScheduledJobs are reconciled at once.
	Workers int
	// EarlyStartImage runs `ontime wait` in the pods of EarlyStart runs.
	EarlyStartImage string
	// SpreadNamespace holds the Balanced spread groups' ConfigMaps.
	SpreadNamespace string
}

// Leader election keeps a Lease, and records events, in the manager's
// namespace.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,verbs=get;list;watch;create;update;patch;delete

// CacheOptions are the manager's cache settings the controllers rely on:
// of all pods, only warm-up pods (placeholders and EarlyStart pods) are
// cached and watched; of all ConfigMaps, only the spread groups' ledgers in
// spreadNamespace.
func CacheOptions(spreadNamespace string) cache.Options {
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:       {Label: warmup.PodSelector()},
		&corev1.ConfigMap{}: scheduledjob.LedgerCache(spreadNamespace),
	}}
}

// Register adds every ontime reconciler to mgr. clk is the only source of
// the current time below cmd/, so that tests can step it.
func Register(ctx context.Context, mgr ctrl.Manager, clk clock.PassiveClock, opts Options) error {
	scheduledJobs := scheduledjob.NewController(mgr.GetClient(), mgr.GetAPIReader(), clk, mgr.GetEventRecorderFor("scheduledjob-controller"),
		scheduledjob.Options{EarlyStartImage: opts.EarlyStartImage, SpreadNamespace: opts.SpreadNamespace})
	if err := scheduledJobs.Register(ctx, mgr, opts.Workers); err != nil {
		return err
	}
	cronJobs := cronjobwarmup.NewController(mgr.GetClient(), mgr.GetAPIReader(), clk, mgr.GetEventRecorderFor("cronjob-warmup-controller"))
	return cronJobs.Register(ctx, mgr, opts.Workers)
}
