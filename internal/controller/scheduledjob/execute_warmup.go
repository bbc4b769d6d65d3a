package scheduledjob

import (
	"cmp"
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Warm-up's executors: placeholder and EarlyStart pods, CapacityBuffers.

// executePods creates and deletes placeholder pods. A placeholder that
// exists already was created before; one that is gone was deleted.
func (c *Controller) executePods(ctx context.Context, plan planner.Plan) ([]planner.Result, error) {
	var results []planner.Result
	var firstErr error
	for _, pod := range plan.DeletePods {
		err := c.kubeClient.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if err != nil && !apierrors.IsNotFound(err) {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		results = append(results, planner.PodDeleted(pod))
	}
	createResults, createErr := c.createPods(ctx, plan)
	results = append(results, createResults...)
	bufferResults, bufferErr := c.executeBuffers(ctx, plan)
	return append(results, bufferResults...), cmp.Or(firstErr, createErr, bufferErr)
}

// executeBuffers deletes and creates the plan's CapacityBuffers. A refused
// one is reported, not failed, as placeholders are (createPods).
func (c *Controller) executeBuffers(ctx context.Context, plan planner.Plan) ([]planner.Result, error) {
	if c.buffers == nil {
		return nil, nil
	}
	var results []planner.Result
	var firstErr error
	for _, buffer := range plan.DeleteBuffers {
		if err := c.buffers.Delete(ctx, plan.BufferAPI, buffer); err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		results = append(results, planner.BufferDeleted(buffer.Name))
	}
	for _, request := range plan.CreateBuffers {
		name := request.Buffer.GetName()
		if err := c.buffers.Create(ctx, request); err != nil {
			results = append(results, planner.BufferCreateFailed(name, err))
			if !warmup.Refused(err) {
				firstErr = cmp.Or(firstErr, err)
			}
			continue
		}
		results = append(results, planner.BufferCreated(name))
	}
	return results, firstErr
}

// warmUpRefused reports whether the cluster refused a warm-up pod or
// CapacityBuffer.
func warmUpRefused(results []planner.Result) bool {
	return slices.ContainsFunc(results, func(r planner.Result) bool { return warmup.Refused(r.WarmUpCreateErr()) })
}

// createPods creates the plan's placeholder pods; one that exists already
// was created before.
func (c *Controller) createPods(ctx context.Context, plan planner.Plan) ([]planner.Result, error) {
	var results []planner.Result
	var firstErr error
	for _, pod := range plan.CreatePods {
		created := pod.DeepCopy()
		err := c.kubeClient.Create(ctx, created)
		switch {
		case err == nil || apierrors.IsAlreadyExists(err):
			results = append(results, planner.PodCreated(created))
		case warmup.Refused(err):
			// Reported, not failed: the reconcile that starts the run must
			// not wait for the backoff. The other pods would be refused too.
			return append(results, planner.PodCreateFailed(pod, err)), firstErr
		default:
			results = append(results, planner.PodCreateFailed(pod, err))
			firstErr = cmp.Or(firstErr, err)
		}
	}
	return results, firstErr
}
