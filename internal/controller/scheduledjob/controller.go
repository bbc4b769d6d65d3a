// Package scheduledjob is the ScheduledJob controller: it gathers each
// ScheduledJob's Jobs, asks the planner what to do at the current time, and
// does it.
package scheduledjob

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/owners"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/controller/spreadledger"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
	"github.com/ontime-dev/ontime/internal/planner"
)

// Controller runs ScheduledJobs.
type Controller struct {
	kubeClient client.Client
	// apiReader reads from the API server, not the cache: it confirms that
	// an active Job missing from the cache is really gone.
	apiReader client.Reader
	// jobs creates and deletes the runs' Jobs.
	jobs     jobcontrol.Writer
	clock    clock.PassiveClock
	recorder record.EventRecorder
	// known holds what this controller read or wrote of each ScheduledJob
	// that its cache may not show yet.
	known knownObjects
	// loop is the reconciler of every owner of warm-up, over this kind.
	loop *owners.Reconciler[*v1alpha1.ScheduledJob]
	// listed are the namespaces whose ScheduledJobs it has listed from the
	// API server (string -> *namespaceListing).
	listed sync.Map
	// earlyStartImage runs `ontime wait` in EarlyStart pods.
	earlyStartImage string
	// defaults are the controller-wide defaults of warm-up.
	defaults v1alpha1.ControllerDefaults
	// ledgers place ScheduledJobs under a Balanced spread.
	ledgers *spreadledger.Store
	// undecodable are the ScheduledJobs stored with values this version
	// cannot decode, reported and left alone.
	undecodable undecodables
	// unanswered says when the API server last failed to answer this
	// process (nil: never).
	unanswered *recovery.Unanswered
	// warmUp reads the ScheduledJob's warm-up objects; the loop carries
	// its warm-up changes out with it, as it does a CronJob's.
	warmUp *warmupobjects.Executor
}

// Options configure the controller.
type Options struct {
	// EarlyStartImage is the image of EarlyStart's wait container.
	EarlyStartImage string
	// Defaults are the controller-wide defaults of warm-up
	// (--placeholder-image).
	Defaults v1alpha1.ControllerDefaults
	// SpreadNamespace is the namespace of the Balanced spread groups'
	// ConfigMaps: the controller's own.
	SpreadNamespace string
	// Unanswered records when the API server last failed to answer the
	// process (nil: the controller never suspects its cache is behind).
	Unanswered *recovery.Unanswered
	// WarmUpObjects is the process's executor of warm-up (one
	// CapacityBuffer discovery cache for every controller); nil warms up
	// without CapacityBuffers.
	WarmUpObjects *warmupobjects.Executor
}

// NewController returns the controller. clk is its only source of time.
func NewController(kubeClient client.Client, apiReader client.Reader, clk clock.PassiveClock, recorder record.EventRecorder, opts Options) *Controller {
	warmUp := opts.WarmUpObjects
	if warmUp == nil {
		warmUp = warmupobjects.NewExecutor(kubeClient, nil)
	}
	c := &Controller{kubeClient: kubeClient, apiReader: apiReader, jobs: jobcontrol.NewWriter(kubeClient, apiReader), clock: clk, recorder: recorder, earlyStartImage: opts.EarlyStartImage, defaults: opts.Defaults,
		ledgers: spreadledger.NewStore(kubeClient, apiReader, opts.SpreadNamespace), warmUp: warmUp, unanswered: opts.Unanswered}
	c.loop = owners.NewReconciler[*v1alpha1.ScheduledJob](kind{c}, kubeClient, clk, warmUp)
	return c
}

// Name identifies the controller in logs and metrics.
func (c *Controller) Name() string { return "scheduledjob.run" }

// Reconcile brings one ScheduledJob up to date through owners.Reconciler,
// the loop ScheduledJobs and annotated CronJobs share; kind.go is what is
// particular to ScheduledJobs.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return c.loop.Reconcile(ctx, req)
}

// planned is a plan and what it was made from: the ScheduledJob as the API
// server has it as far as this controller knows (stored), the same with
// the status not written yet (sj), and why its spread placement could not
// be read, if it could not.
type planned struct {
	stored, sj *v1alpha1.ScheduledJob
	plan       planner.Plan
	placeErr   error
}

// plan gathers what the planner reads and plans. It reads the ScheduledJob
// from the cache again: the copy the reconcile began with may be older
// than one the controller has since forgotten because the cache caught up.
func (c *Controller) plan(ctx context.Context, cached *v1alpha1.ScheduledJob, now time.Time, read jobsRead) (planned, error) {
	stored, sj, err := c.view(ctx, client.ObjectKeyFromObject(cached))
	if err != nil || sj.UID != cached.UID || sj.DecodeError != "" {
		return planned{}, client.IgnoreNotFound(err) // gone or replaced: the next reconcile
	}
	in, err := c.gather(ctx, sj, now, read)
	if err != nil {
		return planned{}, err
	}
	// While its group's ledger cannot be read or written, a Balanced
	// ScheduledJob keeps the placement its status recorded, so runs go on;
	// one never placed is planned all the same, so its status says it waits
	// (SpreadPending), and the error retries.
	in.Placement, err = c.ledgers.Placement(ctx, sj, now)
	placeErr := err
	if placeErr != nil {
		in.Placement = sj.RecordedPlacement()
	}
	return planned{stored: stored, sj: sj, plan: planner.Decide(in), placeErr: placeErr}, nil
}

// view reads the ScheduledJob from the cache and lays over it what the
// controller knows (knownObjects.view), with no cache update forgotten in
// between.
func (c *Controller) view(ctx context.Context, key types.NamespacedName) (stored, current *v1alpha1.ScheduledJob, err error) {
	unlock := c.known.lock(key)
	defer unlock()
	cached := &v1alpha1.ScheduledJob{}
	if err := c.kubeClient.Get(ctx, key, cached); err != nil {
		return nil, nil, err
	}
	stored, current = c.known.view(cached)
	return stored, current, nil
}

// Reconciled reports whether the controller has reconciled the
// ScheduledJob since it started: the standby of the same replica leaves it
// to the controller from then on.
func (c *Controller) Reconciled(key types.NamespacedName) bool {
	return c.loop.Reconciled(key)
}
