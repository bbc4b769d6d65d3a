package warmupobjects

import (
	"cmp"
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/internal/warmup"
)

// Executor carries out warm-up's Changes for any owner: deletions first,
// then creations. A warm-up object that exists already was created before;
// one that is gone was deleted.
type Executor struct {
	client client.Client
	// buffers is nil where the controller runs without CapacityBuffers.
	buffers *Buffers
}

// NewExecutor returns the executor of warm-up objects. buffers is the
// process's one Buffers (one discovery cache), or nil.
func NewExecutor(c client.Client, buffers *Buffers) *Executor {
	return &Executor{client: c, buffers: buffers}
}

// Execute deletes, then creates, the changes' pods and CapacityBuffers.
// A refused creation (warmup.Refused: quota, admission policy) is
// reported in Applied, not returned: the reconcile that starts the run
// must not wait for the backoff. err is the first other failure; every
// change is tried whatever it is.
func (e *Executor) Execute(ctx context.Context, changes warmup.Changes) (warmup.Applied, error) {
	var applied warmup.Applied
	err := cmp.Or(e.deletePods(ctx, changes), e.deleteBuffers(ctx, changes))
	for _, pod := range changes.CreatePods {
		createErr := e.client.Create(ctx, pod.DeepCopy())
		if createErr == nil || apierrors.IsAlreadyExists(createErr) {
			continue
		}
		applied.Failed = append(applied.Failed, warmup.Failure{Object: "placeholder pod " + pod.Name, Err: createErr})
		if warmup.Refused(createErr) {
			// The other pods would be refused too.
			applied.Refused = true
			break
		}
		err = cmp.Or(err, createErr)
	}
	for _, request := range changes.CreateBuffers {
		if e.buffers == nil {
			break // no CapacityBuffers in this process: nothing to ask
		}
		if createErr := e.buffers.Create(ctx, request); createErr != nil {
			applied.Failed = append(applied.Failed, warmup.Failure{Object: "CapacityBuffer " + request.Buffer.GetName(), Err: createErr})
			if warmup.Refused(createErr) {
				applied.Refused = true
				continue
			}
			err = cmp.Or(err, createErr)
		}
	}
	return applied, err
}

func (e *Executor) deletePods(ctx context.Context, changes warmup.Changes) error {
	var firstErr error
	for _, pod := range changes.DeletePods {
		err := e.client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			firstErr = cmp.Or(firstErr, err)
		}
	}
	return firstErr
}

func (e *Executor) deleteBuffers(ctx context.Context, changes warmup.Changes) error {
	if e.buffers == nil {
		return nil
	}
	var firstErr error
	for _, buffer := range changes.DeleteBuffers {
		firstErr = cmp.Or(firstErr, e.buffers.Delete(ctx, changes.BufferAPI, buffer))
	}
	return firstErr
}
