package scheduledjob

import (
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/planner"
)

// minuteAfterCreation is a time one minute (and NTP padding) past the first
// whole minute after the object's creation, and that minute.
func firstRun(sj *v1alpha1.ScheduledJob) time.Time {
	return sj.CreationTimestamp.Time.Truncate(time.Minute).Add(time.Minute)
}

func readyOf(sj *v1alpha1.ScheduledJob) *metav1.Condition {
	return meta.FindStatusCondition(sj.Status.Conditions, v1alpha1.ConditionReady)
}

func hasEvent(events []string, substring string) bool {
	for _, e := range events {
		if strings.Contains(e, substring) {
			return true
		}
	}
	return false
}

func TestCreatesRunsAndWritesStatus(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "minutely", "* * * * *")
	sj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
	create(t, sj)
	sj = get(t, sj)
	drainEvents()

	// The first run, 100 ms after it is due.
	run := firstRun(sj)
	result := reconcileAt(t, sj, run.Add(100*time.Millisecond))
	if result.RequeueAfter != time.Minute {
		t.Errorf("requeue %v, want 1m (next run + 100ms)", result.RequeueAfter)
	}
	created := jobs(t, ns)
	if len(created) != 1 || created[0].Name != planner.JobName(sj, run) {
		t.Fatalf("jobs %v", created)
	}
	job := created[0]
	if job.Labels["app"] != "minutely" || job.Annotations[v1alpha1.ScheduledTimestampAnnotation] != run.UTC().Format(time.RFC3339) || !metav1.IsControlledBy(&job, sj) {
		t.Errorf("job metadata %v %v %v", job.Labels, job.Annotations, job.OwnerReferences)
	}
	sj = get(t, sj)
	if sj.Status.ActiveCount != 1 || sj.Status.Active[0].Name != job.Name || !sj.Status.LastScheduleTime.Time.Equal(run) ||
		!sj.Status.NextScheduleTime.Time.Equal(run.Add(time.Minute)) || readyOf(sj).Status != metav1.ConditionTrue || sj.Status.ObservedGeneration != sj.Generation {
		t.Errorf("status %+v", sj.Status)
	}
	if events := drainEvents(); !hasEvent(events, "SuccessfulCreate Created job "+job.Name) {
		t.Errorf("events %v", events)
	}

	// Reconciling again in the same minute does nothing (and writes nothing).
	before := sj.ResourceVersion
	reconcileAt(t, sj, run.Add(30*time.Second))
	if len(jobs(t, ns)) != 1 || get(t, sj).ResourceVersion != before {
		t.Error("a second reconcile in the same minute created a Job or rewrote status")
	}

	// The Job succeeds; the next run starts; history keeps 1 successful Job.
	finish(t, &job, true, run.Add(20*time.Second))
	reconcileAt(t, sj, run.Add(time.Minute+100*time.Millisecond))
	sj = get(t, sj)
	if !sj.Status.LastSuccessfulTime.Time.Equal(run.Add(20*time.Second)) || sj.Status.ActiveCount != 1 {
		t.Errorf("after the first Job succeeded: %+v", sj.Status)
	}
	second := jobs(t, ns)
	finish(t, &second[len(second)-1], true, run.Add(time.Minute+20*time.Second))
	reconcileAt(t, sj, run.Add(2*time.Minute+100*time.Millisecond))
	names := map[string]bool{}
	for _, j := range jobs(t, ns) {
		if j.DeletionTimestamp == nil {
			names[j.Name] = true
		}
	}
	if names[planner.JobName(sj, run)] || !names[planner.JobName(sj, run.Add(time.Minute))] || !names[planner.JobName(sj, run.Add(2*time.Minute))] {
		t.Errorf("after history cleanup: %v", names)
	}
	if events := drainEvents(); !hasEvent(events, "SuccessfulDelete Deleted job "+planner.JobName(sj, run)) || !hasEvent(events, "SawCompletedJob") {
		t.Errorf("events %v", events)
	}
}

func TestReplaceDeletesTheActiveJob(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "replaced", "* * * * *")
	sj.Spec.ConcurrencyPolicy = v1alpha1.ReplaceConcurrent
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	reconcileAt(t, sj, run.Add(100*time.Millisecond))
	reconcileAt(t, get(t, sj), run.Add(time.Minute+100*time.Millisecond))
	var alive []string
	for _, j := range jobs(t, ns) {
		if j.DeletionTimestamp == nil {
			alive = append(alive, j.Name)
		}
	}
	if len(alive) != 1 || alive[0] != planner.JobName(sj, run.Add(time.Minute)) {
		t.Errorf("jobs left %v, want only the new run", alive)
	}
	if s := get(t, sj).Status; s.ActiveCount != 1 || s.Active[0].Name != alive[0] {
		t.Errorf("active %v", s.Active)
	}
}

func TestForbidWaitsForTheActiveJob(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "forbidden", "* * * * *")
	sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	reconcileAt(t, sj, run.Add(100*time.Millisecond))
	drainEvents()
	reconcileAt(t, get(t, sj), run.Add(time.Minute+100*time.Millisecond))
	if n := len(jobs(t, ns)); n != 1 {
		t.Fatalf("%d jobs under Forbid with one active", n)
	}
	sj = get(t, sj)
	if !sj.Status.NextScheduleTime.Time.Equal(run.Add(time.Minute)) || !strings.Contains(readyOf(sj).Message, "waits for active job") {
		t.Errorf("status does not show the waiting run: %+v", sj.Status)
	}
	if events := drainEvents(); !hasEvent(events, "JobAlreadyActive") {
		t.Errorf("events %v", events)
	}
	first := jobs(t, ns)[0]
	finish(t, &first, false, run.Add(70*time.Second))
	reconcileAt(t, sj, run.Add(75*time.Second))
	if n := len(jobs(t, ns)); n != 2 {
		t.Errorf("%d jobs after the active one failed, want the waiting run started", n)
	}
}

// TestCrashBetweenCreateAndStatus: the Job exists (ours) but status does
// not list it; the reconcile adopts it instead of creating another.
func TestCrashBetweenCreateAndStatus(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "crashed", "* * * * *")
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	plan := planner.Compute(planner.Input{ScheduledJob: sj, Now: run.Add(time.Second)})
	create(t, plan.Create.Job)
	drainEvents()
	reconcileAt(t, sj, run.Add(time.Second))
	if n := len(jobs(t, ns)); n != 1 {
		t.Fatalf("%d jobs", n)
	}
	if s := get(t, sj).Status; s.ActiveCount != 1 || !s.LastScheduleTime.Time.Equal(run) {
		t.Errorf("status %+v", s)
	}
	if events := drainEvents(); hasEvent(events, "SuccessfulCreate") {
		t.Errorf("events %v: the Job was not created by this reconcile", events)
	}
}

// TestForeignJobWithTheRunsName: upstream stops without a requeue and
// stalls (Q7). Here the run is recorded missed, Ready says why, and the
// next run is scheduled.
func TestForeignJobWithTheRunsName(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "squatted", "* * * * *")
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	squatter := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: planner.JobName(sj, run)},
		Spec:       *sj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	create(t, squatter)
	drainEvents()
	result := reconcileAt(t, sj, run.Add(100*time.Millisecond))
	if result.RequeueAfter != time.Minute {
		t.Errorf("requeue %v, want the next run", result.RequeueAfter)
	}
	sj = get(t, sj)
	if r := readyOf(sj); r.Status != metav1.ConditionFalse || r.Reason != v1alpha1.ReasonJobNameConflict || !sj.Status.LastMissedTime.Time.Equal(run) || sj.Status.ActiveCount != 0 {
		t.Errorf("status %+v", sj.Status)
	}
	if events := drainEvents(); !hasEvent(events, "JobNameConflict") {
		t.Errorf("events %v", events)
	}
	// The next run starts normally and clears the condition.
	reconcileAt(t, sj, run.Add(time.Minute+100*time.Millisecond))
	if sj = get(t, sj); readyOf(sj).Reason != v1alpha1.ReasonScheduled || sj.Status.ActiveCount != 1 {
		t.Errorf("after the next run: %+v", sj.Status)
	}
}

func TestActiveJobMissingFromCacheIsReadLive(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "missing", "* * * * *")
	create(t, sj)
	sj = get(t, sj)
	sj.Status.Active = []corev1.ObjectReference{{Kind: "Job", Namespace: ns, Name: "missing-gone", UID: "no-such-uid"}}
	if err := env.live.Status().Update(env.ctx, sj); err != nil {
		t.Fatal(err)
	}
	drainEvents()
	reconcileAt(t, get(t, sj), sj.CreationTimestamp.Add(time.Second))
	if s := get(t, sj).Status; s.ActiveCount != 0 {
		t.Errorf("active %v", s.Active)
	}
	if events := drainEvents(); !hasEvent(events, "MissingJob Active job went missing: missing-gone") {
		t.Errorf("events %v", events)
	}
}

func TestTriggerAnnotation(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "manual", "0 0 1 1 *")
	sj.Annotations = map[string]string{v1alpha1.TriggerAnnotation: "request-1"}
	create(t, sj)
	sj = get(t, sj)
	reconcileAt(t, sj, sj.CreationTimestamp.Add(time.Second))
	created := jobs(t, ns)
	if len(created) != 1 || created[0].Name != planner.TriggeredJobName(sj, "request-1") || created[0].Annotations[v1alpha1.TriggeredAnnotation] != "request-1" {
		t.Fatalf("jobs %v", created)
	}
	sj = get(t, sj)
	if _, still := sj.Annotations[v1alpha1.TriggerAnnotation]; still {
		t.Error("the trigger annotation was not removed")
	}
	if sj.Status.ActiveCount != 1 || sj.Status.LastScheduleTime != nil {
		t.Errorf("status %+v: a triggered run is active but does not move lastScheduleTime", sj.Status)
	}
}

func TestUnknownTimeZoneWaitsForASpecChange(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "zoned", "* * * * *")
	sj.Spec.TimeZone = ptr.To("Mars/Olympus_Mons") // admission is not running in this suite
	create(t, sj)
	sj = get(t, sj)
	result := reconcileAt(t, sj, firstRun(sj).Add(time.Second))
	if result.RequeueAfter != 0 || len(jobs(t, ns)) != 0 {
		t.Errorf("requeue %v, jobs %d", result.RequeueAfter, len(jobs(t, ns)))
	}
	if r := readyOf(get(t, sj)); r.Status != metav1.ConditionFalse || r.Reason != v1alpha1.ReasonUnknownTimeZone {
		t.Errorf("ready %+v", r)
	}
	// The ACTIVE column reads status.activeCount: it must be there, 0.
	stored := asStored(t, sj)
	if count, found, _ := unstructured.NestedInt64(stored.Object, "status", "activeCount"); !found || count != 0 {
		t.Errorf("status.activeCount = %v (present: %v), want 0", count, found)
	}
	// Fixing the spec (a generation change, which triggers a reconcile)
	// schedules again.
	sj = get(t, sj)
	sj.Spec.TimeZone = ptr.To("Europe/Amsterdam")
	if err := env.live.Update(env.ctx, sj); err != nil {
		t.Fatal(err)
	}
	if reconcileAt(t, sj, firstRun(sj).Add(2*time.Second)); readyOf(get(t, sj)).Reason != v1alpha1.ReasonScheduled {
		t.Errorf("after the fix: %+v", readyOf(get(t, sj)))
	}
}

// TestHistoryCleanupDespiteCreateFailure is upstream's
// TestControllerV2CleanupFinishedJobs (vector 40): when the run's Job cannot
// be created (upstream's case is a quota; here an admission policy denies
// Jobs in the namespace), finished Jobs beyond the limit are still deleted.
func TestHistoryCleanupDespiteCreateFailure(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "denied", "* * * * *")
	sj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](1)
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	var old []*batchv1.Job
	for i, at := range []time.Time{run, run.Add(time.Minute)} {
		plan := planner.Compute(planner.Input{ScheduledJob: sj, Now: at.Add(time.Second)})
		job := plan.Create.Job
		create(t, job)
		finish(t, job, true, at.Add(time.Duration(10+i)*time.Second))
		old = append(old, job)
	}
	denyJobs(t, ns)
	env.clock.SetTime(run.Add(2*time.Minute + time.Second))
	waitForCache(t, sj)
	drainEvents()
	if _, err := env.ctrl.Reconcile(env.ctx, requestFor(sj)); err == nil {
		t.Fatal("the run's Job was created despite the policy; the test proves nothing")
	}
	if events := drainEvents(); !hasEvent(events, "FailedCreate") || !hasEvent(events, "SuccessfulDelete Deleted job "+old[0].Name) {
		t.Errorf("events %v", events)
	}
	for _, j := range jobs(t, ns) {
		if j.Name == old[0].Name && j.DeletionTimestamp == nil {
			t.Errorf("the oldest finished Job %s was not deleted", j.Name)
		}
	}
}

// denyJobs installs a ValidatingAdmissionPolicy that rejects every Job
// created in namespace, and waits until the API server enforces it.
func denyJobs(t *testing.T, namespace string) {
	t.Helper()
	name := "deny-jobs-" + namespace
	create(t, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "exceeded quota (test)"}},
		},
	})
	create(t, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": namespace}}},
		},
	})
	probe := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "probe"}, Spec: newScheduledJob(namespace, "x", "* * * * *").Spec.JobTemplate.Spec}
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := env.live.Create(env.ctx, probe.DeepCopy(), client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "exceeded quota (test)") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the admission policy was not enforced: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // waiting for the API server to load the policy
	}
}
