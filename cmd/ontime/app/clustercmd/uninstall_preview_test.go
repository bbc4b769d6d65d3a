//go:build integration

package clustercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/clitest"
)

// TestUninstallPreview: against a real API server, the preview finds a
// ScheduledJob's Jobs by their controller reference (not another owner's,
// not a Job that only carries the label) and its warm-up pods by their
// owner-UID label.
func TestUninstallPreview(t *testing.T) {
	// Its own API server and processes, no package state: beside the others.
	t.Parallel()
	c := clitest.StartAPIServer(t, "config/crd/bases")
	ctx := context.Background()
	var out bytes.Buffer
	if err := printUninstallPreview(&out, uninstallPreview{}); err != nil || !strings.Contains(out.String(), "No ScheduledJob") {
		t.Fatalf("empty: %v %q", err, out.String())
	}

	podSpec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}
	sj := &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "default"},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec}}}},
	}
	if err := c.Create(ctx, sj); err != nil {
		t.Fatal(err)
	}
	controller := true
	owned := metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: scheduledJobKind, Name: sj.Name, UID: sj.UID, Controller: &controller}
	for _, job := range []*batchv1.Job{
		{ObjectMeta: metav1.ObjectMeta{Name: "nightly-29926980", OwnerReferences: []metav1.OwnerReference{owned}}},
		// Labeled as the ScheduledJob's but not controlled by it: the
		// garbage collector would not delete it.
		{ObjectMeta: metav1.ObjectMeta{Name: "copied", Labels: map[string]string{v1alpha1.ScheduledJobLabel: "nightly"}}},
	} {
		job.Namespace = "default"
		job.Spec.Template.Spec = podSpec
		if err := c.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	placeholder := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nightly-29926980-placeholder-0", Namespace: "default", Labels: map[string]string{
		v1alpha1.WarmUpLabel: v1alpha1.WarmUpPlaceholderPod, v1alpha1.OwnerKindLabel: scheduledJobKind,
		v1alpha1.OwnerNameLabel: sj.Name, v1alpha1.OwnerUIDLabel: string(sj.UID),
	}}, Spec: podSpec}
	if err := c.Create(ctx, placeholder); err != nil {
		t.Fatal(err)
	}

	preview, err := previewUninstall(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	want := uninstallPreview{
		ScheduledJobs: []ownedObjects{{Namespace: "default", Name: "nightly", Jobs: []string{"nightly-29926980"},
			RunningJobs: []string{"nightly-29926980"}, WarmUpPods: []string{"nightly-29926980-placeholder-0"}}},
		Jobs: 1, RunningJobs: []string{"default/nightly-29926980"}, WarmUpPods: 1,
	}
	got, _ := json.Marshal(preview)
	wanted, _ := json.Marshal(want)
	if string(got) != string(wanted) {
		t.Errorf("preview\n got %s\nwant %s", got, wanted)
	}
	out.Reset()
	if err := printUninstallPreview(&out, preview); err != nil ||
		!strings.Contains(out.String(), "deletes 1 ScheduledJobs and, with them, 1 Jobs (1 running: their pods are killed) and 1 warm-up pods") ||
		!strings.Contains(out.String(), "  default/nightly-29926980\n") {
		t.Errorf("%v\n%s", err, out.String())
	}
}
