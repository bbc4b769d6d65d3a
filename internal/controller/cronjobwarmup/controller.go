// Package cronjobwarmup gives plain batch/v1 CronJobs warm-up: a CronJob
// annotated warmup.ontime.dev/lead gets placeholder pods (or, with
// warmup.ontime.dev/strategy: CapacityBuffer, a CapacityBuffer) that long
// before each of its runs, computed from its own schedule and time zone as
// the CronJob controller computes them. ontime never changes a CronJob's
// spec: it creates and deletes warm-up objects the CronJob owns, records
// events on it, and keeps the warm-up's state in one annotation of its own
// (warmup.ontime.dev/state), where a ScheduledJob keeps it in its status.
//
// A CronJob is reconciled by owners.Reconciler, the loop it shares with
// ScheduledJobs: this package is its CronJob kind. It gathers (gather), decides (decide, a pure function of what was
// gathered and now), and records the state and the events once (Record);
// the reconciler carries out the warm-up changes with the one executor.
// There are no runs to start: kube-controller-manager starts them.
package cronjobwarmup

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/owners"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// kind labels this controller's metrics.
const kind = "CronJob"

// Controller warms capacity up for annotated CronJobs.
type Controller struct {
	kubeClient client.Client
	// apiReader reads a run's pods, which the cache does not hold.
	apiReader client.Reader
	clock     clock.PassiveClock
	recorder  record.EventRecorder
	// defaults are the controller-wide defaults of warm-up.
	defaults v1alpha1.ControllerDefaults
	// warmUp reads the CronJob's warm-up objects; the loop carries its
	// warm-up changes out with it, as it does a ScheduledJob's.
	warmUp *warmupobjects.Executor
	// loop is the reconciler of every owner of warm-up, over this kind.
	loop *owners.Reconciler[*batchv1.CronJob]
	// written is the state this controller last wrote on each CronJob,
	// for a cache that does not show the write yet.
	written writtenStates
}

// NewController returns the controller. clk is its only source of time;
// defaults are the controller-wide defaults of warm-up
// (--placeholder-image); warmUp is the process's executor of warm-up (nil:
// without CapacityBuffers).
func NewController(kubeClient client.Client, apiReader client.Reader, clk clock.PassiveClock, recorder record.EventRecorder, defaults v1alpha1.ControllerDefaults, warmUp *warmupobjects.Executor) *Controller {
	if warmUp == nil {
		warmUp = warmupobjects.NewExecutor(kubeClient, nil)
	}
	c := &Controller{kubeClient: kubeClient, apiReader: apiReader, clock: clk, recorder: recorder, defaults: defaults, warmUp: warmUp}
	c.loop = owners.NewReconciler[*batchv1.CronJob](cronJobs{c}, kubeClient, clk, warmUp)
	return c
}

// Name identifies the controller in logs and metrics.
func (c *Controller) Name() string { return "cronjob.warmup" }

// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Register adds the controller to mgr.
func (c *Controller) Register(mgr ctrl.Manager, workers int) error {
	return c.loop.Register(mgr, owners.Registration{
		Name:      c.Name(),
		OwnerKind: kind,
		// Its own state writes are not a change to look at.
		Predicates: []predicate.Predicate{notOnlyStateWritten},
		Options:    controller.Options{MaxConcurrentReconciles: workers},
		// A concurrency group's predictions place its members' warm-up.
		Watch: func(b *builder.Builder) *builder.Builder {
			return warmupobjects.WatchGroups(mgr, b, func(ctx context.Context, value string) []reconcile.Request {
				return warmedMembersOf(ctx, mgr.GetClient(), value)
			})
		},
	})
}

// warmedMembersOf are the CronJobs with warm-up that join the group whose
// index value is value (jobcontrol.CronJobGroupKey), to reconcile when the
// group's predictions change.
func warmedMembersOf(ctx context.Context, c client.Reader, value string) []reconcile.Request {
	var list batchv1.CronJobList
	if err := c.List(ctx, &list, client.MatchingFields{jobcontrol.CronJobGroupKey: value}, client.UnsafeDisableDeepCopy); err != nil {
		return nil // each learns it at its next reconcile
	}
	var requests []reconcile.Request
	for i := range list.Items {
		if _, warms := list.Items[i].Annotations[v1alpha1.WarmUpLeadAnnotation]; warms {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return requests
}

// Reconcile brings one CronJob's warm-up up to date.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return c.loop.Reconcile(ctx, req)
}

// gathered is what deciding about a CronJob's warm-up reads.
type gathered struct {
	cj *batchv1.CronJob
	// state is the warm-up state last written, from the annotation or the
	// controller's own newer write.
	state v1alpha1.CronJobWarmUpState
	// meaning is the CronJob's warm-up and runs, or why they cannot be
	// read.
	meaning cronJobMeaning
	pods    []*corev1.Pod
	buffers []warmup.Buffer
	api     warmup.BufferAPI
	jobs    []*batchv1.Job
	// group is the concurrency group the CronJob joins, if it warms up:
	// its predictions place the warm-up, and a group that refuses the
	// CronJob's runs leaves none to warm.
	group warmup.Group
	// measured is the run whose start is measured now, if any, and its pods.
	measured *batchv1.Job
	runPods  []*corev1.Pod
	runNode  *corev1.Node
	now      time.Time
}

// gather reads the CronJob's warm-up objects (Executor.Gather, as for a
// ScheduledJob), Jobs and state, its concurrency group's predictions, and
// the pods of the run whose start is being measured.
func (c *Controller) gather(ctx context.Context, cj *batchv1.CronJob, now time.Time) (gathered, error) {
	in := gathered{cj: cj, state: c.written.stateOf(cj), meaning: meaningOf(cj, c.defaults), now: now}
	var wanted v1alpha1.WarmUpStrategy
	if w := in.meaning.warmUp; w != nil {
		wanted = w.Strategy
	}
	observed, err := c.warmUp.Gather(ctx, cj, wanted, warmupobjects.LastStrategy(in.state.WarmUp))
	if err != nil {
		return in, err
	}
	in.pods, in.api, in.buffers = observed.Pods, observed.BufferAPI, observed.Buffers
	var list batchv1.JobList
	if err := c.kubeClient.List(ctx, &list, client.InNamespace(cj.Namespace), client.MatchingFields{jobcontrol.CronJobOwnerKey: string(cj.UID)}); err != nil {
		return in, err
	}
	in.jobs = jobcontrol.Pointers(list.Items)
	if in.meaning.warmUp != nil {
		in.measured = warmup.RunToMeasure(in.jobs, measuredRun(in.state), in.now)
		if ref, member := v1alpha1.CronJobGroupRef(cj.Annotations); member {
			if in.group, err = warmupobjects.Group(ctx, c.kubeClient, ref, cj.Namespace); err != nil {
				return in, err
			}
		}
	}
	if in.measured != nil {
		in.runPods, in.runNode, err = jobcontrol.RunPods(ctx, c.apiReader, in.measured)
	}
	return in, err
}

func (c *Controller) emit(cj *batchv1.CronJob, events []warmup.Event) {
	jobcontrol.Emit(c.recorder, cj, events)
}
