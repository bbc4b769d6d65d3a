//go:build integration

package controller

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/scheduledjob"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

func TestOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		opts  Options
		scope Scope
		ok    bool
	}{
		{Options{CronJobWarmUp: true}, Scope{}, true},
		{Options{CronJobWarmUp: false}, Scope{OwnedJobsOnly: true}, true},
		{Options{CronJobWarmUp: true}, Scope{OwnedJobsOnly: true}, false},
	} {
		if err := c.opts.Validate(c.scope); (err == nil) != c.ok {
			t.Errorf("%+v with %+v: error %v, want ok=%v", c.opts, c.scope, err, c.ok)
		}
	}
}

// TestScopedCache runs the ScheduledJob controller against a real API server
// with the narrowest scope: one namespace, a label selector, and only owned
// Jobs. It still runs its ScheduledJobs and sees their Jobs, while the cache
// holds nothing else, and nothing of the objects' managedFields.
func TestScopedCache(t *testing.T) {
	selector, _ := labels.Parse("shard=a")
	scope := Scope{SpreadNamespace: "ontime-system", Namespaces: []string{"shard-a"}, ScheduledJobSelector: selector, OwnedJobsOnly: true}
	h, err := testenv.StartHarness(testenv.HarnessOptions{
		Options: testenv.Options{CRDDirs: []string{"config/crd/bases"}},
		Scheme:  ontimescheme.New(),
		Cache:   CacheOptions(scope),
		Indexes: scheduledjob.Index,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	for _, ns := range []string{"shard-a", "shard-b", "ontime-system"} {
		h.Create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	mine := scheduledJob("shard-a", "mine", "a")
	others := []*v1alpha1.ScheduledJob{scheduledJob("shard-a", "other-shard", "b"), scheduledJob("shard-b", "other-namespace", "a")}
	for _, sj := range append(others, mine) {
		h.Create(t, sj)
	}
	// A Job ontime did not create, in the watched namespace.
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "shard-a", Name: "foreign"}, Spec: mine.Spec.JobTemplate.Spec}
	h.Create(t, foreign)

	jobs := testenv.Cached{NewList: func() client.ObjectList { return &batchv1.JobList{} }, Selector: OwnedJobs()}
	h.WaitForCache(t, mine, jobs)
	checkOnlyScopeCached(t, h, mine, others, foreign)

	// Two runs a minute apart: the first run's Job must be seen through the
	// owned-only cache, as the active run, not created twice. Each run is
	// two reconciles: the one at its time creates the Job, the one the
	// Job's watch event triggers writes status.
	c := scheduledjob.NewController(h.Cached, h.Reader, h.Clock, h.Recorder, scheduledjob.Options{SpreadNamespace: scope.SpreadNamespace})
	first := time.Now().Truncate(time.Minute).Add(time.Minute)
	for _, now := range []time.Time{first.Add(time.Second), first.Add(time.Minute + time.Second)} {
		h.Clock.SetTime(now)
		for range 2 {
			h.WaitForCache(t, mine, jobs)
			if _, err := c.Reconcile(h.Ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mine)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.WaitForCache(t, mine, jobs)
	var cached batchv1.JobList
	if err := h.Cached.List(h.Ctx, &cached, client.InNamespace("shard-a")); err != nil {
		t.Fatal(err)
	}
	if len(cached.Items) != 2 {
		t.Fatalf("cached Jobs %d, want the 2 runs", len(cached.Items))
	}
	fresh := &v1alpha1.ScheduledJob{}
	if err := h.Live.Get(h.Ctx, client.ObjectKeyFromObject(mine), fresh); err != nil {
		t.Fatal(err)
	}
	if len(fresh.Status.Active) != 2 {
		t.Errorf("status.active %v, want both runs", fresh.Status.Active)
	}
	for _, e := range h.DrainEvents() {
		t.Log(e)
	}
}

// checkOnlyScopeCached: the cache holds mine, not the ScheduledJobs outside
// the scope nor the foreign Job, and keeps no managedFields.
func checkOnlyScopeCached(t *testing.T, h *testenv.Harness, mine *v1alpha1.ScheduledJob, others []*v1alpha1.ScheduledJob, foreign *batchv1.Job) {
	t.Helper()
	for _, sj := range others {
		if err := h.Cached.Get(h.Ctx, client.ObjectKeyFromObject(sj), &v1alpha1.ScheduledJob{}); err == nil {
			t.Errorf("the cache holds %s/%s, outside the scope", sj.Namespace, sj.Name)
		}
	}
	// The cache keeps no managedFields (the API server's copy has them).
	cachedMine := &v1alpha1.ScheduledJob{}
	if err := h.Cached.Get(h.Ctx, client.ObjectKeyFromObject(mine), cachedMine); err != nil || len(cachedMine.ManagedFields) > 0 {
		t.Errorf("cached ScheduledJob: error %v, %d managedFields entries; want none", err, len(cachedMine.ManagedFields))
	}
	if err := h.Cached.Get(h.Ctx, client.ObjectKeyFromObject(foreign), &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("the cache holds the foreign Job (error %v); want only Jobs ontime created", err)
	}
}

func scheduledJob(namespace, name, shard string) *v1alpha1.ScheduledJob {
	return &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"shard": shard}},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}},
		}}},
	}
}

// TestStartsWithoutTheBackfillCRD: on a cluster whose CRDs were not
// upgraded (only ScheduledJobs served), the controllers register and the
// manager runs, without the Backfill and concurrency group controllers.
func TestStartsWithoutTheBackfillCRD(t *testing.T) {
	dir := t.TempDir()
	crd, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "ontime.dev_scheduledjobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scheduledjobs.yaml"), crd, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := testenv.StartHarness(testenv.HarnessOptions{Options: testenv.Options{CRDDirs: []string{dir}}, Scheme: ontimescheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	mgr, err := ctrl.NewManager(h.Config, ctrl.Options{Scheme: ontimescheme.New(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Register(h.Ctx, mgr, clock.RealClock{}, Options{Workers: 1, SpreadNamespace: "ontime-system"}); err != nil {
		t.Fatalf("Register: %v", err)
	}
	ctx, stop := context.WithTimeout(h.Ctx, 3*time.Second)
	defer stop()
	if err := mgr.Start(ctx); err != nil {
		t.Fatalf("the manager stopped: %v", err)
	}
}
