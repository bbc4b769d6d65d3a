// Package controller wires ontime's reconcilers into a controller-runtime
// manager. Each reconciler lives in its own subpackage; this file is the one
// place that registers them.
package controller

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/backfill"
	"github.com/ontime-dev/ontime/internal/controller/concurrencygroup"
	"github.com/ontime-dev/ontime/internal/controller/cronjobwarmup"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/controller/runmetrics"
	"github.com/ontime-dev/ontime/internal/controller/scheduledjob"
	"github.com/ontime-dev/ontime/internal/controller/spreadledger"
	"github.com/ontime-dev/ontime/internal/controller/standby"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// DefaultStandbyGrace is Options.StandbyGrace's default.
const DefaultStandbyGrace = standby.DefaultGrace

// Options tune the controllers.
type Options struct {
	// Workers is how many ScheduledJobs are reconciled at once.
	Workers int
	// EarlyStartImage runs `ontime-wait` in the pods of EarlyStart runs.
	EarlyStartImage string
	// PlaceholderImage is what placeholder containers run when the owner
	// names no image ("": the API's default pause image).
	PlaceholderImage string
	// PlaceholderPriorityClass is the PriorityClass of placeholder pods
	// whose owner names none ("": the API's default).
	PlaceholderPriorityClass string
	// SpreadNamespace holds the Balanced spread groups' ConfigMaps.
	SpreadNamespace string
	// CronJobWarmUp runs the warm-up controller of annotated batch/v1
	// CronJobs (warmup.ontime.dev/lead), which caches every CronJob.
	CronJobWarmUp bool
	// StandbyGrace, when above 0, runs the standby (internal/controller/
	// standby) on every replica: it starts the runs the leader has not
	// started this long after their time.
	StandbyGrace time.Duration
	// LeaderLease, with StandbyGrace, is the leader election Lease: while
	// it is released the standby acts at once (nil: it always waits).
	LeaderLease *types.NamespacedName
	// Unanswered, wrapped around the manager's transport, says when the
	// API server last failed to answer the process: for a while after, a
	// run Forbid holds back is judged from the API server's Jobs, not the
	// cache (nil: always from the cache).
	Unanswered *recovery.Unanswered
}

// Leader election keeps a Lease, and records events, in the manager's
// namespace. client-go's Lease lock only gets, creates and updates it.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,verbs=get;create;update

// Scope is what one controller process watches, and so caches. The zero
// value (with SpreadNamespace set) watches everything, as one controller per
// cluster should; the other fields shard a cluster between several
// controllers, or bound a controller's memory to the Jobs it owns.
type Scope struct {
	// SpreadNamespace holds the Balanced spread groups' ConfigMaps.
	SpreadNamespace string
	// Namespaces, when not empty, are the only namespaces whose
	// ScheduledJobs (and Jobs, warm-up pods and CronJobs) are watched.
	Namespaces []string
	// ScheduledJobSelector, when not nil, selects the ScheduledJobs watched
	// by their labels.
	ScheduledJobSelector labels.Selector
	// OwnedJobsOnly caches only the Jobs ontime created (those with
	// v1alpha1.ScheduledJobLabel) instead of every Job in the watched
	// namespaces. The CronJob warm-up controller cannot run with it: plain
	// CronJobs' Jobs do not carry the label.
	OwnedJobsOnly bool
}

// CacheOptions are the manager's cache settings the controllers rely on, for
// scope: of all pods, only warm-up pods (placeholders and EarlyStart pods)
// are cached and watched; of all ConfigMaps, only the spread groups' ledgers
// in the spread namespace. No cached object keeps its managedFields, which
// the controllers never read and which are much of a ScheduledJob's size
// (every writer of a field adds an entry).
func CacheOptions(scope Scope) cache.Options {
	opts := cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:       {Label: warmup.PodSelector()},
			&corev1.ConfigMap{}: spreadledger.Cache(scope.SpreadNamespace),
		},
		DefaultTransform: cache.TransformStripManagedFields(),
	}
	if len(scope.Namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, namespace := range scope.Namespaces {
			opts.DefaultNamespaces[namespace] = cache.Config{}
		}
	}
	if scope.ScheduledJobSelector != nil {
		opts.ByObject[&v1alpha1.ScheduledJob{}] = cache.ByObject{Label: scope.ScheduledJobSelector}
	}
	if scope.OwnedJobsOnly {
		opts.ByObject[&batchv1.Job{}] = cache.ByObject{Label: OwnedJobs()}
	}
	return opts
}

// OwnedJobs selects the Jobs ontime created.
func OwnedJobs() labels.Selector {
	ontimeOwned, _ := labels.NewRequirement(v1alpha1.ScheduledJobLabel, selection.Exists, nil)
	return labels.NewSelector().Add(*ontimeOwned)
}

// Validate reports options that cannot work together.
func (o Options) Validate(scope Scope) error {
	if scope.OwnedJobsOnly && o.CronJobWarmUp {
		return fmt.Errorf("--job-cache=owned hides plain CronJobs' Jobs from the CronJob warm-up controller: add --cronjob-warmup=false, or use --job-cache=all")
	}
	return nil
}

// Defaults are the controller-wide defaults the options set.
func (o Options) Defaults() v1alpha1.ControllerDefaults {
	return v1alpha1.ControllerDefaults{PlaceholderImage: o.PlaceholderImage, PlaceholderPriorityClass: o.PlaceholderPriorityClass}
}

// Register adds every ontime reconciler to mgr, and the collectors of the
// metrics read from its cache to controller-runtime's registry: once per
// process. clk is the only source of the current time below cmd/, so that
// tests can step it.
func Register(ctx context.Context, mgr ctrl.Manager, clk clock.PassiveClock, opts Options) error {
	// Every controller's metrics are registered here, with
	// controller-runtime's registry, and nowhere on import.
	starts := spreadledger.NewStartsCollector(mgr.GetClient(), opts.SpreadNamespace, clk, mgr.GetLogger().WithName("metrics"))
	if _, err := runmetrics.RegisterOnce(metrics.Registry, starts); err != nil {
		return fmt.Errorf("registering the spread ledgers' metrics: %w", err)
	}
	if err := scheduledjob.RegisterMetrics(metrics.Registry); err != nil {
		return fmt.Errorf("registering the ScheduledJob controller's metrics: %w", err)
	}

	// The groups' controllers and CronJob warm-up list a group's member
	// CronJobs, and a CronJob's Jobs, by these indexes.
	if err := jobcontrol.IndexCronJobs(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	// One executor of warm-up, with one CapacityBuffer discovery cache,
	// for every kind of owner.
	buffers, err := warmupobjects.NewBuffers(mgr.GetClient(), mgr.GetConfig(), clk)
	if err != nil {
		return err
	}
	warmUp := warmupobjects.NewExecutor(mgr.GetClient(), buffers)
	scheduledJobs := scheduledjob.NewController(mgr.GetClient(), mgr.GetAPIReader(), clk, recorderFor(mgr, "scheduledjob-controller"),
		scheduledjob.Options{EarlyStartImage: opts.EarlyStartImage, SpreadNamespace: opts.SpreadNamespace, Defaults: opts.Defaults(), WarmUpObjects: warmUp,
			Unanswered: opts.Unanswered})
	if err := scheduledJobs.Register(ctx, mgr, opts.Workers); err != nil {
		return err
	}
	if opts.StandbyGrace > 0 {
		s := standby.New(standby.NewCluster(mgr.GetClient(), mgr.GetAPIReader()), clk, recorderFor(mgr, "scheduledjob-controller"),
			opts.StandbyGrace, mgr.Elected(), scheduledJobs)
		if err := s.Register(mgr, opts.Workers, opts.LeaderLease, jobcontrol.FailureBackoff()); err != nil {
			return err
		}
	}
	if err := registerBackfills(mgr, clk, opts); err != nil {
		return err
	}
	if err := registerGroups(mgr, clk, opts); err != nil {
		return err
	}
	if !opts.CronJobWarmUp {
		return nil
	}
	cronJobs := cronjobwarmup.NewController(mgr.GetClient(), mgr.GetAPIReader(), clk, recorderFor(mgr, "cronjob-warmup-controller"), opts.Defaults(), warmUp)
	return cronJobs.Register(mgr, opts.Workers)
}

// registerGroups adds the controllers of ConcurrencyGroups and
// ClusterConcurrencyGroups (on every replica), if the API server serves
// them: as for Backfills, a cluster upgraded without the new CRDs runs on
// without them, saying what is missing.
func registerGroups(mgr ctrl.Manager, clk clock.PassiveClock, opts Options) error {
	var metricsOnce *concurrencygroup.Metrics
	for _, kind := range []string{v1alpha1.KindConcurrencyGroup, v1alpha1.KindClusterConcurrencyGroup} {
		gvk := v1alpha1.GroupVersion.WithKind(kind)
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
			mgr.GetLogger().Error(err, "a concurrency group CRD is not installed: members' runs wait until the chart's CRDs are applied and the controller restarted (docs/install.md, Upgrading)", "kind", kind)
			continue
		} else if err != nil {
			return fmt.Errorf("looking up the %s API: %w", kind, err)
		}
		if metricsOnce == nil {
			m, err := concurrencygroup.NewMetrics(metrics.Registry)
			if err != nil {
				return fmt.Errorf("registering the concurrency groups' metrics: %w", err)
			}
			metricsOnce = m
		}
		c := concurrencygroup.New(kind, mgr.GetClient(), mgr.GetAPIReader(), clk, recorderFor(mgr, "concurrencygroup-controller"), metricsOnce)
		if err := c.Register(mgr, opts.Workers); err != nil {
			return err
		}
	}
	return nil
}

// registerBackfills adds the Backfill controller, if the API server serves
// Backfills: a cluster upgraded without first applying the new CRDs (Helm
// never upgrades them) keeps running its ScheduledJobs, and the controller
// says what is missing, instead of failing to start.
func registerBackfills(mgr ctrl.Manager, clk clock.PassiveClock, opts Options) error {
	kind := v1alpha1.GroupVersion.WithKind("Backfill")
	if _, err := mgr.GetRESTMapper().RESTMapping(kind.GroupKind(), kind.Version); meta.IsNoMatchError(err) {
		mgr.GetLogger().Error(err, "backfills.ontime.dev is not installed: Backfills are not carried out until the chart's CRDs are applied and the controller restarted (docs/install.md, Upgrading)")
		return nil
	} else if err != nil {
		return fmt.Errorf("looking up the Backfill API: %w", err)
	}
	progress := backfill.NewProgressCollector(mgr.GetClient(), mgr.Elected(), mgr.GetLogger().WithName("metrics"))
	if _, err := runmetrics.RegisterOnce(metrics.Registry, progress); err != nil {
		return fmt.Errorf("registering the Backfills' metrics: %w", err)
	}
	backfills := backfill.NewController(mgr.GetClient(), mgr.GetAPIReader(), clk, recorderFor(mgr, "backfill-controller"))
	return backfills.Register(mgr, opts.Workers)
}

// recorderFor is the manager's recorder of core/v1 Events for a controller,
// the API upstream's CronJob controller writes too and that the docs, the
// tests and the ClusterRole name. controller-runtime v0.25 deprecates it
// for the events.k8s.io recorder, whose Eventf also takes a related object
// and an action: moving every event to it is a change of its own.
func recorderFor(mgr ctrl.Manager, name string) record.EventRecorder {
	return mgr.GetEventRecorderFor(name) //nolint:staticcheck // core/v1 Events, above
}
