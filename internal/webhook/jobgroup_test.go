package webhook

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/scheme"
)

// TestJobGroupMutator: a Job of a CronJob annotated with a group is made a
// waiting run of it (suspended, labeled, priority, start-by from its
// scheduled time and the CronJob's startingDeadlineSeconds); other Jobs
// pass unchanged; bad annotations refuse the Job, naming the annotation
// and its value.
func TestJobGroupMutator(t *testing.T) {
	scheduled := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	cronJob := func(annotations map[string]string) *batchv1.CronJob {
		return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "export", Namespace: "team", UID: "cj-uid", Annotations: annotations},
			Spec: batchv1.CronJobSpec{Schedule: "0 * * * *", StartingDeadlineSeconds: ptr.To[int64](600)}}
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "export-29393400", Namespace: "team",
		Annotations:     map[string]string{v1alpha1.ScheduledTimestampAnnotation: scheduled.Format(time.RFC3339)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "export", UID: "cj-uid", Controller: ptr.To(true)}}}}
	for name, tc := range map[string]struct {
		cronJob *batchv1.CronJob
		job     *batchv1.Job
		want    []string // the patch's paths and values, as "op path value"
		denied  string
	}{
		"a member's Job": {cronJob: cronJob(map[string]string{v1alpha1.GroupLabel: "db", v1alpha1.GroupPriorityAnnotation: "5"}), job: job,
			want: []string{`add /spec/suspend true`, `add /metadata/labels {"ontime.dev/concurrency-group":"db"}`,
				`add /metadata/annotations/ontime.dev~1concurrency-priority "5"`, `add /metadata/annotations/ontime.dev~1start-by "2026-11-27T10:10:00Z"`}},
		"a cluster group's": {cronJob: cronJob(map[string]string{v1alpha1.ClusterGroupLabel: "licenses"}), job: job,
			want: []string{`add /spec/suspend true`, `add /metadata/labels {"ontime.dev/cluster-concurrency-group":"licenses"}`,
				`add /metadata/annotations/ontime.dev~1start-by "2026-11-27T10:10:00Z"`}},
		"a CronJob in no group": {cronJob: cronJob(nil), job: job},
		"not a CronJob's Job":   {cronJob: cronJob(map[string]string{v1alpha1.GroupLabel: "db"}), job: &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "by-hand", Namespace: "team"}}},
		"a bad group name": {cronJob: cronJob(map[string]string{v1alpha1.GroupLabel: "DB"}), job: job,
			denied: `CronJob export: metadata.annotations[ontime.dev/concurrency-group]: Invalid value: "DB": a lowercase RFC 1123 label must consist of`},
		"a bad priority": {cronJob: cronJob(map[string]string{v1alpha1.GroupLabel: "db", v1alpha1.GroupPriorityAnnotation: "high"}), job: job,
			denied: `CronJob export: metadata.annotations[ontime.dev/concurrency-priority]: Invalid value: "high": must be a whole number from -1000 to 1000`},
		"both groups": {cronJob: cronJob(map[string]string{v1alpha1.GroupLabel: "db", v1alpha1.ClusterGroupLabel: "licenses"}), job: job,
			denied: "both ontime.dev/concurrency-group and ontime.dev/cluster-concurrency-group are set"},
	} {
		t.Run(name, func(t *testing.T) {
			s := scheme.New()
			m := &JobGroupMutator{reader: fake.NewClientBuilder().WithScheme(s).WithObjects(tc.cronJob).Build(), decoder: admission.NewDecoder(s)}
			raw, err := json.Marshal(tc.job)
			if err != nil {
				t.Fatal(err)
			}
			resp := m.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Namespace: "team", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}})
			if tc.denied != "" {
				if resp.Allowed || !strings.Contains(resp.Result.Message, tc.denied) {
					t.Fatalf("allowed %v, %v; want denied with %q", resp.Allowed, resp.Result, tc.denied)
				}
				return
			}
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			var got []string
			for _, p := range resp.Patches {
				value, _ := json.Marshal(p.Value)
				got = append(got, p.Operation+" "+p.Path+" "+string(value))
			}
			for _, want := range tc.want {
				if !strings.Contains(strings.Join(got, "\n"), want) {
					t.Errorf("patches %v: want %s", got, want)
				}
			}
			if len(tc.want) == 0 && len(got) > 0 {
				t.Errorf("patches %v: want none", got)
			}
		})
	}
}
