package testenv

import (
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PolicyMessage is what RefuseWarmUpByPolicy's policy answers.
const PolicyMessage = "warm-up objects are not allowed in this namespace"

// RefuseWarmUpByPolicy installs a ValidatingAdmissionPolicy, the API
// server's own policy engine (what Kyverno and Gatekeeper do with their
// webhooks), that denies pods and PodTemplates carrying label in
// namespace, and returns once the API server refuses them there. The
// policy and its binding are removed when the test ends.
func (h *Harness) RefuseWarmUpByPolicy(t *testing.T, namespace, label string) {
	t.Helper()
	name := "no-warm-up-" + namespace
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods", "podtemplates"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(object.metadata.labels) || !('" + label + "' in object.metadata.labels)",
				Message:    PolicyMessage,
			}},
		}}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}}},
		}}
	h.Create(t, policy)
	h.Create(t, binding)
	t.Cleanup(func() {
		_ = h.Live.Delete(h.Ctx, binding)
		_ = h.Live.Delete(h.Ctx, policy)
	})
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: "policy-probe-", Labels: map[string]string{label: "probe"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "busybox"}}, AutomountServiceAccountToken: ptr.To(false)}}
	Eventually(t, 10*time.Second, "the API server to refuse warm-up pods by policy", func() bool {
		err := h.Live.Create(h.Ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), PolicyMessage)
	})
}

// EnforcePodSecurity labels namespace to enforce a Pod Security level
// (restricted, baseline), as policy-bound clusters do, and returns once
// the API server refuses a privileged pod there.
func (h *Harness) EnforcePodSecurity(t *testing.T, namespace, level string) {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := h.Live.Get(h.Ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		t.Fatal(err)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels["pod-security.kubernetes.io/enforce"] = level
	if err := h.Live.Update(h.Ctx, ns); err != nil {
		t.Fatal(err)
	}
	// A pod that asks for nothing, neither non-root nor a seccomp
	// profile, is refused at the restricted level: the API server
	// enforces it.
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: "pod-security-probe-"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}, AutomountServiceAccountToken: ptr.To(false)}}
	Eventually(t, 10*time.Second, "the API server to enforce Pod Security "+level, func() bool {
		err := h.Live.Create(h.Ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "violates PodSecurity")
	})
}
