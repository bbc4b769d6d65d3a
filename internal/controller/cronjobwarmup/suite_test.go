//go:build integration

package cronjobwarmup

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/warmupobjects"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// The suite runs a real API server (no CronJob controller: tests create a
// run's Job as it would) and reconciles with a fake clock.
var (
	env     *testenv.Harness
	warmUps *Controller
)

// testPlaceholderImage is the suite controller's --placeholder-image: a
// CronJob cannot name an image, so its placeholders run this one.
const testPlaceholderImage = "mirror.example/pause:3.10"

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	h, err := testenv.StartHarness(testenv.HarnessOptions{
		Scheme: ontimescheme.New(),
		Cache:  cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: warmup.PodSelector()}}},
		Indexes: func(ctx context.Context, indexer client.FieldIndexer) error {
			return jobcontrol.IndexCronJobs(ctx, indexer)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer h.Stop()
	env = h
	// This suite's API server does not serve the CapacityBuffer API.
	buffers, err := warmupobjects.NewBuffers(h.Cached, h.Config, h.Clock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	warmUps = NewController(h.Cached, h.Reader, h.Clock, h.Recorder, v1alpha1.ControllerDefaults{PlaceholderImage: testPlaceholderImage},
		warmupobjects.NewExecutor(h.Cached, buffers))
	if err := h.Live.Create(h.Ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DefaultPlaceholderPriorityClass},
		Value: -5, PreemptionPolicy: ptr.To(corev1.PreemptNever)}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// newCronJob is an hourly CronJob whose runs place two pods, warmed up 10
// minutes ahead.
func newCronJob(namespace string) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "nightly", Annotations: map[string]string{v1alpha1.WarmUpLeadAnnotation: "10m"}},
		Spec: batchv1.CronJobSpec{
			Schedule: "0 * * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Parallelism: ptr.To[int32](2),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				}},
			}},
		},
	}
}

// reconcileAt sets the clock, waits for the cache and reconciles with the
// suite's controller.
func reconcileAt(t *testing.T, cj *batchv1.CronJob, now time.Time) reconcile.Result {
	t.Helper()
	return reconcileWith(t, warmUps, cj, now)
}

// reconcileWith is reconcileAt with another controller: a new leader.
func reconcileWith(t *testing.T, c *Controller, cj *batchv1.CronJob, now time.Time) reconcile.Result {
	t.Helper()
	env.Clock.SetTime(now)
	env.WaitForCache(t, cj,
		testenv.Cached{NewList: func() client.ObjectList { return &batchv1.JobList{} }},
		testenv.Cached{NewList: func() client.ObjectList { return &corev1.PodList{} }, Selector: warmup.PodSelector()})
	result, err := c.Reconcile(env.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cj)})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return result
}

func get(t *testing.T, cj *batchv1.CronJob) *batchv1.CronJob {
	t.Helper()
	fresh := &batchv1.CronJob{}
	if err := env.Live.Get(env.Ctx, client.ObjectKeyFromObject(cj), fresh); err != nil {
		t.Fatal(err)
	}
	return fresh
}

// placeholders lists the live placeholders of a namespace not being
// deleted.
func placeholders(t *testing.T, namespace string) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := env.Live.List(env.Ctx, &list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: warmup.PodSelector()}); err != nil {
		t.Fatal(err)
	}
	var kept []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			kept = append(kept, p)
		}
	}
	return kept
}

func update(t *testing.T, cj *batchv1.CronJob, change func(*batchv1.CronJob)) {
	t.Helper()
	fresh := get(t, cj)
	change(fresh)
	if err := env.Live.Update(env.Ctx, fresh); err != nil {
		t.Fatal(err)
	}
}
