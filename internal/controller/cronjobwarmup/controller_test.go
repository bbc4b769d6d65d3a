package cronjobwarmup

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/internal/warmup"
)

func hasEvent(events []string, substring string) bool {
	for _, e := range events {
		if strings.Contains(e, substring) {
			return true
		}
	}
	return false
}

// warmCronJob creates an annotated CronJob and reconciles it at its first
// run's warm-up start.
func warmCronJob(t *testing.T, cj *batchv1.CronJob) (*batchv1.CronJob, time.Time) {
	t.Helper()
	env.Create(t, cj)
	cj = get(t, cj)
	run := cj.CreationTimestamp.Time.Truncate(time.Hour).Add(time.Hour)
	reconcileAt(t, cj, run.Add(-10*time.Minute))
	if n := len(placeholders(t, cj.Namespace)); n != 2 {
		t.Fatalf("%d placeholders at the warm-up's start, want 2", n)
	}
	return cj, run
}

// runJob creates the run's Job as the CronJob controller does: named after
// the scheduled minute, controlled by the CronJob.
func runJob(t *testing.T, cj *batchv1.CronJob, run time.Time) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: cj.Namespace, Name: cj.Name + "-" + v1alpha1.RunLabelValue(run),
			Annotations:     map[string]string{v1alpha1.ScheduledTimestampAnnotation: run.UTC().Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))}},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	env.Create(t, job)
	return job
}

// TestCronJobWarmUp: an annotated CronJob gets placeholders lead before its
// run, owned (not controlled) by it; they stay until its Job's pods are
// ready, and the CronJob is never written.
func TestCronJobWarmUp(t *testing.T) {
	ns := env.NewNamespace(t)
	cj, run := warmCronJob(t, newCronJob(ns))
	pods := placeholders(t, ns)
	owner := pods[0].OwnerReferences
	if len(owner) != 1 || owner[0].UID != cj.UID || owner[0].Controller != nil {
		t.Errorf("placeholder owners %+v, want the CronJob, not as controller", owner)
	}
	if pods[0].Labels[v1alpha1.OwnerKindLabel] != "CronJob" || pods[0].Labels[v1alpha1.RunLabel] != v1alpha1.RunLabelValue(run) {
		t.Errorf("placeholder labels %v", pods[0].Labels)
	}
	if image := pods[0].Spec.Containers[0].Image; image != testPlaceholderImage {
		t.Errorf("placeholder image %q, want the controller's --placeholder-image %q", image, testPlaceholderImage)
	}
	if events := env.DrainEvents(); !hasEvent(events, "WarmUpStarted") {
		t.Errorf("events %v, want WarmUpStarted", events)
	}
	// The CronJob controller is a little late: the placeholders wait.
	reconcileAt(t, cj, run.Add(2*time.Second))
	if n := len(placeholders(t, ns)); n != 2 {
		t.Errorf("%d placeholders before the run's Job exists, want 2", n)
	}
	job := runJob(t, cj, run)
	job.Status.Ready, job.Status.Active = ptr.To[int32](2), 2
	if err := env.Live.Status().Update(env.Ctx, job); err != nil {
		t.Fatal(err)
	}
	result := reconcileAt(t, cj, run.Add(5*time.Second))
	if n := len(placeholders(t, ns)); n != 0 {
		t.Errorf("%d placeholders once the run's pods are ready", n)
	}
	if want := 50*time.Minute - 5*time.Second; result.RequeueAfter != want {
		t.Errorf("requeue %v, want at the next warm-up (%v)", result.RequeueAfter, want)
	}
	if got := get(t, cj); got.ResourceVersion != cj.ResourceVersion {
		t.Error("the CronJob was written")
	}
}

// TestCronJobPlaceholdersGo: removing the annotation, suspending, and
// Forbid with an active Job at the run's time remove the placeholders.
func TestCronJobPlaceholdersGo(t *testing.T) {
	cases := map[string]func(t *testing.T, cj *batchv1.CronJob, run time.Time) time.Time{
		"annotation removed": func(t *testing.T, cj *batchv1.CronJob, run time.Time) time.Time {
			update(t, cj, func(cj *batchv1.CronJob) { delete(cj.Annotations, v1alpha1.WarmUpLeadAnnotation) })
			return run.Add(-5 * time.Minute)
		},
		"suspended": func(t *testing.T, cj *batchv1.CronJob, run time.Time) time.Time {
			update(t, cj, func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) })
			return run.Add(-5 * time.Minute)
		},
		"Forbid with an active Job": func(t *testing.T, cj *batchv1.CronJob, run time.Time) time.Time {
			update(t, cj, func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent })
			fresh := get(t, cj)
			fresh.Status.Active = []corev1.ObjectReference{{Kind: "Job", Namespace: cj.Namespace, Name: "earlier", UID: "earlier"}}
			if err := env.Live.Status().Update(env.Ctx, fresh); err != nil {
				t.Fatal(err)
			}
			return run.Add(time.Second)
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.NewNamespace(t)
			cj, run := warmCronJob(t, newCronJob(ns))
			reconcileAt(t, get(t, cj), change(t, cj, run))
			if n := len(placeholders(t, ns)); n != 0 {
				t.Errorf("%d placeholders left", n)
			}
		})
	}
}

// TestCronJobBadAnnotation: a lead that is not a duration gets one warning
// event and no placeholders.
func TestCronJobBadAnnotation(t *testing.T) {
	ns := env.NewNamespace(t)
	cj := newCronJob(ns)
	cj.Annotations[v1alpha1.WarmUpLeadAnnotation] = "soon"
	env.Create(t, cj)
	cj = get(t, cj)
	env.DrainEvents()
	run := cj.CreationTimestamp.Time.Truncate(time.Hour).Add(time.Hour)
	reconcileAt(t, cj, run.Add(-5*time.Minute))
	reconcileAt(t, cj, run.Add(-4*time.Minute))
	events := env.DrainEvents()
	if len(events) != 1 || !strings.Contains(events[0], `WarmUpFailed no warm-up: annotation warmup.ontime.dev/lead "soon": not a duration`) {
		t.Errorf("events %v, want one warning naming the annotation and value", events)
	}
	if n := len(placeholders(t, ns)); n != 0 {
		t.Errorf("%d placeholders", n)
	}
}

// TestCronJobRefusedPlaceholders: a namespace whose ResourceQuota allows
// no pod, or whose admission policy refuses warm-up pods, refuses the
// placeholders of an annotated CronJob: one warning naming the refusal, no failed reconcile (kube-controller-manager starts the
// run; nothing here may wait for the backoff), another try within
// warmup.RefusedRetry.
func TestCronJobRefusedPlaceholders(t *testing.T) {
	refusals := map[string]struct {
		refuse func(t *testing.T, namespace string)
		says   string
	}{
		"a ResourceQuota":     {refuse: env.RefusePods, says: "exceeded quota: no-pods"},
		"an admission policy": {refuse: func(t *testing.T, ns string) { env.RefuseWarmUpByPolicy(t, ns, v1alpha1.WarmUpLabel) }, says: testenv.PolicyMessage},
	}
	for name, refusal := range refusals {
		t.Run(name, func(t *testing.T) {
			ns := env.NewNamespace(t)
			refusal.refuse(t, ns)
			cj := newCronJob(ns)
			env.Create(t, cj)
			cj = get(t, cj)
			env.DrainEvents()
			run := cj.CreationTimestamp.Time.Truncate(time.Hour).Add(time.Hour)
			result := reconcileAt(t, cj, run.Add(-10*time.Minute))
			if n := len(placeholders(t, ns)); n != 0 {
				t.Fatalf("%d placeholders in a namespace that refuses them", n)
			}
			if result.RequeueAfter <= 0 || result.RequeueAfter > warmup.RefusedRetry {
				t.Errorf("next look in %v, want within %v", result.RequeueAfter, warmup.RefusedRetry)
			}
			events := env.DrainEvents()
			if len(events) != 1 || !strings.Contains(events[0], "WarmUpFailed warm-up pods refused") || !strings.Contains(events[0], refusal.says) {
				t.Errorf("events %q, want one warning naming %q", events, refusal.says)
			}
		})
	}
}

// TestCronJobCapacityBufferUnavailable: a CronJob asking for CapacityBuffer
// warm-up in a cluster that does not serve the API gets one warning per
// run naming the API, no placeholder in its place, and no failed
// reconcile: kube-controller-manager starts the run at its time.
func TestCronJobCapacityBufferUnavailable(t *testing.T) {
	ns := env.NewNamespace(t)
	cj := newCronJob(ns)
	cj.Annotations[v1alpha1.WarmUpStrategyAnnotation] = string(v1alpha1.WarmUpCapacityBuffer)
	env.Create(t, cj)
	cj = get(t, cj)
	env.DrainEvents()
	run := cj.CreationTimestamp.Time.Truncate(time.Hour).Add(time.Hour)
	result := reconcileAt(t, cj, run.Add(-10*time.Minute))
	reconcileAt(t, cj, run.Add(-9*time.Minute))
	events := env.DrainEvents()
	if len(events) != 1 || !strings.Contains(events[0], "CapacityBufferUnavailable") || !strings.Contains(events[0], "does not serve CapacityBuffer") {
		t.Errorf("events %q, want one warning that the API is not served", events)
	}
	if n := len(placeholders(t, ns)); n != 0 {
		t.Errorf("%d placeholders: CapacityBuffer warm-up creates none", n)
	}
	if result.RequeueAfter <= 0 || result.RequeueAfter > warmup.RefusedRetry {
		t.Errorf("next look in %v, want within %v (the API may be installed)", result.RequeueAfter, warmup.RefusedRetry)
	}
}
