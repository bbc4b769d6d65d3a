//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

const (
	// consolidationLead is EarlyStart's lead: long enough for Karpenter to
	// see a node underused (consolidateAfter 10 s), launch its cheaper
	// replacement (10 s) and drain it, before the run's time.
	consolidationLead  = 3 * time.Minute
	consolidationDelay = 10 * time.Second
	// consolidationRun is how long each run's pod runs: its start is
	// read while it runs (kwok reports a finished container's start as
	// its end).
	consolidationRun = 20 * time.Second
)

// TestEarlyStartUnderConsolidation: two EarlyStart runs wait for their
// time, each on a 2-CPU node left underused when the pod that needed the
// node's size went; Karpenter consolidates such a node by replacing it with
// a 1-CPU one. The run whose pods ontime protects (karpenter.sh/
// do-not-disrupt while waiting) keeps its node: its Job has one pod, whose
// containers run once, on time. The control run's template sets
// do-not-disrupt "false", which ontime keeps: its node is replaced and its
// waiting pod evicted, which proves Karpenter did consolidate during the
// wait; the eviction does not count as a failure of its Job (the
// podFailurePolicy rule ontime adds ignores DisruptionTarget), which
// succeeds with the replacement pod.
func TestEarlyStartUnderConsolidation(t *testing.T) {
	t.Parallel()
	binary := framework.SharedOntime(t)
	cluster := framework.StartCluster(t, "ontime-e2e-consolidation", framework.ClusterOptions{Nodes: 1})
	cluster.Kubectl(t, "apply", "--server-side", "-k", "config/dev")
	cluster.StartKarpenter(t, consolidationDelay)
	c := framework.NewClient(t, cluster.Kubeconfig)
	ctx := context.Background()
	waitForCRD(t, c)
	framework.StartController(t, framework.ControllerOptions{Name: "consolidation", Binary: binary, Kubeconfig: cluster.Kubeconfig,
		Work: cluster.Work, LeaderElect: true, Webhook: true})
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: warmNamespace}}); err != nil {
		t.Fatal(err)
	}
	owners := []string{"protected", "unprotected"}
	fillerNodes := startFillers(t, c, owners)

	run := time.Now().UTC().Add(consolidationLead + 30*time.Second).Truncate(time.Minute).Add(time.Minute)
	createEarlyStartRuns(t, c, owners, run)
	framework.Progress("the runs are at %s, their pods created early at %s", run.Format(time.TimeOnly), run.Add(-consolidationLead).Format(time.TimeOnly))

	sleepUntil(run.Add(-consolidationLead))
	framework.Eventually(t, time.Minute, "the early pods to wait beside the fillers", func() bool {
		for _, name := range owners {
			if node := runningNodeOf(t, c, client.MatchingLabels{batchv1.JobNameLabel: name + "-" + v1alpha1.RunLabelValue(run)}); node != fillerNodes[name] {
				return false
			}
		}
		return true
	})
	for _, name := range owners {
		if err := c.Delete(ctx, filler(name)); err != nil {
			t.Fatal(err)
		}
	}
	framework.Progress("fillers deleted: each run's pod waits alone on a 2-CPU node")

	sleepUntil(run.Add(-5 * time.Second))
	if !nodeExists(t, c, fillerNodes["protected"]) {
		t.Errorf("the protected run's node %s was removed while its pod waited", fillerNodes["protected"])
	}
	if nodeExists(t, c, fillerNodes["unprotected"]) {
		t.Fatalf("the control run's node %s is still there: Karpenter consolidated nothing during the wait, and the test proves nothing", fillerNodes["unprotected"])
	}
	sleepUntil(run.Add(10 * time.Second))
	if late, _ := firstStart(t, c, "protected", run); late > 2*time.Second {
		t.Errorf("protected: the run started %s late, want at most 2s", late)
	} else {
		t.Logf("protected: the run started %s late", late)
	}
	sleepUntil(run.Add(consolidationRun + 20*time.Second))
	checkRanOnce(t, c, "protected", run)
	checkReplacedWithoutFailure(t, c, "unprotected", run, fillerNodes["unprotected"])
}

// checkReplacedWithoutFailure: the control run's waiting pod was evicted
// from node (none of its pods is there now), and the eviction did not
// count as a failure of its Job, which succeeded.
func checkReplacedWithoutFailure(t *testing.T, c client.Client, owner string, run time.Time, node string) {
	t.Helper()
	for _, pod := range jobPods(t, c, owner, run) {
		if pod.Spec.NodeName == node {
			t.Errorf("%s: pod %s is still on %s, whose node Karpenter replaced", owner, pod.Name, node)
		}
	}
	// The replacement pod runs from T like the first would have; on a
	// loaded machine its Job's status can take a while to follow.
	job := &batchv1.Job{}
	framework.Eventually(t, 3*time.Minute, owner+"'s Job to finish", func() bool {
		err := c.Get(context.Background(), client.ObjectKey{Namespace: warmNamespace, Name: owner + "-" + v1alpha1.RunLabelValue(run)}, job)
		return err == nil && (job.Status.Succeeded > 0 || job.Status.Failed > 0)
	})
	if job.Status.Failed != 0 || job.Status.Succeeded != 1 {
		t.Errorf("%s: Job failed %d, succeeded %d; want the eviction ignored (podFailurePolicy) and the run done", owner, job.Status.Failed, job.Status.Succeeded)
	} else {
		t.Logf("%s: its waiting pod was evicted by the consolidation and replaced; the Job succeeded with 0 failures", owner)
	}
}

// startFillers gives each owner a NodePool of its own and a filler pod of
// 1100m there, and returns the node each filler runs on: a 2-CPU one,
// with room for the run's 600m pod beside it.
func startFillers(t *testing.T, c client.Client, owners []string) map[string]string {
	t.Helper()
	for _, name := range owners {
		createConsolidatingNodePool(t, c, name)
		if err := c.Create(context.Background(), filler(name)); err != nil {
			t.Fatal(err)
		}
	}
	nodes := map[string]string{}
	framework.Eventually(t, 2*time.Minute, "the fillers to run on nodes of their own", func() bool {
		for _, name := range owners {
			if nodes[name] = runningNodeOf(t, c, client.MatchingLabels{"app": "filler-" + name}); nodes[name] == "" {
				return false
			}
		}
		return true
	})
	return nodes
}

// createEarlyStartRuns creates, for each owner, an EarlyStart ScheduledJob
// with one run at run on the owner's NodePool; the "unprotected" one's
// template sets karpenter.sh/do-not-disrupt "false".
func createEarlyStartRuns(t *testing.T, c client.Client, owners []string, run time.Time) {
	t.Helper()
	schedule := fmt.Sprintf("%d %d * * *", run.Minute(), run.Hour())
	for _, name := range owners {
		sj := warmScheduledJob(name, schedule, &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(consolidationLead), Strategy: v1alpha1.WarmUpEarlyStart})
		sj.Spec.JobTemplate = framework.NodePoolRun(consolidationRun)
		spec := &sj.Spec.JobTemplate.Spec.Template
		spec.Spec.NodeSelector = map[string]string{"karpenter.sh/nodepool": name}
		if name == "unprotected" {
			spec.Annotations["karpenter.sh/do-not-disrupt"] = "false"
		}
		if err := c.Create(context.Background(), sj); err != nil {
			t.Fatal(err)
		}
	}
}

// createConsolidatingNodePool creates a NodePool like "batch" with 1- and
// 2-CPU instance types, whose underused nodes Karpenter consolidates 10 s
// after their last pod change.
func createConsolidatingNodePool(t *testing.T, c client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	gvk := schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"}
	batch := &unstructured.Unstructured{}
	batch.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKey{Name: "batch"}, batch); err != nil {
		t.Fatalf("reading NodePool batch: %v", err)
	}
	spec, _, _ := unstructured.NestedMap(batch.Object, "spec")
	requirements, _, _ := unstructured.NestedSlice(spec, "template", "spec", "requirements")
	for i, r := range requirements {
		if req := r.(map[string]any); req["key"] == "node.kubernetes.io/instance-type" {
			req["values"] = []any{"c-1x-amd64-linux", "c-2x-amd64-linux"}
			requirements[i] = req
		}
	}
	if err := unstructured.SetNestedSlice(spec, requirements, "template", "spec", "requirements"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(spec, "10s", "disruption", "consolidateAfter"); err != nil {
		t.Fatal(err)
	}
	pool := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	pool.SetGroupVersionKind(gvk)
	pool.SetName(name)
	if err := c.Create(ctx, pool); err != nil {
		t.Fatalf("creating NodePool %s: %v", name, err)
	}
}

// filler is a Deployment whose one pod needs more than a 1-CPU node.
func filler(pool string) *appsv1.Deployment {
	labels := map[string]string{"app": "filler-" + pool}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: warmNamespace, Name: "filler-" + pool},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				NodeSelector:                  map[string]string{"karpenter.sh/nodepool": pool},
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers: []corev1.Container{{Name: "filler", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1100m")}}}},
			}}}}
}

// runningNodeOf is the node of the first bound pod the selector matches
// in the test's namespace, or "".
func runningNodeOf(t *testing.T, c client.Client, selector client.MatchingLabels) string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(warmNamespace), selector); err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		if pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil {
			return pod.Spec.NodeName
		}
	}
	return ""
}

func nodeExists(t *testing.T, c client.Client, name string) bool {
	t.Helper()
	node := &corev1.Node{}
	err := c.Get(context.Background(), client.ObjectKey{Name: name}, node)
	return err == nil && node.DeletionTimestamp == nil
}

// jobPods are the pods of an owner's run's Job.
func jobPods(t *testing.T, c client.Client, owner string, run time.Time) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(warmNamespace),
		client.MatchingLabels{batchv1.JobNameLabel: owner + "-" + v1alpha1.RunLabelValue(run)}); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// checkRanOnce: the run's Job has one pod, which succeeded with its
// containers started once (no restart).
func checkRanOnce(t *testing.T, c client.Client, owner string, run time.Time) {
	t.Helper()
	pods := jobPods(t, c, owner, run)
	if len(pods) != 1 {
		t.Fatalf("%s: %d pods for one run, want 1", owner, len(pods))
	}
	pod := pods[0]
	if pod.Status.Phase != corev1.PodSucceeded {
		t.Errorf("%s: the run's pod is %s, want Succeeded", owner, pod.Status.Phase)
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.RestartCount != 0 {
			t.Errorf("%s: container %s restarted %d times", owner, s.Name, s.RestartCount)
		}
	}
}
