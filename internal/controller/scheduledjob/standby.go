package scheduledjob

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/planner"
)

// StandbyGrace is how long after a run's time a replica that does not lead
// starts the run itself if the leader has not: long enough that a live
// leader, which starts it within milliseconds, is seen to have done so
// (its Job reaches the standby's cache), short enough that a run whose
// leader died is at most this late, instead of the Lease's 15 s and more.
const StandbyGrace = 500 * time.Millisecond

// Standby is the ScheduledJob controller of a replica that does not lead.
// It plans every ScheduledJob as the leader would, but StandbyGrace in the
// past, so that it finds due only the runs the leader has not started
// StandbyGrace after their time, and it carries out only what starts runs
// on time: the run's Job (and EarlyStart's early Job), the Job a Replace
// run replaces, and Placeholder warm-up's pods. It writes no status, deletes
// no history and handles no trigger: the leader does, once there is one
// again. While the leader election Lease names no holder (a leader stopped
// gracefully released it; FollowLease), it acts at each run's time. Two
// actors stay exactly-once because every object they create has a name
// fixed by the run (a second create is answered AlreadyExists) and both
// decide from the same objects.
type Standby struct {
	*Controller
	// leading is closed once this replica leads; the leader's controller
	// then acts instead, after handoverOverlap.
	leading <-chan struct{}
	// ledSince is when the standby first saw its replica lead.
	ledSince atomic.Pointer[time.Time]
	grace    time.Duration
	// lease is the leader election Lease; while it names no holder
	// (leaseReleased), the standby acts without its grace.
	lease         *types.NamespacedName
	leaseReleased atomic.Bool
	// live are the ScheduledJobs' versions as the API server has them.
	live liveVersions
}

// NewStandby returns the standby of c's replica; leading is closed when the
// replica becomes the leader (manager.Elected()).
func NewStandby(c *Controller, leading <-chan struct{}, grace time.Duration) *Standby {
	return &Standby{Controller: c, leading: leading, grace: grace}
}

// Name identifies the standby in logs and metrics.
func (s *Standby) Name() string { return "scheduledjob.standby" }

// Register adds the standby to mgr: it runs on every replica, and
// acts only until its replica leads.
func (s *Standby) Register(mgr ctrl.Manager, workers int) error {
	retrier, err := recovery.AddRetrier(mgr)
	if err != nil {
		return err
	}
	bldr := ctrl.NewControllerManagedBy(mgr)
	if s.lease != nil {
		leases, err := s.leaseSource(mgr)
		if err != nil {
			return err
		}
		bldr = bldr.WatchesRawSource(leases)
	}
	return bldr.
		Named(s.Name()).
		For(&v1alpha1.ScheduledJob{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&batchv1.Job{}).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: workers,
			NeedLeaderElection:      ptr.To(false),
			RateLimiter:             failureBackoff(),
		}).
		WatchesRawSource(retrier.Source()).
		Complete(retrier.Reconciler(s))
}

// Reconcile starts the runs of one ScheduledJob that the leader has not
// started StandbyGrace after their time.
func (s *Standby) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if s.handedOver() {
		return reconcile.Result{}, nil
	}
	sj := &v1alpha1.ScheduledJob{}
	if err := s.kubeClient.Get(ctx, req.NamespacedName, sj); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if sj.DecodeError != "" {
		return reconcile.Result{}, nil
	}
	now := s.clock.Now()
	d, err := s.plan(ctx, sj, now)
	if err == nil && startsSomething(d.plan) {
		sj, d, err = s.planLive(ctx, sj, d, now)
	}
	if err == nil && sj != nil && startsForbidRun(sj, d.plan) {
		d.plan, err = s.planWithLiveJobs(ctx, sj, d.in)
	}
	if err != nil || sj == nil {
		return reconcile.Result{}, err
	}
	plan := d.plan
	results, err := s.startRuns(ctx, sj, plan)
	if err == nil {
		var podResults []planner.Result
		podResults, err = s.createPods(ctx, plan)
		results = append(results, podResults...)
	}
	s.emit(sj, plan.ResultEvents(results...))
	if err != nil {
		return reconcile.Result{}, err
	}
	// Planned StandbyGrace in the past: the wake-up comes StandbyGrace
	// after each run's time.
	return reconcile.Result{RequeueAfter: s.remaining(now, plan.RequeueAfter)}, nil
}

// handoverOverlap is how long the standby goes on acting once its replica
// leads. The leader's controller begins with every ScheduledJob in its
// queue, in no order, and writes each one's status; a run the standby was
// about to start would wait behind them. Measured in make chaos's
// TestGracefulHandover: the standby took the Lease 1.2 s into the minute
// whose runs it was starting, and the last 30 of them came from the new
// leader, up to 2.2 s late. Both acting at once is safe (the runs' Jobs
// have fixed names).
const handoverOverlap = 2 * time.Second

// handedOver reports whether the leader's controller has taken over: the
// replica has led for handoverOverlap, counted from when the standby first
// saw it lead.
func (s *Standby) handedOver() bool {
	select {
	case <-s.leading:
	default:
		return false
	}
	now := s.clock.Now()
	s.ledSince.CompareAndSwap(nil, &now)
	return now.Sub(*s.ledSince.Load()) > handoverOverlap
}

// decision is a standby's plan and what it was made from, which the
// checks before acting refine.
type decision struct {
	in   planner.Input
	plan planner.Plan
}

// plan decides, StandbyGrace in the past, what sj's runs need.
func (s *Standby) plan(ctx context.Context, sj *v1alpha1.ScheduledJob, now time.Time) (decision, error) {
	// A run asked for by hand waits for the leader, which also removes
	// the request: planned without it, nothing here acts on it.
	delete(sj.Annotations, v1alpha1.TriggerAnnotation)
	in, err := s.gatherRuns(ctx, sj, now.Add(-s.currentGrace()))
	if err != nil {
		return decision{}, err
	}
	// The ledger is the leader's to write: the placement status records.
	in.Placement = sj.RecordedPlacement()
	return decision{in: in, plan: planner.Compute(in)}, nil
}

// startsForbidRun reports whether plan starts a run of a Forbid
// ScheduledJob.
func startsForbidRun(sj *v1alpha1.ScheduledJob, plan planner.Plan) bool {
	return sj.Spec.ConcurrencyPolicy == v1alpha1.ForbidConcurrent && (plan.Create != nil || plan.Early != nil)
}

// planWithLiveJobs plans sj from its Jobs as the API server lists them. A
// Forbid run must not start beside an active one, and the one the standby
// can miss is the leader's latest: the leader creates a run's Job and
// writes the status naming it a moment later (it starts a burst of runs
// first), so if it dies between the two while the standby's watch is
// broken, neither the standby's cache nor the ScheduledJob shows the run.
// One list per Forbid run the standby starts, which it does only for runs
// the leader has not started StandbyGrace after their time. in is what
// the plan to be checked was made from.
func (s *Standby) planWithLiveJobs(ctx context.Context, sj *v1alpha1.ScheduledJob, in planner.Input) (planner.Plan, error) {
	var list batchv1.JobList
	if err := s.apiReader.List(ctx, &list, client.InNamespace(sj.Namespace), client.MatchingLabels{v1alpha1.ScheduledJobLabel: sj.Name}); err != nil {
		return planner.Plan{}, err
	}
	// The listed Jobs replace their cached copies; the cached ones not
	// listed stay (an ontime older than the label created them).
	cached := map[types.UID]int{}
	for i, job := range in.Jobs {
		cached[job.UID] = i
	}
	for i := range list.Items {
		job := &list.Items[i]
		if !metav1.IsControlledBy(job, sj) {
			continue
		}
		if at, ok := cached[job.UID]; ok {
			in.Jobs[at] = job
		} else {
			in.Jobs = append(in.Jobs, job)
		}
	}
	return planner.Compute(in), nil
}

// planLive makes sure the standby acts on the ScheduledJob as the API
// server has it. Its cache may be far behind the leader's writes: after an
// API outage, client-go's reflector lists again only every 30 to 60 s, and
// a run started beside an active one it does not see would break Forbid.
// When the namespace's recent listing (liveVersions) shows the cached
// version, the cached plan stands; otherwise the ScheduledJob is read and
// planned again: the leader's status names its active Jobs, which
// gatherJobs reads from the API server when the cache lacks them. Nil
// means the ScheduledJob is gone.
func (s *Standby) planLive(ctx context.Context, cached *v1alpha1.ScheduledJob, fromCache decision, now time.Time) (*v1alpha1.ScheduledJob, decision, error) {
	version, listed, err := s.live.version(ctx, s.apiReader, s.clock, client.ObjectKeyFromObject(cached))
	if err != nil {
		return nil, decision{}, err
	}
	if listed && version == cached.ResourceVersion {
		return cached, fromCache, nil
	}
	live := &v1alpha1.ScheduledJob{}
	if err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(cached), live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, decision{}, nil
		}
		return nil, decision{}, err
	}
	if live.ResourceVersion == cached.ResourceVersion {
		return cached, fromCache, nil
	}
	if live.DecodeError != "" {
		return nil, decision{}, nil
	}
	d, err := s.plan(ctx, live, now)
	return live, d, err
}

// startsSomething reports whether the standby would act on plan.
func startsSomething(plan planner.Plan) bool {
	return plan.Create != nil || plan.Early != nil || len(plan.CreatePods) > 0 ||
		slices.ContainsFunc(plan.Deletes, func(d planner.Deletion) bool { return d.Reason == planner.DeleteForReplace })
}

// liveVersionsFor is how long a namespace's listing of ScheduledJob
// versions is used. The leader's writes that a stale cache could hide from
// the standby, the status naming a previous run still active, were made at
// least a run earlier; a second-old listing has them. Listing once a
// second, instead of reading each ScheduledJob, keeps the minute's burst of
// runs that a standby starts after a leader died to one request each
// (measured: a read per run put the 200-run burst's skew p99 at 2.5 s).
const liveVersionsFor = time.Second

// liveVersions lists, per namespace, the ScheduledJobs' resourceVersions
// (metadata only) from the API server, and keeps the listing for
// liveVersionsFor.
type liveVersions struct {
	mu          sync.Mutex
	byNamespace map[string]versionListing
}

type versionListing struct {
	at       time.Time
	versions map[string]string
	// err is why the listing at at failed: the reconciles waiting for the
	// lock fail with it too, instead of repeating the request one after
	// another (after an outage the API server refuses lists with 429 for
	// a moment, and a hundred reconciles each waited for the others').
	err error
}

// failedListingFor is how long a failed listing answers for the namespace.
const failedListingFor = 100 * time.Millisecond

// version is the resourceVersion of the ScheduledJob key as listed at most
// liveVersionsFor ago; listed is false when the listing lacks it. The time
// is read once the lock is held: a reconcile that waited for another's
// listing uses it.
func (l *liveVersions) version(ctx context.Context, reader client.Reader, clk clock.PassiveClock, key client.ObjectKey) (version string, listed bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := clk.Now()
	listing, ok := l.byNamespace[key.Namespace]
	usableFor := liveVersionsFor
	if listing.err != nil {
		usableFor = failedListingFor
	}
	if !ok || now.Before(listing.at) || now.Sub(listing.at) > usableFor {
		listing = listVersions(ctx, reader, key.Namespace, now)
		if l.byNamespace == nil {
			l.byNamespace = map[string]versionListing{}
		}
		l.byNamespace[key.Namespace] = listing
	}
	if listing.err != nil {
		return "", false, listing.err
	}
	version, listed = listing.versions[key.Name]
	return version, listed, nil
}

// listVersions lists the resourceVersions of namespace's ScheduledJobs.
func listVersions(ctx context.Context, reader client.Reader, namespace string, now time.Time) versionListing {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("ScheduledJobList"))
	if err := reader.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return versionListing{at: now, err: err}
	}
	listing := versionListing{at: now, versions: make(map[string]string, len(list.Items))}
	for _, item := range list.Items {
		listing.versions[item.Name] = item.ResourceVersion
	}
	return listing
}
