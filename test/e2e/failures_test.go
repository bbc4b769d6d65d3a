//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

// flaky is a ScheduledJob whose every run fails (hack/kwok's fail stage),
// with suspendAfterFailures 2.
const flaky = "flaky"

func createFlaky(t *testing.T, c client.Client) {
	t.Helper()
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: flaky}, Spec: v1alpha1.ScheduledJobSpec{
		Schedule: "* * * * *", SuspendAfterFailures: ptr.To[int32](2), FailedJobsHistoryLimit: ptr.To[int32](5),
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"fail.stage.ontime.dev/exit-code": "1"}},
			Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}}}}}
	if err := c.Create(context.Background(), sj); err != nil {
		t.Fatal(err)
	}
}

// checkSuspendedAfterFailures: the first two runs failed, across the
// leader's kill 40 s after the first; the second suspended the
// ScheduledJob, which ran nothing after. The suspension's spec write
// waits for the webhook (killed with the first replica, if it led), and
// no run starts meanwhile.
func checkSuspendedAfterFailures(t *testing.T, c client.Client, firstRun time.Time) {
	ctx := context.Background()
	sj := &v1alpha1.ScheduledJob{}
	framework.Eventually(t, 90*time.Second, "flaky to be suspended", func() bool {
		return c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: flaky}, sj) == nil && sj.Status.Failures != nil && sj.Status.Failures.Suspended
	})
	want := []string{sj.JobName(firstRun), sj.JobName(firstRun.Add(time.Minute))}
	if got := flakyJobs(t, c); !slices.Equal(got, want) {
		t.Errorf("Jobs %v, want the two failed runs %v and nothing after", got, want)
	}
	if sj.Spec.Suspend == nil || !*sj.Spec.Suspend {
		t.Error("spec.suspend is not true")
	}
	if f := sj.Status.Failures; f == nil || f.Count != 2 || !f.Suspended || !slices.Equal(f.Jobs, want) {
		t.Errorf("status.failures %+v", f)
	}
	if ready := meta.FindStatusCondition(sj.Status.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Reason != v1alpha1.ReasonSuspendedAfterFailures {
		t.Errorf("Ready %+v", ready)
	}
	// The event is recorded after the status that says suspended: wait
	// for it.
	framework.Eventually(t, 30*time.Second, fmt.Sprintf("a SuspendedAfterFailures event naming %v", want), func() bool {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace(namespace), client.MatchingFields{"involvedObject.name": flaky}); err != nil {
			return false
		}
		return slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.Reason == v1alpha1.ReasonSuspendedAfterFailures && strings.Contains(e.Message, strings.Join(want, ", "))
		})
	})
}

// checkResumedAfterFailures: suspend set back to false, the next run
// starts and the count starts again from 0.
func checkResumedAfterFailures(t *testing.T, c client.Client) {
	ctx := context.Background()
	before := len(flakyJobs(t, c))
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":false}}`))
	if err := c.Patch(ctx, &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: flaky}}, patch); err != nil {
		t.Fatal(err)
	}
	// The run after the resume fails too: the count is then 1, never the
	// 3 it would be had the resume not reset it.
	framework.Eventually(t, 75*time.Second, "a run after the resume, counted from 0", func() bool {
		sj := &v1alpha1.ScheduledJob{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: flaky}, sj); err != nil {
			return false
		}
		since := len(flakyJobs(t, c)) - before
		f := sj.Status.Failures
		return since > 0 && f != nil && !f.Suspended && int(f.Count) <= since
	})
}

// flakyJobs are the names of flaky's Jobs, sorted.
func flakyJobs(t *testing.T, c client.Client) []string {
	t.Helper()
	var jobs batchv1.JobList
	if err := c.List(context.Background(), &jobs, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.ScheduledJobLabel: flaky}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, job := range jobs.Items {
		names = append(names, job.Name)
	}
	slices.Sort(names)
	return names
}
