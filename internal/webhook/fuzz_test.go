package webhook

import (
	"context"
	"encoding/json"
	"net/http"
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
	"sigs.k8s.io/yaml"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
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

// FuzzAdmission sends any bytes as the object of an admission request for
// each kind ontime validates (ScheduledJob, Backfill, ConcurrencyGroup,
// ClusterConcurrencyGroup), as a create and as an update of a valid
// sample, through the handlers the webhook server serves, with their
// panic recovery off so that a panic fails the run: the answer is an
// admission or a refusal the API server can show (400 for what does not
// decode, 422 naming fields of the object, never 500), and a refusal says
// why.
func FuzzAdmission(f *testing.F) {
	for _, sample := range testenv.SampleDocuments(f) {
		doc, err := yaml.YAMLToJSON([]byte(sample.Doc))
		if err != nil {
			f.Fatalf("%s: %v", sample.File, err)
		}
		f.Add(doc, false)
		f.Add(doc, true)
	}
	f.Add([]byte(`{"apiVersion":"ontime.dev/v1alpha1","kind":"ScheduledJob","metadata":{"name":"x"},"spec":{"schedule":"H H(25-5) * * *","startingDeadlineSeconds":1e40}}`), false)
	f.Add([]byte(`{"apiVersion":"ontime.dev/v1alpha1","kind":"Backfill","metadata":{"name":"x"},"spec":{"scheduledJobName":"","from":"2026-13-01T00:00:00Z"}}`), false)
	f.Add([]byte(`{"apiVersion":"ontime.dev/v1alpha1","kind":"ConcurrencyGroup","spec":{"maxActive":-1,"namespaceSelector":{"matchExpressions":[{"operator":"Nope"}]}}}`), true)
	handlers := admissionHandlers(f)
	f.Fuzz(func(t *testing.T, doc []byte, update bool) {
		for kind, handler := range handlers {
			request := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Namespace: "team", Name: "x", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: doc}}}
			if update {
				request.Operation = admissionv1.Update
				request.OldObject = runtime.RawExtension{Raw: handler.valid}
			}
			checkAnswer(t, kind, handler.webhook.Handle(context.Background(), request))
		}
	})
}

// admissionHandler is one kind's validating webhook and a valid object of
// that kind, the old object of an update.
type admissionHandler struct {
	webhook *admission.Webhook
	valid   []byte
}

// admissionHandlers builds the validating webhooks as Register does, with
// the Backfill's reading a ScheduledJob from a fake client and the
// ScheduledJob's no client (its dry runs need an API server: envtest).
func admissionHandlers(f *testing.F) map[string]admissionHandler {
	scheme := ontimescheme.New()
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "nightly"}}).Build()
	now := func() time.Time { return time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC) }
	valid := func(doc string) []byte {
		raw, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			f.Fatal(err)
		}
		return raw
	}
	return map[string]admissionHandler{
		"ScheduledJob": {
			webhook: admission.WithValidator[*v1alpha1.ScheduledJob](scheme, &Validator{starts: newStartsIndex()}).WithRecoverPanic(false),
			valid: valid(`{apiVersion: ontime.dev/v1alpha1, kind: ScheduledJob, metadata: {name: x, namespace: team},
  spec: {schedule: "*/5 * * * *", jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}}`),
		},
		"Backfill": {
			webhook: admission.WithValidator[*v1alpha1.Backfill](scheme, &BackfillValidator{client: reader, now: now}).WithRecoverPanic(false),
			valid: valid(`{apiVersion: ontime.dev/v1alpha1, kind: Backfill, metadata: {name: x, namespace: team},
  spec: {scheduledJobName: nightly, from: "2026-11-28T00:00:00Z", to: "2026-11-28T06:00:00Z"}}`),
		},
		"ConcurrencyGroup": {
			webhook: admission.WithValidator[*v1alpha1.ConcurrencyGroup](scheme, GroupValidator[*v1alpha1.ConcurrencyGroup]{}).WithRecoverPanic(false),
			valid:   valid(`{apiVersion: ontime.dev/v1alpha1, kind: ConcurrencyGroup, metadata: {name: x, namespace: team}, spec: {maxActive: 2}}`),
		},
		"ClusterConcurrencyGroup": {
			webhook: admission.WithValidator[*v1alpha1.ClusterConcurrencyGroup](scheme, GroupValidator[*v1alpha1.ClusterConcurrencyGroup]{}).WithRecoverPanic(false),
			valid:   valid(`{apiVersion: ontime.dev/v1alpha1, kind: ClusterConcurrencyGroup, metadata: {name: x}, spec: {maxActive: 2}}`),
		},
	}
}

// checkAnswer: an admission, or a refusal with a message: 400 for an
// object that does not decode, 422 whose every cause names a field of the
// object, 403 for a refusal that is not about a field; never a server
// error.
func checkAnswer(t *testing.T, kind string, resp admission.Response) {
	t.Helper()
	if resp.Allowed {
		return
	}
	if resp.Result == nil || resp.Result.Message == "" {
		t.Fatalf("%s: refused without a message: %+v", kind, resp.Result)
	}
	switch code := resp.Result.Code; code {
	case http.StatusBadRequest, http.StatusForbidden:
	case http.StatusUnprocessableEntity:
		if resp.Result.Details == nil || len(resp.Result.Details.Causes) == 0 {
			t.Fatalf("%s: invalid without naming a field: %q", kind, resp.Result.Message)
		}
		for _, cause := range resp.Result.Details.Causes {
			if !strings.HasPrefix(cause.Field, "spec") && !strings.HasPrefix(cause.Field, "metadata") {
				t.Fatalf("%s: cause %q names the field %q, not one of the object's", kind, cause.Message, cause.Field)
			}
		}
	default:
		t.Fatalf("%s: refused with %d: %q", kind, code, resp.Result.Message)
	}
}
