//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// capped is a ScheduledJob every minute, Allow with maxActive 2, whose runs
// last 150 s: its third run must wait for its first to finish.
const capped = "capped"

func createCapped(t *testing.T, c client.Client) {
	t.Helper()
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: capped}, Spec: v1alpha1.ScheduledJobSpec{
		Schedule: "* * * * *", ConcurrencyPolicy: v1alpha1.AllowConcurrent, MaxActive: ptr.To[int32](2),
		StartingDeadlineSeconds: ptr.To[int64](50), SuccessfulJobsHistoryLimit: ptr.To[int32](5),
		JobTemplate: pair{podSeconds: 150}.template()}}
	if err := c.Create(context.Background(), sj); err != nil {
		t.Fatal(err)
	}
}

// checkCapped: across the leader's kill 40 s after the first run, no Job
// of capped was created while two were unfinished; the first two runs
// started on time, and the third started late, once the first had
// finished.
func checkCapped(t *testing.T, c client.Client, firstRun time.Time) {
	var list batchv1.JobList
	if err := c.List(context.Background(), &list, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.ScheduledJobLabel: capped}); err != nil {
		t.Fatal(err)
	}
	byRun := map[int64]*batchv1.Job{} // by scheduled time, in Unix seconds
	for i := range list.Items {
		job := &list.Items[i]
		if scheduled, ok := v1alpha1.ScheduledTime(job); ok {
			byRun[scheduled.Unix()] = job
		}
		if unfinished := unfinishedAt(list.Items, job); len(unfinished) >= 2 {
			t.Errorf("%s was created at %s while %v were unfinished: more than maxActive 2", job.Name, job.CreationTimestamp.Format(time.TimeOnly), unfinished)
		}
	}
	first, third := byRun[firstRun.Unix()], byRun[firstRun.Add(2*time.Minute).Unix()]
	if first == nil || byRun[firstRun.Add(time.Minute).Unix()] == nil || third == nil {
		t.Fatalf("runs %v: want the first three", jobNames(list.Items))
	}
	if first.Status.CompletionTime == nil || third.CreationTimestamp.Before(first.Status.CompletionTime) {
		t.Errorf("the third run was created at %s, the first finished at %v: it should have waited for it",
			third.CreationTimestamp.Format(time.TimeOnly), first.Status.CompletionTime)
	}
}

// unfinishedAt names the other Jobs not finished when job was created
// (a completion in the same second counts as before it: the controller
// saw it first).
func unfinishedAt(jobs []batchv1.Job, job *batchv1.Job) []string {
	var names []string
	for _, other := range jobs {
		created, done := other.CreationTimestamp, other.Status.CompletionTime
		if other.Name == job.Name || job.CreationTimestamp.Before(&created) {
			continue
		}
		if done == nil || job.CreationTimestamp.Before(done) {
			names = append(names, other.Name)
		}
	}
	return names
}

func jobNames(jobs []batchv1.Job) []string {
	var names []string
	for _, job := range jobs {
		names = append(names, job.Name)
	}
	return names
}
