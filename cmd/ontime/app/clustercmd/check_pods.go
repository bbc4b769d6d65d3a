package clustercmd

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controllerLabel selects the controller's pods, as the chart and
// install.yaml label them.
var controllerLabel = client.MatchingLabels{"app.kubernetes.io/name": "ontime"}

// pullFailures are the waiting reasons of a container whose image the node
// cannot pull.
var pullFailures = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true}

// controller: the controller's pods run and are ready; when none is, why
// (the image cannot be pulled, the container crashes, no node takes the
// pod), since the webhook and the leader checks can only say that nothing
// answers.
func (k checker) controller(ctx context.Context) CheckResult {
	result := CheckResult{Check: "controller"}
	ns := k.opts.controllerNamespace
	var pods corev1.PodList
	if err := k.client.List(ctx, &pods, client.InNamespace(ns), controllerLabel); err != nil {
		result.Status, result.Detail = CheckWarn, "cannot list the controller's pods in "+ns+": "+err.Error()
		return result
	}
	var ready int
	var problems []string
	var fix string
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if isReady(pod) {
			ready++
			continue
		}
		problem, podFix := whyNotReady(pod)
		problems = append(problems, pod.Name+": "+problem)
		if fix == "" {
			fix = podFix
		}
	}
	total := ready + len(problems)
	switch {
	case total == 0:
		result.Status, result.Detail = CheckFail, "no controller pods in "+ns
		result.Fix = "kubectl -n " + ns + " get deploy,rs,events: install ontime (docs/install.md), or --controller-namespace if it runs elsewhere"
	case ready == 0:
		result.Status, result.Detail, result.Fix = CheckFail, fmt.Sprintf("0/%d pods ready; %s", total, strings.Join(problems, "; ")), fix
	case len(problems) > 0:
		result.Status, result.Detail, result.Fix = CheckWarn, fmt.Sprintf("%d/%d pods ready; %s", ready, total, strings.Join(problems, "; ")), fix
	default:
		result.Status, result.Detail = CheckOK, fmt.Sprintf("%d/%d pods ready", ready, total)
	}
	return result
}

func isReady(pod corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// whyNotReady says why a pod is not ready, in the kubelet's or the
// scheduler's words, and what to do about it.
func whyNotReady(pod corev1.Pod) (problem, fix string) {
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		waiting := s.State.Waiting
		switch {
		case waiting != nil && pullFailures[waiting.Reason]:
			return fmt.Sprintf("%s: %s", waiting.Reason, firstLine(waiting.Message)),
				"the nodes cannot pull " + s.Image + ": check image.repository, image.tag or image.digest and imagePullSecrets, and that the nodes reach the registry; then helm upgrade with the right values (or helm uninstall)"
		case waiting != nil && waiting.Reason == "CrashLoopBackOff":
			return fmt.Sprintf("%s (%d restarts)", waiting.Reason, s.RestartCount),
				"kubectl -n " + pod.Namespace + " logs " + pod.Name + " --previous"
		case waiting != nil && waiting.Reason != "":
			return waiting.Reason + ": " + firstLine(waiting.Message), "kubectl -n " + pod.Namespace + " describe pod " + pod.Name
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return "not scheduled: " + firstLine(c.Message), "kubectl -n " + pod.Namespace + " describe pod " + pod.Name + ": the chart's nodeSelector, tolerations and resources must fit a node"
		}
	}
	return "phase " + string(pod.Status.Phase) + ", not ready", "kubectl -n " + pod.Namespace + " describe pod " + pod.Name
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
