package planner

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// capacity is what the CapacityReady condition says. Warm-up decides it
// (capacityOf), a spec.warmUp that breaks a rule overrides it
// (invalidWarmUp), and a warm-up object the cluster did not create
// overrides both (warmUpFailed); Finish writes the last word.
type capacity struct {
	// absent removes the condition: the ScheduledJob has no warm-up.
	absent          bool
	status          metav1.ConditionStatus
	reason, message string
}

// write records c in status: the one place that sets or removes the
// CapacityReady condition.
func (c capacity) write(status *v1alpha1.ScheduledJobStatus, generation int64, now time.Time) {
	if c.absent {
		meta.RemoveStatusCondition(&status.Conditions, v1alpha1.ConditionCapacityReady)
		return
	}
	setCondition(status, generation, now, v1alpha1.ConditionCapacityReady, c.status, c.reason, c.message)
}

// changes reports whether c differs from what status says.
func (c capacity) changes(status *v1alpha1.ScheduledJobStatus) bool {
	old := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionCapacityReady)
	if c.absent || old == nil {
		return c.absent != (old == nil)
	}
	return old.Status != c.status || old.Reason != c.reason || old.Message != c.message
}

// invalidWarmUp is the condition of a spec.warmUp that breaks a rule: the
// runs start at their time without it.
func invalidWarmUp(errs field.ErrorList) capacity {
	return capacity{status: metav1.ConditionFalse, reason: v1alpha1.ReasonInvalidWarmUp,
		message: "no warm-up, runs start at their time without it: " + message(errs)}
}

// warmUpFailed is the condition of a warm-up object (placeholder pod or
// CapacityBuffer) that could not be created.
func warmUpFailed(failure warmup.Failure) capacity {
	return capacity{status: metav1.ConditionFalse, reason: v1alpha1.ReasonWarmUpFailed, message: failure.Message()}
}

// capacityOf says whether the capacity of the coming run (or of the run
// that just started) arrived.
func capacityOf(d warmup.Decision, runs timeline, now time.Time) capacity {
	loc := runs.loc
	if loc == nil {
		loc = time.UTC
	}
	at := func(t time.Time) string { return t.In(loc).Format(time.RFC3339) }
	state := d.State
	switch {
	case d.BufferUnavailable:
		return capacity{status: metav1.ConditionFalse, reason: v1alpha1.ReasonCapacityBufferUnavailable, message: "no warm-up, runs start at their time without it: " + d.BufferProblem}
	case state == nil || state.ScheduledTime.Time.Before(runs.current):
		return notWarming(d, runs, at)
	case state.Late:
		return capacity{status: metav1.ConditionFalse, reason: v1alpha1.ReasonCapacityLate, message: fmt.Sprintf("the run at %s started before its capacity was ready: %d of %d warm-up pods placed",
			at(state.ScheduledTime.Time), state.ScheduledPods, state.Pods)}
	case state.ReadyTime != nil:
		return capacity{status: metav1.ConditionTrue, reason: v1alpha1.ReasonCapacityReady, message: fmt.Sprintf("capacity for the run at %s was ready at %s, %s after warm-up began",
			at(state.ScheduledTime.Time), at(state.ReadyTime.Time), state.ReadyTime.Sub(state.StartTime.Time))}
	case d.Waiting && state.ScheduledTime.Time.Equal(runs.current):
		return capacity{status: metav1.ConditionFalse, reason: v1alpha1.ReasonWarmingUp, message: fmt.Sprintf("%d of %d warm-up pods placed for the run at %s, which waits in its concurrency group; warm-up began at %s",
			state.ScheduledPods, state.Pods, at(state.ScheduledTime.Time), at(state.StartTime.Time))}
	case state.ScheduledTime.After(now) && state.Strategy == v1alpha1.WarmUpCapacityBuffer:
		message := fmt.Sprintf("waiting for the autoscaler to report room for %d pods for the run at %s; warm-up began at %s",
			state.Pods, at(state.ScheduledTime.Time), at(state.StartTime.Time))
		if d.BufferProblem != "" {
			message += "; the autoscaler says " + d.BufferProblem
		}
		return capacity{status: metav1.ConditionFalse, reason: v1alpha1.ReasonWarmingUp, message: message}
	case state.ScheduledTime.After(now):
		return capacity{status: metav1.ConditionFalse, reason: v1alpha1.ReasonWarmingUp, message: fmt.Sprintf("%d of %d warm-up pods placed for the run at %s; warm-up began at %s",
			state.ScheduledPods, state.Pods, at(state.ScheduledTime.Time), at(state.StartTime.Time))}
	}
	return capacity{status: metav1.ConditionUnknown, reason: v1alpha1.ReasonWarmingUp, message: fmt.Sprintf("the run at %s did not start", at(state.ScheduledTime.Time))}
}

// notWarming is the condition while no warm-up has begun for the current
// or the next run: when it begins, if any run is coming.
func notWarming(d warmup.Decision, runs timeline, at func(time.Time) string) capacity {
	switch {
	case !d.WaitingStart.IsZero():
		return capacity{status: metav1.ConditionUnknown, reason: v1alpha1.ReasonWarmingUp, message: fmt.Sprintf("the run at %s waits in its concurrency group, predicted to start at %s: warm-up for it begins at %s",
			at(runs.current), at(d.WaitingAdmission), at(d.WaitingStart))}
	case d.NextStart.IsZero():
		return capacity{status: metav1.ConditionUnknown, reason: v1alpha1.ReasonWarmingUp, message: "no run is coming"}
	}
	return capacity{status: metav1.ConditionUnknown, reason: v1alpha1.ReasonWarmingUp, message: fmt.Sprintf("warm-up for the run at %s begins at %s", at(runs.next), at(d.NextStart))}
}
