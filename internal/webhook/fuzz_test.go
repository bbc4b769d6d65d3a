package webhook

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
)

// FuzzJobGroupMutator admits a CronJob's new Job under any annotations
// the CronJob's author wrote (group, cluster group, priority) and any
// startingDeadlineSeconds: nothing panics; a refusal names the annotation
// that caused it; an admission of a member is a patch that applies to the
// Job and makes it a suspended waiting run of the group the annotation
// names, missed no earlier than its scheduled time.
func FuzzJobGroupMutator(f *testing.F) {
	f.Add("reports", "", "", int64(300), true)
	f.Add("", "shared", "-1000", int64(0), true)
	f.Add("reports", "shared", "5", int64(60), false)
	f.Add("Not_A_Label", "", "high", int64(-1), true)
	f.Add("reports", "", "1001", int64(1<<40), true)
	f.Add("reports", "", "", int64(1<<40), true)
	scheme := ontimescheme.New()
	decoder := admission.NewDecoder(scheme)
	scheduled := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, group, clusterGroup, priority string, deadline int64, setDeadline bool) {
		annotations := map[string]string{}
		for key, value := range map[string]string{v1alpha1.GroupLabel: group, v1alpha1.ClusterGroupLabel: clusterGroup, v1alpha1.GroupPriorityAnnotation: priority} {
			if value != "" {
				annotations[key] = value
			}
		}
		cronJob := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "nightly", UID: "cronjob-uid", Annotations: annotations}}
		if setDeadline && deadline >= 0 {
			cronJob.Spec.StartingDeadlineSeconds = ptr.To(deadline)
		}
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "nightly-29409240",
			Annotations:     map[string]string{v1alpha1.ScheduledTimestampAnnotation: scheduled.Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "nightly", UID: "cronjob-uid", Controller: ptr.To(true)}}}}
		raw, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		m := &JobGroupMutator{reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(cronJob).Build(), decoder: decoder}
		resp := m.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Namespace: "team", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}})
		if !resp.Allowed {
			message := resp.Result.Message
			if !strings.Contains(message, "metadata.annotations") || !strings.Contains(message, "ontime.dev/") {
				t.Fatalf("refused without naming the annotation: %q (annotations %v)", message, annotations)
			}
			return
		}
		if len(resp.Patches) > 0 {
			checkAdmittedMember(t, raw, resp, scheduled, group, clusterGroup)
		}
	})
}

// checkAdmittedMember: an admitted member's patch applies to the Job and
// makes it a suspended waiting run of a group its CronJob names, missed
// no earlier than its scheduled time.
func checkAdmittedMember(t *testing.T, raw []byte, resp admission.Response, scheduled time.Time, group, clusterGroup string) {
	t.Helper()
	patch, err := json.Marshal(resp.Patches)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("the patch does not decode: %v", err)
	}
	patched, err := decoded.Apply(raw)
	if err != nil {
		t.Fatalf("the patch does not apply to the Job: %v", err)
	}
	out := &batchv1.Job{}
	if err := json.Unmarshal(patched, out); err != nil {
		t.Fatal(err)
	}
	kind, name, ok := v1alpha1.GroupOf(out)
	if !ok || name == "" || (name != group && name != clusterGroup) || out.Spec.Suspend == nil || !*out.Spec.Suspend {
		t.Fatalf("admitted as %s %q (ok %v), suspended %v; group %q, cluster group %q", kind, name, ok, out.Spec.Suspend, group, clusterGroup)
	}
	if value, ok := out.Annotations[v1alpha1.StartByAnnotation]; ok {
		startBy, err := time.Parse(time.RFC3339, value)
		if err != nil || startBy.Before(scheduled) {
			t.Fatalf("start-by %q (%v) before the scheduled time %s", value, err, scheduled.Format(time.RFC3339))
		}
	}
}
