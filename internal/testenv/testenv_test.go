//go:build integration

package testenv_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/internal/testenv"
)

// TestRealAPIServer proves the integration harness runs a real apiserver:
// it creates a CronJob and reads back what the server's defaulting made of it.
func TestRealAPIServer(t *testing.T) {
	env, config, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the test apiserver: %v", err)
		}
	})
	c, err := client.New(config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "harness"}}); err != nil {
		t.Fatal(err)
	}
	cronJob := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "harness", Name: "nightly"},
		Spec: batchv1.CronJobSpec{
			Schedule: "0 2 * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				},
			}}},
		},
	}
	if err := c.Create(ctx, cronJob); err != nil {
		t.Fatal(err)
	}
	var got batchv1.CronJob
	if err := c.Get(ctx, types.NamespacedName{Namespace: "harness", Name: "nightly"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Schedule != "0 2 * * *" {
		t.Errorf("schedule = %q, want %q", got.Spec.Schedule, "0 2 * * *")
	}
	// Defaults only a real apiserver applies.
	if got.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent {
		t.Errorf("concurrencyPolicy = %q, want the server default %q", got.Spec.ConcurrencyPolicy, batchv1.AllowConcurrent)
	}
	if got.Spec.SuccessfulJobsHistoryLimit == nil || *got.Spec.SuccessfulJobsHistoryLimit != 3 {
		t.Errorf("successfulJobsHistoryLimit = %v, want the server default 3", got.Spec.SuccessfulJobsHistoryLimit)
	}
	if got.UID == "" || got.CreationTimestamp.IsZero() {
		t.Errorf("the server did not assign a UID and creation time: %+v", got.ObjectMeta)
	}

	// And it validates: a schedule CronJob validation rejects.
	bad := cronJob.DeepCopy()
	bad.ResourceVersion, bad.Name, bad.Spec.Schedule = "", "broken", "61 * * * *"
	if err := c.Create(ctx, bad); err == nil {
		t.Error("the apiserver accepted schedule 61 * * * *")
	}
}
