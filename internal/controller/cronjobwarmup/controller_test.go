//go:build integration

package cronjobwarmup

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
// ready, and of the CronJob only the state annotation is written.
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
	checkOnlyStateWritten(t, cj, run)
}

// checkOnlyStateWritten: of the CronJob, only the state annotation was
// written, and it holds the warm-up of the run.
func checkOnlyStateWritten(t *testing.T, cj *batchv1.CronJob, run time.Time) {
	t.Helper()
	if got := get(t, cj); !equality.Semantic.DeepEqual(got.Spec, cj.Spec) || !equality.Semantic.DeepEqual(withoutState(got).Annotations, cj.Annotations) {
		t.Errorf("the CronJob was written beyond its state annotation: spec %+v, annotations %v", got.Spec, got.Annotations)
	}
	if state := stateOf(t, cj); state.WarmUp == nil || !state.WarmUp.ScheduledTime.Time.Equal(run) {
		t.Errorf("state %+v, want the warm-up of the run at %v", state, run)
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
	_, _, events := eventsBeforeItsRun(t, cj)
	if len(events) != 1 || !strings.Contains(events[0], `WarmUpFailed no warm-up: metadata.annotations[warmup.ontime.dev/lead]: Invalid value: "soon": not a duration`) {
		t.Errorf("events %v, want one warning naming the annotation and value", events)
	}
	if n := len(placeholders(t, ns)); n != 0 {
		t.Errorf("%d placeholders", n)
	}
}

// eventsBeforeItsRun creates cj, reconciles it twice before its next
// hourly run, and returns it as stored, that run and the two reconciles'
// events.
func eventsBeforeItsRun(t *testing.T, cj *batchv1.CronJob) (*batchv1.CronJob, time.Time, []string) {
	t.Helper()
	env.Create(t, cj)
	cj = get(t, cj)
	env.DrainEvents()
	run := cj.CreationTimestamp.Time.Truncate(time.Hour).Add(time.Hour)
	reconcileAt(t, cj, run.Add(-5*time.Minute))
	reconcileAt(t, cj, run.Add(-4*time.Minute))
	return cj, run, env.DrainEvents()
}

// TestCronJobBadGroupAnnotation: a CronJob stored with both group
// annotations (past the CronJob webhook, which fails open) gets one
// warning naming them, whose runs the Job webhook refuses; fixed, the
// problem is forgotten without another event.
func TestCronJobBadGroupAnnotation(t *testing.T) {
	ns := env.NewNamespace(t)
	cj := newCronJob(ns)
	delete(cj.Annotations, v1alpha1.WarmUpLeadAnnotation)
	cj.Annotations[v1alpha1.GroupLabel] = "reports"
	cj.Annotations[v1alpha1.ClusterGroupLabel] = "licenses"
	cj, run, events := eventsBeforeItsRun(t, cj)
	if len(events) != 1 || !strings.Contains(events[0], "InvalidConcurrencyGroup its runs are refused until this is fixed: metadata.annotations[ontime.dev/cluster-concurrency-group]") {
		t.Errorf("events %v, want one warning naming the annotation", events)
	}
	if state := get(t, cj).Annotations[v1alpha1.WarmUpStateAnnotation]; !strings.Contains(state, "a CronJob joins one group") {
		t.Errorf("state %q, want the problem remembered", state)
	}
	cj = get(t, cj)
	delete(cj.Annotations, v1alpha1.ClusterGroupLabel)
	if err := env.Live.Update(env.Ctx, cj); err != nil {
		t.Fatal(err)
	}
	reconcileAt(t, cj, run.Add(-3*time.Minute))
	if events := env.DrainEvents(); len(events) != 0 {
		t.Errorf("events %v after the fix, want none", events)
	}
	if state, ok := get(t, cj).Annotations[v1alpha1.WarmUpStateAnnotation]; ok {
		t.Errorf("state %q after the fix, want none", state)
	}
}

// TestCronJobRefusedPlaceholders: a namespace whose ResourceQuota allows
// no pod, or whose admission policy refuses warm-up pods, refuses the
// placeholders of an annotated CronJob: one warning naming the refusal per
// try, no failed reconcile (kube-controller-manager starts the run;
// nothing here may wait for the backoff), another try within
// warmup.RefusedRetry. As for a ScheduledJob, the warm-up's state and its
// other events are recorded all the same: the retry does not announce the
// warm-up again.
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
			failed, others := warmUpFailed(env.DrainEvents())
			if len(failed) != 1 || !strings.Contains(failed[0], "WarmUpFailed warm-up pods refused") || !strings.Contains(failed[0], refusal.says) {
				t.Errorf("events %q, want one warning naming %q", failed, refusal.says)
			}
			if !hasEvent(others, "WarmUpStarted") {
				t.Errorf("events %q, want WarmUpStarted", others)
			}
			if state := stateOf(t, cj); state.WarmUp == nil || !state.WarmUp.ScheduledTime.Time.Equal(run) {
				t.Errorf("state %+v after a refusal, want the warm-up of the run at %v", state, run)
			}
			reconcileAt(t, cj, run.Add(-10*time.Minute+warmup.RefusedRetry))
			if failed, others := warmUpFailed(env.DrainEvents()); len(failed) != 1 || len(others) != 0 {
				t.Errorf("the retry: warnings %q and other events %q, want one warning and nothing else", failed, others)
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

// warmUpFailed splits events into the WarmUpFailed warnings and the rest.
func warmUpFailed(events []string) (failed, others []string) {
	for _, e := range events {
		if strings.Contains(e, "WarmUpFailed") {
			failed = append(failed, e)
		} else {
			others = append(others, e)
		}
	}
	return failed, others
}

// stateOf reads the CronJob's state annotation from the API server.
func stateOf(t *testing.T, cj *batchv1.CronJob) v1alpha1.CronJobWarmUpState {
	t.Helper()
	var state v1alpha1.CronJobWarmUpState
	value, ok := get(t, cj).Annotations[v1alpha1.WarmUpStateAnnotation]
	if !ok {
		return state
	}
	if err := json.Unmarshal([]byte(value), &state); err != nil {
		t.Fatalf("state annotation %q: %v", value, err)
	}
	return state
}

// bind places pods on a node, as the scheduler would.
func bind(t *testing.T, pods []corev1.Pod) {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-"}}
	env.Create(t, node)
	for i := range pods {
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pods[i].Name, Namespace: pods[i].Namespace},
			Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}
		if err := env.Live.SubResource("binding").Create(env.Ctx, &pods[i], binding); err != nil {
			t.Fatalf("binding %s: %v", pods[i].Name, err)
		}
	}
}

// TestCronJobStateSurvivesAFailover: a CronJob's warm-up state is kept in
// its annotation, not in the controller's memory, so a controller that
// never saw the CronJob (a new leader) goes on from it: the capacity
// that was ready is not announced again. Removing the lead annotation
// removes the placeholders and, with them, the state annotation.
func TestCronJobStateSurvivesAFailover(t *testing.T) {
	ns := env.NewNamespace(t)
	cj, run := warmCronJob(t, newCronJob(ns))
	bind(t, placeholders(t, ns))
	reconcileAt(t, cj, run.Add(-9*time.Minute))
	if events := env.DrainEvents(); !hasEvent(events, "WarmUpReady") {
		t.Fatalf("events %q, want WarmUpReady", events)
	}
	if state := stateOf(t, cj); state.WarmUp == nil || state.WarmUp.ReadyTime == nil {
		t.Fatalf("state %+v, want the capacity ready", state)
	}
	newLeader := NewController(env.Cached, env.Reader, env.Clock, env.Recorder, v1alpha1.ControllerDefaults{PlaceholderImage: testPlaceholderImage}, nil)
	reconcileWith(t, newLeader, cj, run.Add(-8*time.Minute))
	if events := env.DrainEvents(); len(events) != 0 {
		t.Errorf("a new leader emitted %q, want nothing: the warm-up was ready before it", events)
	}
	update(t, cj, func(cj *batchv1.CronJob) { delete(cj.Annotations, v1alpha1.WarmUpLeadAnnotation) })
	reconcileWith(t, newLeader, cj, run.Add(-7*time.Minute))
	if _, ok := get(t, cj).Annotations[v1alpha1.WarmUpStateAnnotation]; ok || len(placeholders(t, ns)) != 0 {
		t.Errorf("without warm-up: state annotation left %v, %d placeholders left", ok, len(placeholders(t, ns)))
	}
}

// TestGroupChangeReconcilesWarmedMembers: when a concurrency group
// changes, the CronJobs that join it by annotation and warm up are
// reconciled (their warm-up follows its predictions), found by the index
// of CronJobs by group; a member without warm-up, and a CronJob of another
// group or a cluster group of the same name, are not.
func TestGroupChangeReconcilesWarmedMembers(t *testing.T) {
	ns := env.NewNamespace(t)
	member := func(name string, annotations map[string]string) {
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
			Spec: batchv1.CronJobSpec{Schedule: "0 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
		env.Create(t, cj)
		env.WaitForCache(t, cj)
	}
	member("warm", map[string]string{v1alpha1.GroupLabel: "db", v1alpha1.WarmUpLeadAnnotation: "10m"})
	member("cold", map[string]string{v1alpha1.GroupLabel: "db"})
	member("elsewhere", map[string]string{v1alpha1.GroupLabel: "cache", v1alpha1.WarmUpLeadAnnotation: "10m"})
	member("cluster-wide", map[string]string{v1alpha1.ClusterGroupLabel: "db", v1alpha1.WarmUpLeadAnnotation: "10m"})

	members := warmedMembersOf(env.Ctx, env.Cached, v1alpha1.GroupIndexValue(v1alpha1.KindConcurrencyGroup, types.NamespacedName{Namespace: ns, Name: "db"}))
	if len(members) != 1 || members[0].NamespacedName != (types.NamespacedName{Namespace: ns, Name: "warm"}) {
		t.Errorf("members of %s/db to reconcile: %v, want %s/warm", ns, members, ns)
	}
	members = warmedMembersOf(env.Ctx, env.Cached, v1alpha1.GroupIndexValue(v1alpha1.KindClusterConcurrencyGroup, types.NamespacedName{Name: "db"}))
	if len(members) != 1 || members[0].NamespacedName != (types.NamespacedName{Namespace: ns, Name: "cluster-wide"}) {
		t.Errorf("members of the cluster group db to reconcile: %v, want %s/cluster-wide", members, ns)
	}
}
