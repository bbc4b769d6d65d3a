package warmupobjects

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Observed is what an owner of warm-up has in the cluster.
type Observed struct {
	// Pods are its warm-up pods (placeholders and EarlyStart pods).
	Pods []*corev1.Pod
	// BufferAPI is the CapacityBuffer API's version and Buffers the
	// owner's CapacityBuffers, read only when it uses them.
	BufferAPI warmup.BufferAPI
	Buffers   []warmup.Buffer
}

// Gather reads what owner (a ScheduledJob or an annotated CronJob) has for
// warm-up, the same way for both: its warm-up pods from the cache, and its
// CapacityBuffers from the API server when it warms up with them (wanted,
// the strategy its spec asks for) or its last warm-up did (last, from its
// status or state annotation; "" for none), so that a strategy changed or
// a warm-up removed is cleaned up. Nothing else is read: the API may not
// be served, and most owners never use it.
func (e *Executor) Gather(ctx context.Context, owner client.Object, wanted, last v1alpha1.WarmUpStrategy) (Observed, error) {
	var observed Observed
	var err error
	if observed.Pods, err = Pods(ctx, e.client, owner); err != nil {
		return observed, err
	}
	if e.buffers == nil || (wanted != v1alpha1.WarmUpCapacityBuffer && last != v1alpha1.WarmUpCapacityBuffer) {
		return observed, nil
	}
	observed.BufferAPI, observed.Buffers, err = e.buffers.Read(ctx, owner)
	return observed, err
}

// LastStrategy is the strategy of the last warm-up a status or state
// records; "" when it records none.
func LastStrategy(last *v1alpha1.WarmUpStatus) v1alpha1.WarmUpStrategy {
	if last == nil {
		return ""
	}
	return last.Strategy
}
