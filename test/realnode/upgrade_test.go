//go:build realnode

package realnode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

// nextVersion is the upgrade's image version.
const nextVersion = "v0.0.1-realnode"

// probeField is the optional field the next version's CRD adds.
const probeField = "upgradeProbe"

// checkUpgrade upgrades the Helm release to a second image (another version,
// so another digest) whose chart's CRD has one more optional field, the way
// docs/install.md says (the CRD first: helm upgrade leaves crds/ alone),
// while the every-minute ScheduledJobs run and a client creates and updates
// ScheduledJobs without pause. No admission may fail, and no run may be
// missed or duplicated.
func (e *env) checkUpgrade(t *testing.T) {
	t.Helper()
	chart := nextChart(t)
	next := e.publish(t, nextVersion, chart, thisArch)

	churn := startChurn(e.client, e.registry+"/ontime:"+version)
	began := time.Now()
	framework.Progress("upgrading to %s while a client writes ScheduledJobs", nextVersion)
	// As docs/install.md says: helm show crds … | kubectl apply --server-side -f -
	// (--force-conflicts: Helm's first install owns the CRD's fields).
	framework.Command(t, nil, "bash", "-euo", "pipefail", "-c", fmt.Sprintf(
		"%s show crds oci://%s/charts/ontime --plain-http --version %s | %s --kubeconfig %s apply --server-side --force-conflicts -f -",
		e.helm, e.registry, next.chartVersion(), framework.KubeBin(t, "kubectl"), e.cluster.Kubeconfig))
	// Helm 4 upgrades the release Helm 3 installed, as a team moving to
	// Helm 4 does.
	e.helmInstall(t, e.helm4, "upgrade", next)
	rolledOut := time.Now()
	// Past the old pods' shutdown and the next minute's runs.
	sleepUntil(rolledOut.Truncate(time.Minute).Add(time.Minute + 20*time.Second))
	writes, failures := churn.stop()
	framework.Progress("upgraded in %s; %d ScheduledJob writes meanwhile, %d failed", rolledOut.Sub(began).Round(100*time.Millisecond), writes, len(failures))
	if writes < 20 {
		t.Errorf("only %d ScheduledJob writes during the upgrade: the check proves little", writes)
	}
	for _, failure := range failures[:min(len(failures), 5)] {
		t.Errorf("a ScheduledJob write failed during the upgrade: %v", failure)
	}

	for _, pod := range e.controllerPods(t) {
		if image := pod.Spec.Containers[0].Image; image != e.image(next) || !podReady(pod) {
			t.Errorf("controller pod %s runs %s (ready %v), want %s", pod.Name, image, podReady(pod), e.image(next))
		}
	}
	// The every-minute runs from the one before the upgrade to the one after.
	first := began.Truncate(time.Minute)
	last := time.Now().Truncate(time.Minute)
	e.checkNoRunLost(t, "ontime-plain", first, last)
	for at := first; !at.After(last); at = at.Add(time.Minute) {
		e.checkRunPod(t, e.runPod(t, "ontime-plain", at), "main")
	}
	// The new field is served: a ScheduledJob keeps it.
	out := e.cluster.Kubectl(t, "explain", "scheduledjob.spec."+probeField)
	if !strings.Contains(out, probeField) {
		t.Errorf("kubectl explain scheduledjob.spec.%s after the upgrade: %s", probeField, out)
	}
	e.checkHelmVersionsShareTheRelease(t, next)
}

// checkHelmVersionsShareTheRelease: Helm 3 upgrades the release Helm 4
// last upgraded (a team with both on its machines), and each lists the
// three revisions, the last deployed.
func (e *env) checkHelmVersionsShareTheRelease(t *testing.T, next release) {
	t.Helper()
	e.helmInstall(t, e.helm, "upgrade", next)
	for _, helm := range []string{e.helm, e.helm4} {
		out := framework.Command(t, nil, helm, "--kubeconfig", e.cluster.Kubeconfig, "history", "ontime", "--namespace", namespace, "-o", "json")
		var revisions []struct {
			Revision int    `json:"revision"`
			Status   string `json:"status"`
		}
		if err := json.Unmarshal([]byte(out), &revisions); err != nil {
			t.Fatalf("%s history: %v: %s", helm, err, out)
		}
		if n := len(revisions); n != 3 || revisions[n-1].Status != "deployed" {
			t.Errorf("%s history: %+v, want 3 revisions, the last deployed", helm, revisions)
		}
	}
	framework.Progress("Helm 3 installed, Helm 4 upgraded, Helm 3 upgraded again: 3 revisions, each Helm reads them")
}

// nextChart is a copy of charts/ontime whose CRD has one more optional
// field, as the next version's would.
func nextChart(t *testing.T) string {
	t.Helper()
	chart := filepath.Join(t.TempDir(), "ontime")
	if err := os.CopyFS(chart, os.DirFS(filepath.Join(framework.RepoRoot(), "charts/ontime"))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(chart, "crds", "ontime.dev_scheduledjobs.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	for _, version := range dig(t, crd, "spec", "versions").([]any) {
		spec := dig(t, version.(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties").(map[string]any)
		spec[probeField] = map[string]any{"type": "string", "description": "An optional field the upgrade test's next version adds."}
	}
	if raw, err = yaml.Marshal(crd); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return chart
}

// dig walks nested maps by keys.
func dig(t *testing.T, object map[string]any, keys ...string) any {
	t.Helper()
	var value any = object
	for _, key := range keys {
		m, ok := value.(map[string]any)
		if !ok {
			t.Fatalf("the CRD has no %s", strings.Join(keys, "."))
		}
		value = m[key]
	}
	return value
}

// churn creates, updates and deletes ScheduledJobs one after the other,
// through the webhook, until stopped.
type churn struct {
	// image is the ScheduledJobs' (never run).
	image    string
	done     chan struct{}
	finished chan struct{}
	writes   int
	failures []error
}

func startChurn(c client.Client, image string) *churn {
	ch := &churn{image: image, done: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(ch.finished)
		for i := 0; ; i++ {
			select {
			case <-ch.done:
				return
			default:
			}
			ch.write(c, i)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return ch
}

// write creates a ScheduledJob that will not run for months, updates its
// schedule and deletes it.
func (ch *churn) write(c client.Client, i int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sj := &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ontime-churn-%d", i), Namespace: workloads},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "0 0 1 1 *", JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: ch.image}},
			}}},
		}},
	}
	ch.writes++
	if err := c.Create(ctx, sj); err != nil {
		ch.failures = append(ch.failures, fmt.Errorf("create %s at %s: %w", sj.Name, time.Now().Format(time.TimeOnly), err))
		return
	}
	ch.writes++
	// A merge patch, without the resourceVersion: the controller writes
	// the object too (its status), and a conflict is no admission failure.
	before := sj.DeepCopy()
	sj.Spec.Schedule = "30 0 1 1 *"
	if err := c.Patch(ctx, sj, client.MergeFrom(before)); err != nil {
		ch.failures = append(ch.failures, fmt.Errorf("update %s at %s: %w", sj.Name, time.Now().Format(time.TimeOnly), err))
	}
	// Deletions are not admitted by the webhook; deleteWorkloads removes
	// any left.
	_ = c.Delete(ctx, sj)
}

// stop ends the writes and returns how many there were and which failed.
func (ch *churn) stop() (int, []error) {
	close(ch.done)
	<-ch.finished
	return ch.writes, ch.failures
}
