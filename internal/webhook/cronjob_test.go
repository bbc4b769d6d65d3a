package webhook

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// annotatedCronJob is a CronJob the API server admits, with annotations,
// in the namespace default; named export unless a name is given.
func annotatedCronJob(annotations map[string]string, name ...string) *batchv1.CronJob {
	return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: cmp.Or(append(name, "export")...), Namespace: "default", Annotations: annotations},
		Spec: batchv1.CronJobSpec{Schedule: "0 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "report", Image: "registry.k8s.io/pause:3.10"}}}}}}}}
}

// TestCronJobValidator: a new CronJob is refused for any broken ontime
// annotation, naming its key and value; a changed one only for a broken
// annotation it did not have, so that a CronJob stored past the webhook
// can still be fixed, suspended or written by ontime.
func TestCronJobValidator(t *testing.T) {
	badPriority := map[string]string{v1alpha1.GroupLabel: "db", v1alpha1.GroupPriorityAnnotation: "high"}
	badLead := map[string]string{v1alpha1.WarmUpLeadAnnotation: "soon"}
	both := map[string]string{v1alpha1.GroupLabel: "db", v1alpha1.GroupPriorityAnnotation: "high", v1alpha1.WarmUpLeadAnnotation: "soon"}
	good := map[string]string{v1alpha1.GroupLabel: "db", v1alpha1.GroupPriorityAnnotation: "5", v1alpha1.WarmUpLeadAnnotation: "10m"}
	for name, tc := range map[string]struct {
		old, new map[string]string // old nil: a create
		refused  []string
	}{
		"a good create":               {new: good},
		"a create with no annotation": {new: nil},
		"a bad priority":              {new: badPriority, refused: []string{`CronJob.batch "export" is invalid: metadata.annotations[ontime.dev/concurrency-priority]: Invalid value: "high"`}},
		"two bad annotations":         {new: both, refused: []string{"concurrency-priority", `metadata.annotations[warmup.ontime.dev/lead]: Invalid value: "soon"`}},
		"an update that breaks one":   {old: good, new: badLead, refused: []string{"warmup.ontime.dev/lead"}},
		"an update that keeps a broken one": {old: badPriority, new: func() map[string]string {
			a := map[string]string{v1alpha1.WarmUpStateAnnotation: `{"problem":"x"}`}
			for k, v := range badPriority {
				a[k] = v
			}
			return a
		}()},
		"an update that fixes one": {old: both, new: badPriority},
		"an update that breaks one more": {old: badPriority, new: both,
			refused: []string{"warmup.ontime.dev/lead"}},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			if tc.old == nil {
				_, err = CronJobValidator{}.ValidateCreate(context.Background(), annotatedCronJob(tc.new))
			} else {
				_, err = CronJobValidator{}.ValidateUpdate(context.Background(), annotatedCronJob(tc.old), annotatedCronJob(tc.new))
			}
			switch {
			case len(tc.refused) == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case len(tc.refused) > 0 && err == nil:
				t.Fatalf("admitted, want refused with %q", tc.refused)
			}
			for _, want := range tc.refused {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refused with %q, want it to say %q", err.Error(), want)
				}
			}
			if strings.Contains(name, "breaks one more") && strings.Contains(err.Error(), "concurrency-priority") {
				t.Errorf("refused for the annotation the old CronJob had: %v", err)
			}
		})
	}
}

// cronJobMatchConditions is the CronJob webhook's patch of matchConditions
// (config/webhook/patches/cronjob-match-conditions.yaml, which the chart
// and config/dev copy).
func cronJobMatchConditions(t *testing.T) admissionregistrationv1.ValidatingWebhook {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "webhook", "patches", "cronjob-match-conditions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var patch admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(data, &patch); err != nil {
		t.Fatal(err)
	}
	if len(patch.Webhooks) != 1 || patch.Webhooks[0].Name != "vcronjob.ontime.dev" || len(patch.Webhooks[0].MatchConditions) != 1 {
		t.Fatalf("want one condition of the webhook vcronjob.ontime.dev: %+v", patch.Webhooks)
	}
	return patch.Webhooks[0]
}

// TestCronJobMatchConditionsSelectEveryAnnotation: the webhook's
// matchConditions name exactly the annotations the rules read.
func TestCronJobMatchConditionsSelectEveryAnnotation(t *testing.T) {
	expression := cronJobMatchConditions(t).MatchConditions[0].Expression
	quoted := strings.Count(expression, "'")
	for _, key := range v1alpha1.CronJobAnnotations {
		if !strings.Contains(expression, "'"+key+"'") {
			t.Errorf("the match condition does not select %s: %s", key, expression)
		}
	}
	if quoted != 2*len(v1alpha1.CronJobAnnotations) {
		t.Errorf("the match condition names %d keys, the rules read %d: %s", quoted/2, len(v1alpha1.CronJobAnnotations), expression)
	}
}
