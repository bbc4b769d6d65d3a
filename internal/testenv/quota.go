package testenv

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RefusePods gives namespace a ResourceQuota that allows no pod, as a
// policy-bound cluster's might, and returns once the API server refuses
// pods there. The quota's usage is written by hand: no quota controller
// runs beside the test API server, and admission refuses every pod of a
// quota without usage as "status unknown" rather than as exceeded.
func (h *Harness) RefusePods(t *testing.T, namespace string) {
	t.Helper()
	none := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "no-pods"},
		Spec: corev1.ResourceQuotaSpec{Hard: none}}
	h.Create(t, quota)
	quota.Status = corev1.ResourceQuotaStatus{Hard: none, Used: none.DeepCopy()}
	if err := h.Live.Status().Update(h.Ctx, quota); err != nil {
		t.Fatal(err)
	}
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: "quota-probe-"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "busybox"}},
			AutomountServiceAccountToken: ptr.To(false)}}
	Eventually(t, 10*time.Second, "the API server to refuse pods over the quota", func() bool {
		err := h.Live.Create(h.Ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "exceeded quota")
	})
}
