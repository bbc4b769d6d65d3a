// Package cronjobwarmup gives plain batch/v1 CronJobs warm-up: a CronJob
// annotated warmup.ontime.dev/lead gets placeholder pods (or, with
// warmup.ontime.dev/strategy: CapacityBuffer, a CapacityBuffer) that long
// before each of its runs, computed from its own schedule and time zone as
// the CronJob controller computes them. ontime never changes the CronJob:
// it creates and deletes warm-up objects the CronJob owns, and records
// events on it.
package cronjobwarmup

import (
	"cmp"
	"context"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/controller/shared"
	"github.com/ontime-dev/ontime/internal/requeue"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// jobOwnerKey indexes Jobs by the UID of the CronJob that controls them.
const jobOwnerKey = ".metadata.cronjob.uid"

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
	// buffers are the CapacityBuffers of warm-up; set by Register.
	buffers *shared.Buffers
	// memory holds what the controller cannot write on the CronJob: its
	// last warm-up and measured run (types.NamespacedName -> *memory).
	// After a restart it starts empty: the warm-up pods' own timestamps
	// rebuild the warm-up, and a run may be measured a second time.
	memory sync.Map
}

// memory is what the controller remembers of one CronJob.
type memory struct {
	uid      types.UID
	warm     *v1alpha1.WarmUpStatus
	measured time.Time
	problem  string
	// buffersSeen is set once the CronJob's CapacityBuffers were looked
	// for: after a restart they are, once, whatever the annotations say,
	// so that a buffer left when the annotation was removed goes.
	buffersSeen bool
}

// NewController returns the controller. clk is its only source of time;
// defaults are the controller-wide defaults of warm-up
// (--placeholder-image).
func NewController(kubeClient client.Client, apiReader client.Reader, clk clock.PassiveClock, recorder record.EventRecorder, defaults v1alpha1.ControllerDefaults) *Controller {
	return &Controller{kubeClient: kubeClient, apiReader: apiReader, clock: clk, recorder: recorder, defaults: defaults}
}

// Name identifies the controller in logs and metrics.
func (c *Controller) Name() string { return "cronjob.warmup" }

// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Register adds the controller to mgr.
func (c *Controller) Register(ctx context.Context, mgr ctrl.Manager, workers int) error {
	if err := IndexJobs(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	buffers, err := shared.NewBuffers(c.kubeClient, mgr.GetConfig(), c.clock)
	if err != nil {
		return err
	}
	c.buffers = buffers
	retrier, err := recovery.AddRetrier(mgr)
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(c.Name()).
		For(&batchv1.CronJob{}).
		Owns(&batchv1.Job{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(shared.WarmUpPodOwner(kind))).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		WatchesRawSource(retrier.Source()).
		Complete(retrier.Reconciler(c))
}

// IndexJobs adds the index of Jobs by their CronJob that the controller
// lists them with.
func IndexJobs(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &batchv1.Job{}, jobOwnerKey, shared.ControllerUID(batchv1.SchemeGroupVersion.String(), kind))
}

// Reconcile brings one CronJob's warm-up up to date.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cj := &batchv1.CronJob{}
	if err := c.kubeClient.Get(ctx, req.NamespacedName, cj); err != nil {
		if apierrors.IsNotFound(err) {
			c.memory.Delete(req.NamespacedName) // its placeholders go with it
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	pods, err := shared.WarmUpPods(ctx, c.kubeClient, cj)
	if err != nil {
		return reconcile.Result{}, err
	}
	mem := c.remember(req.NamespacedName, cj.UID)
	settings, runs, err := meaningOf(cj, c.defaults)
	c.report(cj, mem, err)
	api, buffers, bufferErr := c.gatherBuffers(ctx, cj, settings, mem)
	if bufferErr != nil {
		return reconcile.Result{}, bufferErr
	}
	if err != nil || settings == nil || cj.DeletionTimestamp != nil {
		// No warm-up (any more): no placeholder or buffer stays.
		mem.warm = nil
		return reconcile.Result{}, cmp.Or(c.deletePods(ctx, pods), c.deleteBuffers(ctx, api, buffers))
	}
	jobs, err := c.jobsOf(ctx, cj)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := c.clock.Now()
	in := warmUpInput(cj, runs, jobs, now)
	in.Owner = warmup.OwnerOf(cj, batchv1.SchemeGroupVersion.WithKind(kind), &cj.Spec.JobTemplate)
	in.Options = *settings
	in.Pods, in.Previous = pods, mem.warm
	in.Buffers, in.BufferAPI = buffers, api
	d := warmup.Decide(in)
	if refused, err := c.execute(ctx, cj, api, d); err != nil {
		return reconcile.Result{}, err
	} else if refused {
		// Tried again soon, not at the backoff; kube-controller-manager
		// starts the run whatever becomes of its warm-up.
		return reconcile.Result{RequeueAfter: min(cmp.Or(requeue.After(now, d.Wake), warmup.RefusedRetry), warmup.RefusedRetry)}, nil
	}
	mem.warm = d.State
	c.emit(cj, d.Events)
	observeWarmUp(d, settings.Strategy)
	if err := c.measureStart(ctx, mem, jobs, now, settings.Strategy); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: requeue.After(now, d.Wake)}, nil
}

func (c *Controller) remember(key types.NamespacedName, uid types.UID) *memory {
	value, _ := c.memory.LoadOrStore(key, &memory{uid: uid})
	mem := value.(*memory)
	if mem.uid != uid { // deleted and created again
		mem = &memory{uid: uid}
		c.memory.Store(key, mem)
	}
	return mem
}

// report emits a warning when the annotation or schedule cannot be used,
// once per problem.
func (c *Controller) report(cj *batchv1.CronJob, mem *memory, err error) {
	problem := ""
	if err != nil {
		problem = err.Error()
	}
	if problem != "" && problem != mem.problem {
		c.emit(cj, []warmup.Event{warmup.InvalidEvent(err)})
	}
	mem.problem = problem
}

// gatherBuffers reads the CronJob's CapacityBuffers, and which version of
// their API to use, when it warms up with them, its last warm-up did, or
// this process has not looked yet; nothing otherwise.
func (c *Controller) gatherBuffers(ctx context.Context, cj *batchv1.CronJob, settings *warmup.Options, mem *memory) (warmup.BufferAPI, []warmup.Buffer, error) {
	uses := settings != nil && settings.Strategy == v1alpha1.WarmUpCapacityBuffer
	used := mem.warm != nil && mem.warm.Strategy == v1alpha1.WarmUpCapacityBuffer
	if c.buffers == nil || (mem.buffersSeen && !uses && !used) {
		return warmup.BufferAPI{}, nil, nil
	}
	api, err := c.buffers.API()
	if err != nil {
		return api, nil, err
	}
	buffers, err := c.buffers.List(ctx, api, cj)
	if err == nil {
		mem.buffersSeen = true
	}
	return api, buffers, err
}

func (c *Controller) jobsOf(ctx context.Context, cj *batchv1.CronJob) ([]*batchv1.Job, error) {
	var list batchv1.JobList
	if err := c.kubeClient.List(ctx, &list, client.InNamespace(cj.Namespace), client.MatchingFields{jobOwnerKey: string(cj.UID)}); err != nil {
		return nil, err
	}
	return shared.Pointers(list.Items), nil
}

// execute deletes and creates placeholders. One that exists already was
// created before; one that is gone was deleted. refused reports that the
// cluster refused a placeholder (warmup.Refused): reported, not an error,
// and the rest are not tried.
func (c *Controller) execute(ctx context.Context, cj *batchv1.CronJob, api warmup.BufferAPI, d warmup.Decision) (refused bool, err error) {
	err = cmp.Or(c.deletePods(ctx, d.Delete), c.deleteBuffers(ctx, api, d.DeleteBuffers))
	for _, pod := range d.Create {
		if refused, err = c.created(cj, c.kubeClient.Create(ctx, pod.DeepCopy()), err); refused {
			return true, err
		}
	}
	for _, request := range d.CreateBuffers {
		if refused, err = c.created(cj, c.buffers.Create(ctx, request), err); refused {
			return true, err
		}
	}
	return false, err
}

// created reports what became of creating a warm-up object: refused
// (reported, and the rest are not tried), failed (err keeps the first
// failure), created, or created before.
func (c *Controller) created(cj *batchv1.CronJob, createErr, err error) (bool, error) {
	switch {
	case createErr == nil || apierrors.IsAlreadyExists(createErr):
	case warmup.Refused(createErr):
		c.emit(cj, []warmup.Event{warmup.RefusedEvent(createErr)})
		return true, err
	default:
		c.emit(cj, []warmup.Event{warmup.FailedEvent(createErr)})
		err = cmp.Or(err, createErr)
	}
	return false, err
}

func (c *Controller) deleteBuffers(ctx context.Context, api warmup.BufferAPI, buffers []warmup.Buffer) error {
	var firstErr error
	for _, buffer := range buffers {
		if !buffer.Deleting {
			firstErr = cmp.Or(firstErr, c.buffers.Delete(ctx, api, buffer))
		}
	}
	return firstErr
}

func (c *Controller) deletePods(ctx context.Context, pods []*corev1.Pod) error {
	var firstErr error
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Labels[v1alpha1.WarmUpLabel] != v1alpha1.WarmUpPlaceholderPod {
			continue
		}
		if err := c.kubeClient.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); err != nil && !apierrors.IsNotFound(err) {
			firstErr = cmp.Or(firstErr, err)
		}
	}
	return firstErr
}

// measureStart observes the start lateness of the CronJob's latest run,
// once, when its Job reports a pod ready or finished.
func (c *Controller) measureStart(ctx context.Context, mem *memory, jobs []*batchv1.Job, now time.Time, strategy v1alpha1.WarmUpStrategy) error {
	job := warmup.RunToMeasure(jobs, mem.measured, now)
	if job == nil {
		return nil
	}
	pods, err := shared.RunPods(ctx, c.apiReader, job)
	if err != nil {
		return err
	}
	start, ok := warmup.MeasureStart(job, pods)
	if !ok {
		return nil
	}
	mem.measured = start.ScheduledTime.Time
	warmup.StartLateness.WithLabelValues(string(strategy), kind).Observe(start.Lateness.Seconds())
	return nil
}

func observeWarmUp(d warmup.Decision, warmUpStrategy v1alpha1.WarmUpStrategy) {
	strategy := string(warmUpStrategy)
	if after := d.ReadyAfter; after != nil {
		warmup.CapacityReady.WithLabelValues(strategy, kind).Observe(after.Seconds())
	}
	if d.Late {
		warmup.Late.WithLabelValues(strategy, kind).Inc()
	}
}

func (c *Controller) emit(cj *batchv1.CronJob, events []warmup.Event) {
	shared.Emit(c.recorder, cj, events)
}
