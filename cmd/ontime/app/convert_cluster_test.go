//go:build integration

package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/clitest"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// TestConvertRecipesOnACluster runs install.md's recipes with kubectl
// against an API server: live ScheduledJobs piped through
// `ontime convert -f - --to cronjob` are created as CronJobs with the same
// spec (warm-up as the annotation), and those CronJobs piped back through
// `ontime convert -f -` are created as ScheduledJobs again.
func TestConvertRecipesOnACluster(t *testing.T) {
	// Its own API server and processes, no package state: beside the others.
	t.Parallel()
	c, config := clitest.StartAPIServerConfig(t, "config/crd/bases")
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.WriteKubeconfig(config, kubeconfig); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, sj := range []*v1alpha1.ScheduledJob{
		convertible("nightly", "30 2 * * *", &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(600_000_000_000)}),
		convertible("hourly", "0 * * * *", nil),
	} {
		if err := c.Create(ctx, sj); err != nil {
			t.Fatal(err)
		}
	}

	// kubectl create validates against the API server's OpenAPI document
	// with a 32 s timeout, which its first build exceeded at make test's
	// lowest CPU priority beside three clusters; once built, the API
	// server serves it from memory.
	if _, err := discovery.NewDiscoveryClientForConfigOrDie(config).OpenAPISchema(); err != nil {
		t.Fatal(err)
	}
	recipe(t, kubeconfig, "get sj -n default -o yaml", []string{"convert", "-f", "-", "--to", "cronjob"}, "create -f -")
	cronJob := &batchv1.CronJob{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nightly"}, cronJob); err != nil {
		t.Fatalf("the converted CronJob was not created: %v", err)
	}
	if cronJob.Spec.Schedule != "30 2 * * *" || cronJob.Annotations[v1alpha1.WarmUpLeadAnnotation] != "10m0s" || cronJob.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("CronJob %+v, annotations %v: not the ScheduledJob's spec", cronJob.Spec, cronJob.Annotations)
	}

	// The way back, once the ScheduledJobs are gone (as after uninstalling).
	if err := c.DeleteAllOf(ctx, &v1alpha1.ScheduledJob{}, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	recipe(t, kubeconfig, "get cronjob -n default -o yaml", []string{"convert", "-f", "-"}, "create -f -")
	sj := &v1alpha1.ScheduledJob{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nightly"}, sj); err != nil {
		t.Fatalf("the converted ScheduledJob was not created: %v", err)
	}
	if sj.Spec.Schedule != "30 2 * * *" || sj.Spec.WarmUp == nil || sj.Spec.WarmUp.Lead.String() != "10m0s" {
		t.Errorf("ScheduledJob spec %+v: not the CronJob's", sj.Spec)
	}
}

// convertible is a ScheduledJob a CronJob can express.
func convertible(name, schedule string, warmUp *v1alpha1.WarmUp) *v1alpha1.ScheduledJob {
	return &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: schedule, ConcurrencyPolicy: v1alpha1.ForbidConcurrent, WarmUp: warmUp,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"true"}}},
			}}, BackoffLimit: ptr.To[int32](1)}}},
	}
}

// recipe runs `kubectl GET | ontime ARGS | kubectl CREATE` with this test
// binary as ontime (TestMain runs it as the CLI).
func recipe(t *testing.T, kubeconfig, get string, ontime []string, create string) {
	t.Helper()
	assets, err := testenv.Assets()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(assets, "kubectl") + " --kubeconfig " + kubeconfig + " "
	args, _ := json.Marshal(ontime)
	pipeline := kubectl + get + " | " + os.Args[0] + " -test.run='^$' | " + kubectl + create
	cmd := exec.Command("bash", "-o", "pipefail", "-c", pipeline)
	cmd.Env = append(os.Environ(), controllerChild+"="+string(args))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.ReplaceAll(pipeline, os.Args[0], "ontime"), err, out)
	}
}
