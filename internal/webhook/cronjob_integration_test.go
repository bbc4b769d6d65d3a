//go:build integration

package webhook

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// cronJobCalls is the suite's CronJob validator: CronJobValidator, with
// the name of every CronJob it was called for.
var cronJobCalls = &countingCronJobValidator{calls: map[string]int{}}

type countingCronJobValidator struct {
	CronJobValidator
	mu    sync.Mutex
	calls map[string]int
}

var _ admission.Validator[*batchv1.CronJob] = &countingCronJobValidator{}

func (v *countingCronJobValidator) ValidateCreate(ctx context.Context, cj *batchv1.CronJob) (admission.Warnings, error) {
	v.count(cj.Name)
	return v.CronJobValidator.ValidateCreate(ctx, cj)
}

func (v *countingCronJobValidator) ValidateUpdate(ctx context.Context, old, cj *batchv1.CronJob) (admission.Warnings, error) {
	v.count(cj.Name)
	return v.CronJobValidator.ValidateUpdate(ctx, old, cj)
}

func (v *countingCronJobValidator) count(name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls[name]++
}

func (v *countingCronJobValidator) callsFor(name string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.calls[name]
}

// TestCronJobWebhook: with the matchConditions config/webhook and the
// chart add, the API server calls the CronJob webhook only for CronJobs
// with ontime's annotations, and the webhook refuses a bad one naming the
// annotation and its value.
func TestCronJobWebhook(t *testing.T) {
	ctx := context.Background()
	configuration := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := apiClient.Get(ctx, client.ObjectKey{Name: "validating-webhook-configuration"}, configuration); err != nil {
		t.Fatal(err)
	}
	found := false
	for i := range configuration.Webhooks {
		if configuration.Webhooks[i].Name == "vcronjob.ontime.dev" {
			configuration.Webhooks[i].MatchConditions = cronJobMatchConditions(t).MatchConditions
			found = true
		}
	}
	if !found {
		t.Fatal("no webhook vcronjob.ontime.dev in the generated configuration")
	}
	if err := apiClient.Update(ctx, configuration); err != nil {
		t.Fatal(err)
	}

	// The API server reloads webhook configurations from its watch: a
	// CronJob without ontime's annotations stops calling the webhook.
	plain := func(name string) *batchv1.CronJob {
		return annotatedCronJob(nil, name)
	}
	attempt := 0
	testenv.Eventually(t, 20*time.Second, "a plain CronJob to be admitted without calling the webhook", func() bool {
		attempt++
		name := "plain-" + strings.Repeat("x", attempt%20+1)
		if err := apiClient.Create(ctx, plain(name), client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		return cronJobCalls.callsFor(name) == 0
	})

	bad := annotatedCronJob(map[string]string{v1alpha1.GroupLabel: "reports", v1alpha1.GroupPriorityAnnotation: "high"}, "bad-priority")
	err := apiClient.Create(ctx, bad, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), `metadata.annotations[ontime.dev/concurrency-priority]: Invalid value: "high"`) {
		t.Errorf("a CronJob with priority high: %v, want the webhook's refusal naming the annotation", err)
	}
	good := annotatedCronJob(map[string]string{v1alpha1.WarmUpLeadAnnotation: "10m"}, "warmed")
	if err := apiClient.Create(ctx, good, client.DryRunAll); err != nil {
		t.Errorf("a CronJob with warm-up: %v", err)
	}
	if cronJobCalls.callsFor("bad-priority") != 1 || cronJobCalls.callsFor("warmed") != 1 {
		t.Errorf("the webhook was called %d and %d times for the annotated CronJobs, want once each",
			cronJobCalls.callsFor("bad-priority"), cronJobCalls.callsFor("warmed"))
	}
	if err := apiClient.Create(ctx, plain("plain-after"), client.DryRunAll); err != nil || cronJobCalls.callsFor("plain-after") != 0 {
		t.Errorf("a plain CronJob: %v, %d calls to the webhook; want admitted without one", err, cronJobCalls.callsFor("plain-after"))
	}
}
