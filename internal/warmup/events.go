package warmup

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Event is a Kubernetes event to record on the warm-up's owner.
type Event struct {
	Type, Reason, Message string
}

// Every warm-up event is built here, one constructor each; reasons are
// declared in api/v1alpha1.

func warmUpStartedEvent(in Input, pods int32) Event {
	run := in.Next.UTC().Format(time.RFC3339)
	if in.Options.Strategy == v1alpha1.WarmUpEarlyStart {
		return Event{corev1.EventTypeNormal, v1alpha1.ReasonWarmUpStarted,
			fmt.Sprintf("warm-up for the run at %s began (EarlyStart, lead %s): its job's %d pods wait for it on their nodes", run, in.Options.Lead, pods)}
	}
	if in.Options.Strategy == v1alpha1.WarmUpCapacityBuffer {
		return Event{corev1.EventTypeNormal, v1alpha1.ReasonWarmUpStarted,
			fmt.Sprintf("warm-up for the run at %s began (CapacityBuffer, lead %s): asking the autoscaler for room for %d pods", run, in.Options.Lead, pods)}
	}
	return Event{corev1.EventTypeNormal, v1alpha1.ReasonWarmUpStarted,
		fmt.Sprintf("warm-up for the run at %s began (Placeholder, lead %s): creating %d placeholder pods", run, in.Options.Lead, pods)}
}

func warmUpReadyEvent(state *v1alpha1.WarmUpStatus) Event {
	if state.Strategy == v1alpha1.WarmUpCapacityBuffer {
		return Event{corev1.EventTypeNormal, v1alpha1.ReasonWarmUpReady,
			fmt.Sprintf("capacity for the run at %s is ready: the autoscaler reports room for its %d pods, %s after warm-up began",
				state.ScheduledTime.UTC().Format(time.RFC3339), state.Pods, state.ReadyTime.Sub(state.StartTime.Time))}
	}
	return Event{corev1.EventTypeNormal, v1alpha1.ReasonWarmUpReady,
		fmt.Sprintf("capacity for the run at %s is ready: %d pods placed, %s after warm-up began",
			state.ScheduledTime.UTC().Format(time.RFC3339), state.Pods, state.ReadyTime.Sub(state.StartTime.Time))}
}

func warmUpLateEvent(state *v1alpha1.WarmUpStatus) Event {
	return Event{corev1.EventTypeWarning, v1alpha1.ReasonWarmUpLate,
		fmt.Sprintf("the run at %s started before its capacity was ready: %d of %d warm-up pods placed; lengthen spec.warmUp.lead",
			state.ScheduledTime.UTC().Format(time.RFC3339), state.ScheduledPods, state.Pods)}
}

func warmUpCanceledEvent(run time.Time, pods int) Event {
	return Event{corev1.EventTypeNormal, v1alpha1.ReasonWarmUpCanceled,
		fmt.Sprintf("deleted %d placeholder pods of the run at %s, which is not starting (suspended, rescheduled, held back by concurrencyPolicy Forbid, past its deadline, or refused by its concurrency group)", pods, run.UTC().Format(time.RFC3339))}
}

func bufferCanceledEvent(run time.Time) Event {
	return Event{corev1.EventTypeNormal, v1alpha1.ReasonWarmUpCanceled,
		fmt.Sprintf("deleted the CapacityBuffer of the run at %s, which is not starting (suspended, rescheduled, held back by concurrencyPolicy Forbid, past its deadline, or refused by its concurrency group)", run.UTC().Format(time.RFC3339))}
}

// bufferUnavailableEvent reports a CapacityBuffer warm-up that cannot be
// asked for: the run starts at its time without it.
func bufferUnavailableEvent(run time.Time, problem string) Event {
	return Event{corev1.EventTypeWarning, v1alpha1.ReasonCapacityBufferUnavailable,
		fmt.Sprintf("no warm-up for the run at %s, which starts at its time without it: %s", run.UTC().Format(time.RFC3339), problem)}
}

// RefusedEvent reports warm-up pods the cluster refused (Refused): the
// run is not held back by it.
func RefusedEvent(err error) Event {
	return Event{corev1.EventTypeWarning, v1alpha1.ReasonWarmUpFailed,
		"warm-up pods refused, the run starts at its time without them (retried every " + RefusedRetry.String() + "): " + err.Error()}
}

// FailedEvent reports warm-up pods that could not be created.
func FailedEvent(err error) Event {
	return Event{corev1.EventTypeWarning, v1alpha1.ReasonWarmUpFailed, "creating warm-up pods: " + err.Error()}
}

// InvalidEvent reports a warm-up request that cannot be followed: a
// CronJob's lead annotation or schedule that cannot be read.
func InvalidEvent(err error) Event {
	return Event{corev1.EventTypeWarning, v1alpha1.ReasonWarmUpFailed, "no warm-up: " + err.Error()}
}

// InvalidGroupEvent reports a CronJob whose group annotations cannot be
// followed (v1alpha1.CronJobGroup), so that the Job webhook refuses its
// runs. CronJob warm-up reports it with the CronJob's warm-up problems:
// it reconciles every CronJob and remembers what it reported.
func InvalidGroupEvent(err error) Event {
	return Event{corev1.EventTypeWarning, v1alpha1.ReasonInvalidGroupAnnotation, "its runs are refused until this is fixed: " + err.Error()}
}
