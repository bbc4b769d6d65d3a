// Package owned reads what an owner (a ScheduledJob, an annotated CronJob)
// owns: its Jobs, through the index of Jobs by their controller, and a
// run's pods; and records events on the owner. Nothing here decides.
package owned

import (
	"context"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

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
// says one is ready or finished.
func RunPods(ctx context.Context, apiReader client.Reader, job *batchv1.Job) ([]*corev1.Pod, error) {
	var pods corev1.PodList
	if err := apiReader.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return nil, err
	}
	return Pointers(pods.Items), nil
}

// ControllerUID indexes objects by the UID of their controller of the
// given API version and kind, so each reconcile lists only its own Jobs.
func ControllerUID(apiVersion, kind string) client.IndexerFunc {
	return func(o client.Object) []string {
		owner := metav1.GetControllerOf(o)
		if owner == nil || owner.Kind != kind || owner.APIVersion != apiVersion {
			return nil
		}
		return []string{string(owner.UID)}
	}
}

// Emit records events on obj.
func Emit(recorder record.EventRecorder, obj client.Object, events []warmup.Event) {
	for _, e := range events {
		recorder.Event(obj, e.Type, e.Reason, e.Message)
	}
}

// ScheduledJobOwnerKey indexes Jobs by the UID of the ScheduledJob that
// controls them, so each reconcile lists only its own Jobs from the cache.
const ScheduledJobOwnerKey = ".metadata.controller.uid"

// ScheduledJobJobs lists a ScheduledJob's Jobs from the cache and reads
// those of recorded (its status.active, or nil to trust the cache) that
// the cache lacks (just created, or the cache is behind) from the API
// server, so that a slow cache is never taken for a deleted Job: a name
// recorded lists is missing from the result only if the API server does
// not have it. readAhead says that it read one: the Jobs then show no one
// moment.
func ScheduledJobJobs(ctx context.Context, cached, live client.Reader, sj *v1alpha1.ScheduledJob, recorded []corev1.ObjectReference) (jobs []*batchv1.Job, readAhead bool, err error) {
	var list batchv1.JobList
	if err := cached.List(ctx, &list, client.InNamespace(sj.Namespace), client.MatchingFields{ScheduledJobOwnerKey: string(sj.UID)}); err != nil {
		return nil, false, err
	}
	jobs = make([]*batchv1.Job, 0, len(list.Items))
	cachedNames := map[string]bool{}
	for i := range list.Items {
		jobs = append(jobs, &list.Items[i])
		cachedNames[list.Items[i].Name] = true
	}
	for _, ref := range recorded {
		// A claim (no UID) names a Job that may not exist yet, and is read
		// all the same: one that does is a run under way, whatever the
		// status says of it. Its claimer may have died between creating it
		// and recording it, after removing the trigger a triggered run
		// served, and a claim without its request looks like one replaced
		// by hand: from a cache behind, it would no longer block a Forbid
		// run.
		if cachedNames[ref.Name] {
			continue
		}
		job := &batchv1.Job{}
		err := live.Get(ctx, types.NamespacedName{Namespace: sj.Namespace, Name: ref.Name}, job)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, false, err
		case metav1.IsControlledBy(job, sj):
			jobs, readAhead = append(jobs, job), true
		}
	}
	return jobs, readAhead, nil
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

// CronJobGroupKey indexes the CronJobs by the concurrency group their
// annotation joins (v1alpha1.GroupIndexValue): a group lists its member
// CronJobs' next runs with it, and a group's change reconciles the members
// whose warm-up reads its predictions.
const CronJobGroupKey = ".metadata.annotations.concurrencyGroup"

// CronJobOwnerKey indexes Jobs by the UID of the CronJob that controls
// them: CronJob warm-up lists a CronJob's runs by it, and a concurrency
// group the runs of its member CronJobs that the Job webhook did not see.
const CronJobOwnerKey = ".metadata.cronjob.uid"

// IndexCronJobs adds CronJobGroupKey's and CronJobOwnerKey's indexes. A
// process adds them once, for all of their readers
// (internal/controller.Register).
func IndexCronJobs(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &batchv1.CronJob{}, CronJobGroupKey, IndexCronJobGroup); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &batchv1.Job{}, CronJobOwnerKey, IndexCronJobOwner)
}

// IndexCronJobOwner is CronJobOwnerKey's index function.
var IndexCronJobOwner = ControllerUID(batchv1.SchemeGroupVersion.String(), "CronJob")

// IndexCronJobGroup is CronJobGroupKey's index function.
func IndexCronJobGroup(obj client.Object) []string {
	if ref, ok := v1alpha1.CronJobGroupRef(obj.GetAnnotations()); ok {
		return []string{v1alpha1.GroupIndexValue(ref.Kind, ref.Key(obj.GetNamespace()))}
	}
	return nil
}
