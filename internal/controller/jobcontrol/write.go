package jobcontrol

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
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

// FailureBackoff retries a failed reconcile quickly and never waits longer
// than 30 s, so that a transient API error cannot push a run back by
// minutes (controller-runtime's default grows to 1000 s, and its overall
// 10-per-second bucket paced a standby's hundred retries after an outage
// over ten seconds). Every controller that starts runs uses it.
func FailureBackoff() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](10*time.Millisecond, 30*time.Second)
}
