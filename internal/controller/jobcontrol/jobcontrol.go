// Package jobcontrol is how every actor that starts or stops runs (the
// leader, the standby, backfill, the concurrency groups) touches their
// Jobs, as upstream's jobControlInterface is for the CronJob controller:
// it creates a run's Job and says what an AlreadyExists means, deletes one
// only while it is the Job that was read (a UID precondition), releases a
// concurrency group's waiting run and marks one missed, lists an
// owner's Jobs from the cache and reads the recorded ones the cache lacks
// from the API server, and holds the indexes those lists use and the
// retry backoff the controllers share. Nothing here decides what to do.
package jobcontrol

import (
	"context"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Writer creates and deletes runs' Jobs. It writes through writer and
// reads the Job a create was refused for from live (the API server): a
// cache behind would take the run's own Job for no Job at all.
type Writer struct {
	writer client.Writer
	live   client.Reader
}

// NewWriter returns the Writer of a controller: its client's writes and
// its API reader.
func NewWriter(writer client.Writer, live client.Reader) Writer {
	return Writer{writer: writer, live: live}
}

// Creation is what creating a run's Job came to.
type Creation int

const (
	// Refused means the API server refused the create (a quota, a policy, a
	// bad template, a namespace going away); the error says why.
	Refused Creation = iota
	// Created means this call created the Job.
	Created
	// AlreadyCreated means a Job of that name controlled by the same owner was
	// there: the run was started before, by this actor before a crash
	// (between creating the Job and recording it) or by another replica.
	AlreadyCreated
	// NameTaken means a Job of that name belongs to another owner, or to none:
	// the run cannot start under its name.
	NameTaken
	// Unknown means a Job of that name was there but could not be read (gone
	// again, or the read failed, said by the error): what became of the
	// run is for the next look to find out.
	Unknown
	// Exists means a Job of that name was there, and was not read: the caller
	// named no owner (the standby, which leaves a Job already there to the
	// leader, and backfill, whose next gather reads its claims' Jobs live):
	// no request is spent on it.
	Exists
)

// Create creates job, whose controller is owner, and says what came of
// it, with the Job as the API server has it (the created one, or the one
// already there for AlreadyCreated and NameTaken). With a nil owner, a
// Job already there is not read (Exists).
func (w Writer) Create(ctx context.Context, owner metav1.Object, job *batchv1.Job) (Creation, *batchv1.Job, error) {
	err := w.writer.Create(ctx, job)
	switch {
	case err == nil:
		return Created, job, nil
	case !apierrors.IsAlreadyExists(err):
		return Refused, nil, err
	case owner == nil:
		return Exists, nil, nil
	}
	existing, err := ReadLive(ctx, w.live, client.ObjectKeyFromObject(job))
	if existing == nil {
		return Unknown, nil, err
	}
	if metav1.IsControlledBy(existing, owner) {
		return AlreadyCreated, existing, nil
	}
	return NameTaken, existing, nil
}

// Delete deletes a Job with background propagation, as the CronJob
// controller does, and only while it is the Job that was read (a UID
// precondition): a Job of the same name made since is another run's.
// gone reports that the Job was already gone (NotFound, or the name now
// another Job's), which is not an error.
func (w Writer) Delete(ctx context.Context, job *batchv1.Job) (gone bool, err error) {
	err = w.writer.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID})
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return true, nil
	}
	return false, err
}

// Release starts a run a concurrency group admitted: it unsuspends its
// Job, read from the API server and updated conditionally on what was
// read, unless the Job is another run's now (another UID), already
// running, gone, or marked missed (it then never runs). released reports
// that this call unsuspended it.
func (w Writer) Release(ctx context.Context, job *batchv1.Job) (released bool, err error) {
	current, err := ReadLive(ctx, w.live, client.ObjectKeyFromObject(job))
	if current == nil {
		return false, err
	}
	if current.UID != job.UID || current.Spec.Suspend == nil || !*current.Spec.Suspend {
		return false, nil
	}
	if _, missed := current.Annotations[v1alpha1.MissedAnnotation]; missed {
		return false, nil
	}
	current.Spec.Suspend = ptr.To(false)
	if err := w.writer.Update(ctx, current); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return true, nil
}

// MarkMissed marks a waiting run's Job missed at now, so that it is never
// released, conditionally on the resourceVersion that showed it waiting:
// nothing is written if the Job was released or deleted since (marked is
// then nil). It returns the Job as marked.
func (w Writer) MarkMissed(ctx context.Context, job *batchv1.Job, now time.Time) (marked *batchv1.Job, err error) {
	marked = job.DeepCopy()
	if marked.Annotations == nil {
		marked.Annotations = map[string]string{}
	}
	marked.Annotations[v1alpha1.MissedAnnotation] = now.UTC().Format(time.RFC3339)
	switch err := w.writer.Update(ctx, marked); {
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return marked, nil
}

// FailureBackoff retries a failed reconcile quickly and never waits longer
// than 30 s, so that a transient API error cannot push a run back by
// minutes (controller-runtime's default grows to 1000 s, and its overall
// 10-per-second bucket paced a standby's hundred retries after an outage
// over ten seconds). Every controller that starts runs uses it.
func FailureBackoff() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](10*time.Millisecond, 30*time.Second)
}

// Pointers returns pointers to a list's items, which the deciders take.
func Pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// RunPods reads the pods of a run's Job from the API server: the cache
// holds warm-up pods only, so a run's pods are read once, when the Job
// says one is ready or finished. It also reads the node warmup.NodeToRead
// names, when the first pod waited seconds to be scheduled: a second
// request for some runs, none for the others. A node it may not read (a
// namespaced install without the nodes permission) or gone is nil: that
// wait then counts as scheduling.
func RunPods(ctx context.Context, apiReader client.Reader, job *batchv1.Job) ([]*corev1.Pod, *corev1.Node, error) {
	var pods corev1.PodList
	if err := apiReader.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return nil, nil, err
	}
	runPods := Pointers(pods.Items)
	name := warmup.NodeToRead(job, runPods)
	if name == "" {
		return runPods, nil, nil
	}
	node := &corev1.Node{}
	if err := apiReader.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return runPods, nil, nil
		}
		return nil, nil, err
	}
	return runPods, node, nil
}

// Emit records events on obj.
func Emit(recorder record.EventRecorder, obj client.Object, events []warmup.Event) {
	for _, e := range events {
		recorder.Event(obj, e.Type, e.Reason, e.Message)
	}
}

// ScheduledJobJobs lists a ScheduledJob's Jobs from the cache and reads
// those of recorded (its status.active, or nil to trust the cache) that
// the cache lacks (just created, or the cache is behind) from the API
// server, so that a slow cache is never taken for a deleted Job: a name
// recorded lists is missing from the result only if the API server does
// not have it. readAhead says that it read one: the Jobs then show no one
// moment.
func ScheduledJobJobs(ctx context.Context, cached, live client.Reader, sj *v1alpha1.ScheduledJob, recorded []corev1.ObjectReference) (jobs []*batchv1.Job, readAhead bool, err error) {
	// A claim (no UID) names a Job that may not exist yet, and is read all
	// the same: one that does is a run under way, whatever the status says
	// of it. Its claimer may have died between creating it and recording
	// it, after removing the trigger a triggered run served, and a claim
	// without its request looks like one replaced by hand: from a cache
	// behind, it would no longer block a Forbid run. Every recorded Job is
	// looked for by name.
	refs := make([]Recorded, len(recorded))
	for i, ref := range recorded {
		refs[i] = Recorded{NamespacedName: types.NamespacedName{Namespace: sj.Namespace, Name: ref.Name}}
	}
	opts := []client.ListOption{client.InNamespace(sj.Namespace), client.MatchingFields{ScheduledJobOwnerKey: string(sj.UID)}}
	return CachedAndRecorded(ctx, cached, live, opts, refs, WhenUncached, func(job *batchv1.Job) bool { return metav1.IsControlledBy(job, sj) })
}

// ReadLive reads the Job named key from the API server; nil when there is
// none. Every actor reads so the Job of a run it recorded (a claim, an
// admission, a refused create's name) that its cache lacks: a cache behind
// must never be taken for a Job gone.
func ReadLive(ctx context.Context, live client.Reader, key types.NamespacedName) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	if err := live.Get(ctx, key, job); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return job, nil
}

// ListedLive is a reader that lists a ScheduledJob's Jobs, named name,
// from the API server (live, the process's API reader), for
// ScheduledJobJobs: the field index a cache has is a label there. Its
// list is one read of them.
func ListedLive(live client.Reader, name string) client.Reader {
	return liveOwnedJobs{Reader: live, name: name}
}

// liveOwnedJobs lists a ScheduledJob's Jobs from the API server.
type liveOwnedJobs struct {
	client.Reader
	name string
}

func (r liveOwnedJobs) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	jobs, ok := list.(*batchv1.JobList)
	if !ok || o.FieldSelector == nil {
		return r.Reader.List(ctx, list, opts...)
	}
	uid, _ := o.FieldSelector.RequiresExactMatch(ScheduledJobOwnerKey)
	var all batchv1.JobList
	if err := r.Reader.List(ctx, &all, client.InNamespace(o.Namespace), client.MatchingLabels{v1alpha1.ScheduledJobLabel: r.name}); err != nil {
		return err
	}
	jobs.Items = nil
	for _, job := range all.Items {
		if owner := metav1.GetControllerOf(&job); owner != nil && string(owner.UID) == uid {
			jobs.Items = append(jobs.Items, job)
		}
	}
	return nil
}

// NewerVersion reports whether resourceVersion a of an object is newer
// than b of the same object. The API server's resourceVersions are etcd
// revisions, decimal integers that grow with every write; Kubernetes made
// comparing two of one resource's official in 1.35 (KEP-5504,
// apimachinery's CompareResourceVersion). One that is not such a number is
// never newer: the cache is trusted.
func NewerVersion(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x > y
}
