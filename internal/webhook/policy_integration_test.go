//go:build integration

package webhook

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestPriorityCapPolicy: config/policies/concurrency-priority-cap.yaml, the
// threat model's answer to a tenant's concurrency priority (docs/security.md),
// applied as shipped, refuses in a namespace labeled
// ontime.dev/priority-capped=true a ScheduledJob's priority and a CronJob's
// priority annotation above 0, naming the field and the value, and lets 0
// and below through; an unlabeled namespace is not capped.
func TestPriorityCapPolicy(t *testing.T) {
	ctx := context.Background()
	applyFile(t, filepath.Join("..", "..", "config", "policies", "concurrency-priority-cap.yaml"))
	capped := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-", Labels: map[string]string{"ontime.dev/priority-capped": "true"}}}
	free := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "platform-"}}
	for _, ns := range []*corev1.Namespace{capped, free} {
		if err := apiClient.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	member := func(ns string, priority int32) *v1alpha1.ScheduledJob {
		sj := validScheduledJob("nightly")
		sj.Namespace, sj.Spec.ConcurrencyGroup = ns, &v1alpha1.ConcurrencyGroupRef{Name: "db", Priority: priority}
		return sj
	}
	// The API server loads a new policy from its watch: wait until it
	// refuses what it must.
	var refused error
	deadline := time.Now().Add(30 * time.Second)
	for refused == nil && time.Now().Before(deadline) {
		refused = apiClient.Create(ctx, member(capped.Name, 5), client.DryRunAll)
		if refused == nil {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if refused == nil || !strings.Contains(refused.Error(), "spec.concurrencyGroup.priority 5 is above 0, the cap for this namespace") {
		t.Fatalf("a ScheduledJob with priority 5 in a capped namespace: %v, want refused naming the field and the value", refused)
	}
	for _, allowed := range []*v1alpha1.ScheduledJob{member(capped.Name, 0), member(capped.Name, -10), member(free.Name, 500)} {
		if err := apiClient.Create(ctx, allowed, client.DryRunAll); err != nil {
			t.Errorf("priority %d in %s: %v, want admitted", allowed.Spec.ConcurrencyGroup.Priority, allowed.Namespace, err)
		}
	}
	cronJob := func(ns, priority string) *batchv1.CronJob {
		return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly", Annotations: map[string]string{
			v1alpha1.GroupLabel: "db", v1alpha1.GroupPriorityAnnotation: priority}},
			Spec: batchv1.CronJobSpec{Schedule: "0 2 * * *", JobTemplate: validScheduledJob("template").Spec.JobTemplate}}
	}
	err := apiClient.Create(ctx, cronJob(capped.Name, "7"), client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "annotation ontime.dev/concurrency-priority 7 is above 0") {
		t.Errorf("a CronJob with priority 7 in a capped namespace: %v, want refused naming the annotation and the value", err)
	}
	for _, allowed := range []*batchv1.CronJob{cronJob(capped.Name, "0"), cronJob(free.Name, "7")} {
		if err := apiClient.Create(ctx, allowed, client.DryRunAll); err != nil {
			t.Errorf("a CronJob with priority %s in %s: %v, want admitted", allowed.Annotations[v1alpha1.GroupPriorityAnnotation], allowed.Namespace, err)
		}
	}
}

// applyFile creates every object of a YAML file, as kubectl apply -f
// would on a cluster that has none of them.
func applyFile(t *testing.T, path string) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = file.Close() }()
	decoder := utilyaml.NewYAMLOrJSONDecoder(file, 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if err := apiClient.Create(context.Background(), obj); err != nil {
			t.Fatalf("%s: creating %s %s: %v", path, obj.GetKind(), obj.GetName(), err)
		}
		t.Cleanup(func() { _ = apiClient.Delete(context.Background(), obj) })
	}
}
