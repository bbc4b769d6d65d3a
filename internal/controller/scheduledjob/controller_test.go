//go:build integration

package scheduledjob

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/recovery"
	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// firstRun is the ScheduledJob's first run: the first whole minute after its
// creation (a minutely schedule's).
func firstRun(sj *v1alpha1.ScheduledJob) time.Time {
	return sj.CreationTimestamp.Time.Truncate(time.Minute).Add(time.Minute)
}

func readyOf(sj *v1alpha1.ScheduledJob) *metav1.Condition {
	return meta.FindStatusCondition(sj.Status.Conditions, v1alpha1.ConditionReady)
}

// wantStatus is what a test expects of status: the active Jobs' names and
// the times; a zero time means unset.
type wantStatus struct {
	active                                      []string
	lastSchedule, lastMissed, lastSuccess, next time.Time
}

// checkStatus compares status with want and reports the difference as
// a diff of the fields wantStatus names.
func checkStatus(t *testing.T, status v1alpha1.ScheduledJobStatus, want wantStatus) {
	t.Helper()
	got := wantStatus{lastSchedule: timeOrZero(status.LastScheduleTime), lastMissed: timeOrZero(status.LastMissedTime),
		lastSuccess: timeOrZero(status.LastSuccessfulTime), next: timeOrZero(status.NextScheduleTime)}
	for _, ref := range status.Active {
		got.active = append(got.active, ref.Name)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(wantStatus{}), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if int(status.ActiveCount) != len(status.Active) {
		t.Errorf("status.activeCount %d, with %d active", status.ActiveCount, len(status.Active))
	}
}

func timeOrZero(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
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
	if want := time.Minute - 99*time.Millisecond; result.RequeueAfter != want {
		t.Errorf("requeue %v, want %v (next run + 1ms)", result.RequeueAfter, want)
	}
	created := jobs(t, ns)
	if len(created) != 1 || created[0].Name != sj.JobName(run) {
		t.Fatalf("jobs %v", created)
	}
	job := created[0]
	checkRunJob(t, &job, sj, run)
	sj = get(t, sj)
	checkStatus(t, sj.Status, wantStatus{active: []string{job.Name}, lastSchedule: run, next: run.Add(time.Minute)})
	if r := readyOf(sj); r.Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v, want True", r)
	}
	if sj.Status.ObservedGeneration != sj.Generation {
		t.Errorf("observedGeneration %d, want %d", sj.Status.ObservedGeneration, sj.Generation)
	}
	if events := drainEvents(); !hasEvent(events, "SuccessfulCreate Created job "+job.Name) {
		t.Errorf("events %v", events)
	}

	// Reconciling again in the same minute does nothing (and writes nothing).
	before := sj.ResourceVersion
	reconcileAt(t, sj, run.Add(30*time.Second))
	if n := len(jobs(t, ns)); n != 1 {
		t.Errorf("a second reconcile in the same minute made %d jobs", n)
	}
	if get(t, sj).ResourceVersion != before {
		t.Error("a second reconcile in the same minute rewrote status")
	}

	// The Job succeeds; the next run starts; history keeps 1 successful Job.
	finish(t, &job, true, run.Add(20*time.Second))
	reconcileAt(t, sj, run.Add(time.Minute+100*time.Millisecond))
	sj = get(t, sj)
	checkStatus(t, sj.Status, wantStatus{active: []string{sj.JobName(run.Add(time.Minute))}, lastSchedule: run.Add(time.Minute),
		next: run.Add(2 * time.Minute), lastSuccess: run.Add(20 * time.Second)})
	second := jobs(t, ns)
	finish(t, &second[len(second)-1], true, run.Add(time.Minute+20*time.Second))
	reconcileAt(t, sj, run.Add(2*time.Minute+100*time.Millisecond))
	names := map[string]bool{}
	for _, j := range jobs(t, ns) {
		if j.DeletionTimestamp == nil {
			names[j.Name] = true
		}
	}
	if want := map[string]bool{sj.JobName(run.Add(time.Minute)): true, sj.JobName(run.Add(2 * time.Minute)): true}; !maps.Equal(names, want) {
		t.Errorf("after history cleanup: %v, want %v", names, want)
	}
	events := drainEvents()
	for _, want := range []string{"SuccessfulDelete Deleted job " + sj.JobName(run), "SawCompletedJob"} {
		if !hasEvent(events, want) {
			t.Errorf("no event %q in %v", want, events)
		}
	}
}

// checkRunJob checks a run's Job as a CronJob's would be: the template's
// labels, the scheduled-time annotation and the owner.
func checkRunJob(t *testing.T, job *batchv1.Job, sj *v1alpha1.ScheduledJob, run time.Time) {
	t.Helper()
	if job.Labels["app"] != sj.Spec.JobTemplate.Labels["app"] {
		t.Errorf("job labels %v, want the template's", job.Labels)
	}
	if got := job.Annotations[v1alpha1.ScheduledTimestampAnnotation]; got != run.UTC().Format(time.RFC3339) {
		t.Errorf("scheduled-time annotation %q, want %s", got, run.UTC().Format(time.RFC3339))
	}
	if !metav1.IsControlledBy(job, sj) {
		t.Errorf("job owners %v, want the ScheduledJob as controller", job.OwnerReferences)
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
	if len(alive) != 1 || alive[0] != sj.JobName(run.Add(time.Minute)) {
		t.Errorf("jobs left %v, want only the new run", alive)
	}
	checkStatus(t, get(t, sj).Status, wantStatus{active: alive, lastSchedule: run.Add(time.Minute), next: run.Add(2 * time.Minute)})
}

// forbidWithFirstRun creates a Forbid ScheduledJob that runs every minute
// in a namespace of its own and starts its first run, which is still
// running; it returns the namespace, the ScheduledJob and the run's time.
func forbidWithFirstRun(t *testing.T) (string, *v1alpha1.ScheduledJob, time.Time) {
	t.Helper()
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "forbidden", "* * * * *")
	sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	reconcileAt(t, sj, run.Add(100*time.Millisecond))
	return ns, sj, run
}

func TestForbidWaitsForTheActiveJob(t *testing.T) {
	ns, sj, run := forbidWithFirstRun(t)
	drainEvents()
	reconcileAt(t, get(t, sj), run.Add(time.Minute+100*time.Millisecond))
	if n := len(jobs(t, ns)); n != 1 {
		t.Fatalf("%d jobs under Forbid with one active", n)
	}
	sj = get(t, sj)
	checkStatus(t, sj.Status, wantStatus{active: []string{sj.JobName(run)}, lastSchedule: run, next: run.Add(time.Minute)})
	if message := readyOf(sj).Message; !strings.Contains(message, "waits for active job") {
		t.Errorf("Ready message %q does not show the waiting run", message)
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
	plan := planner.Decide(planner.Input{ScheduledJob: sj, Now: run.Add(time.Second)})
	create(t, plan.Create.Job)
	drainEvents()
	reconcileAt(t, sj, run.Add(time.Second))
	if n := len(jobs(t, ns)); n != 1 {
		t.Fatalf("%d jobs", n)
	}
	checkStatus(t, get(t, sj).Status, wantStatus{active: []string{sj.JobName(run)}, lastSchedule: run, next: run.Add(time.Minute)})
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
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sj.JobName(run)},
		Spec:       *sj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	create(t, squatter)
	drainEvents()
	result := reconcileAt(t, sj, run.Add(100*time.Millisecond))
	if want := time.Minute - 99*time.Millisecond; result.RequeueAfter != want {
		t.Errorf("requeue %v, want %v (the next run + 1ms)", result.RequeueAfter, want)
	}
	sj = get(t, sj)
	checkStatus(t, sj.Status, wantStatus{lastMissed: run, next: run.Add(time.Minute)})
	if r := readyOf(sj); r.Status != metav1.ConditionFalse || r.Reason != v1alpha1.ReasonJobNameConflict {
		t.Errorf("Ready %+v, want False JobNameConflict", r)
	}
	if events := drainEvents(); !hasEvent(events, "JobNameConflict") {
		t.Errorf("events %v", events)
	}
	// The next run starts normally and clears the condition.
	reconcileAt(t, sj, run.Add(time.Minute+100*time.Millisecond))
	sj = get(t, sj)
	checkStatus(t, sj.Status, wantStatus{active: []string{sj.JobName(run.Add(time.Minute))}, lastSchedule: run.Add(time.Minute),
		lastMissed: run, next: run.Add(2 * time.Minute)})
	if r := readyOf(sj); r.Reason != v1alpha1.ReasonScheduled {
		t.Errorf("after the next run: Ready %+v, want Scheduled", r)
	}
}

func TestActiveJobMissingFromCacheIsReadLive(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "missing", "* * * * *")
	create(t, sj)
	sj = get(t, sj)
	sj.Status.Active = []corev1.ObjectReference{{Kind: "Job", Namespace: ns, Name: "missing-gone", UID: "no-such-uid"}}
	if err := env.Live.Status().Update(env.Ctx, sj); err != nil {
		t.Fatal(err)
	}
	drainEvents()
	// A second before the first run: creation+1s would cross into the
	// next minute for one creation second in 60 and start a run.
	reconcileAt(t, get(t, sj), firstRun(sj).Add(-time.Second))
	if s := get(t, sj).Status; s.ActiveCount != 0 || len(s.Active) != 0 {
		t.Errorf("active %v (activeCount %d), want none", s.Active, s.ActiveCount)
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
	if len(created) != 1 || created[0].Name != sj.TriggeredJobName("request-1") {
		t.Fatalf("jobs %v, want only %s", created, sj.TriggeredJobName("request-1"))
	}
	if got := created[0].Annotations[v1alpha1.TriggeredAnnotation]; got != "request-1" {
		t.Errorf("triggered-by annotation %q, want request-1", got)
	}
	sj = get(t, sj)
	if _, still := sj.Annotations[v1alpha1.TriggerAnnotation]; still {
		t.Error("the trigger annotation was not removed")
	}
	// A triggered run is active but does not move lastScheduleTime.
	checkStatus(t, sj.Status, wantStatus{active: []string{created[0].Name}, next: time.Date(sj.CreationTimestamp.Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)})
}

func TestUnknownTimeZoneWaitsForASpecChange(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "zoned", "* * * * *")
	sj.Spec.TimeZone = ptr.To("Mars/Olympus_Mons") // admission is not running in this suite
	create(t, sj)
	sj = get(t, sj)
	result := reconcileAt(t, sj, firstRun(sj).Add(time.Second))
	if result.RequeueAfter != 0 {
		t.Errorf("requeue %v, want none until the spec changes", result.RequeueAfter)
	}
	if n := len(jobs(t, ns)); n != 0 {
		t.Errorf("%d jobs for an unknown zone", n)
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
	if err := env.Live.Update(env.Ctx, sj); err != nil {
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
		plan := planner.Decide(planner.Input{ScheduledJob: sj, Now: at.Add(time.Second)})
		job := plan.Create.Job
		create(t, job)
		finish(t, job, true, at.Add(time.Duration(10+i)*time.Second))
		old = append(old, job)
	}
	denyJobs(t, ns)
	env.Clock.SetTime(run.Add(2*time.Minute + time.Second))
	waitForCache(t, sj)
	drainEvents()
	if _, err := env.ctrl.Reconcile(env.Ctx, requestFor(sj)); err == nil {
		t.Fatal("the run's Job was created despite the policy; the test proves nothing")
	}
	events := drainEvents()
	for _, want := range []string{"FailedCreate", "SuccessfulDelete Deleted job " + old[0].Name} {
		if !hasEvent(events, want) {
			t.Errorf("no event %q in %v", want, events)
		}
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
	testenv.Eventually(t, 20*time.Second, "the API server to enforce the admission policy", func() bool {
		err := env.Live.Create(env.Ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "exceeded quota (test)")
	})
}

// staleScheduledJobs is the manager's client, except that Get of a
// ScheduledJob returns an older copy while one is set: a cache that has not
// seen the controller's last status write.
type staleScheduledJobs struct {
	client.Client
	stale *v1alpha1.ScheduledJob
}

func (c *staleScheduledJobs) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if sj, ok := obj.(*v1alpha1.ScheduledJob); ok && c.stale != nil && key == client.ObjectKeyFromObject(c.stale) {
		c.stale.DeepCopyInto(sj)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestStaleCacheAfterReplace: Replace deletes the active Job and (in the
// reconcile the new Job triggers) writes a status without it; the next
// reconcile, triggered by the deletion, reads
// the ScheduledJob from a cache that still lists the deleted Job as active.
// It plans from the status it wrote: no MissingJob for the replaced Job, no
// second run, no second write.
func TestStaleCacheAfterReplace(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "replaced-stale", "* * * * *")
	sj.Spec.ConcurrencyPolicy = v1alpha1.ReplaceConcurrent
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	kubeClient := &staleScheduledJobs{Client: env.Cached}
	ctrl := newSuiteController(kubeClient)
	reconcileWith(t, ctrl, sj, run.Add(100*time.Millisecond))
	kubeClient.stale = get(t, sj) // status.active names the first run's Job
	drainEvents()
	reconcileWith(t, ctrl, sj, run.Add(time.Minute+100*time.Millisecond)) // Replace
	afterReplace := get(t, sj)
	waitForCache(t, sj) // the Jobs: the first is gone, the second there
	if events := drainEvents(); !hasEvent(events, "SuccessfulDelete") || !hasEvent(events, "SuccessfulCreate") {
		t.Fatalf("events %v, want the first run deleted and the second created", events)
	}

	env.Clock.SetTime(run.Add(time.Minute + 200*time.Millisecond))
	_, err := ctrl.Reconcile(env.Ctx, requestFor(sj))
	if events := drainEvents(); len(events) != 0 {
		t.Errorf("events %v after the stale read, want none (the replaced Job is not missing)", events)
	}
	if err != nil {
		t.Errorf("reconcile after the stale read: %v", err)
	}
	if now := get(t, sj); now.ResourceVersion != afterReplace.ResourceVersion {
		t.Errorf("status written again after the stale read: %+v", now.Status)
	}
	var alive []string
	for _, job := range jobs(t, ns) {
		if job.DeletionTimestamp == nil {
			alive = append(alive, job.Name)
		}
	}
	if want := sj.JobName(run.Add(time.Minute)); len(alive) != 1 || alive[0] != want {
		t.Errorf("jobs %v, want only %s", alive, want)
	}
}

// TestStartedRunDefersStatus: the reconcile that creates a run's Job does
// nothing else and comes back within a second; the next reconcile (the new
// Job's watch event) writes the status the first one computed, including
// what only it knew: the runs it counted as missed. A controller that
// restarts in between rebuilds the status from the Job.
func TestStartedRunDefersStatus(t *testing.T) {
	ns := newNamespace(t)
	for _, restart := range []bool{false, true} {
		sj := newScheduledJob(ns, fmt.Sprintf("deferred-restart-%t", restart), "* * * * *")
		create(t, sj)
		sj = get(t, sj)
		// The runs of the three minutes before it were skipped.
		run := firstRun(sj).Add(3 * time.Minute)
		env.Clock.SetTime(run.Add(100 * time.Millisecond))
		waitForCache(t, sj)
		before := get(t, sj)
		result, err := env.ctrl.Reconcile(env.Ctx, requestFor(sj))
		if err != nil {
			t.Fatal(err)
		}
		if created := jobsOf(t, ns, sj); len(created) != 1 || created[0] != sj.JobName(run) {
			t.Fatalf("%s: jobs %v, want the run's", sj.Name, created)
		}
		if after := get(t, sj); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("%s: the reconcile that created the Job wrote status %+v; want it left to the next", sj.Name, after.Status)
		}
		if result.RequeueAfter <= 0 || result.RequeueAfter > time.Second {
			t.Errorf("%s: requeue after %v, want within a second", sj.Name, result.RequeueAfter)
		}

		// A controller restarted meanwhile lost the deferred status, and
		// finds the skipped runs from the Job all the same.
		c := env.ctrl
		want := wantStatus{active: []string{sj.JobName(run)}, lastSchedule: run, next: run.Add(time.Minute), lastMissed: run.Add(-time.Minute)}
		if restart {
			c = newSuiteController(env.Cached)
		}
		drainEvents()
		reconcileWith(t, c, sj, run.Add(200*time.Millisecond))
		checkStatus(t, get(t, sj).Status, want)
		if created := jobsOf(t, ns, sj); len(created) != 1 {
			t.Errorf("%s: jobs %v after the status write, want the one run", sj.Name, created)
		}
		if events := drainEvents(); len(events) != 0 {
			t.Errorf("%s: events %v from the reconcile that wrote status, want none", sj.Name, events)
		}
	}
}

// jobsOf returns the names of sj's Jobs.
func jobsOf(t *testing.T, namespace string, sj *v1alpha1.ScheduledJob) []string {
	t.Helper()
	var names []string
	for _, job := range jobs(t, namespace) {
		if metav1.IsControlledBy(&job, sj) {
			names = append(names, job.Name)
		}
	}
	return names
}

// TestFailedCreateIsRetriedByTheNextLeader: the chaos run's lost runs. A
// leader's Job create failed (etcd restarting), it wrote status and lost
// the Lease; the next leader must still find the run due and create it.
func TestFailedCreateIsRetriedByTheNextLeader(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "retried", "* * * * *")
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	failing := newSuiteController(&failingJobCreates{Client: env.Cached})
	env.Clock.SetTime(run.Add(14 * time.Second))
	waitForCache(t, sj)
	if _, err := failing.Reconcile(env.Ctx, requestFor(sj)); err == nil {
		t.Fatal("the reconcile whose create failed returned no error, so nothing retries it")
	}
	if n := len(jobs(t, ns)); n != 0 {
		t.Fatalf("%d jobs after the failed create", n)
	}
	if next := get(t, sj).Status.NextScheduleTime; next == nil || !next.Time.Equal(run) {
		t.Errorf("nextScheduleTime %v after the failed create, want %s, the run still due", next, run)
	}
	drainEvents()
	reconcileAt(t, get(t, sj), run.Add(20*time.Second)) // the next leader's first reconcile
	created := jobs(t, ns)
	if len(created) != 1 || created[0].Name != sj.JobName(run) {
		t.Fatalf("jobs %v, want the retried run's %s", created, sj.JobName(run))
	}
	checkStatus(t, get(t, sj).Status, wantStatus{active: []string{sj.JobName(run)}, lastSchedule: run, next: run.Add(time.Minute)})
}

// failingJobCreates refuses every Job creation as an API server does while
// etcd is away.
type failingJobCreates struct{ client.Client }

func (c *failingJobCreates) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if _, isJob := obj.(*batchv1.Job); isJob {
		return apierrors.NewInternalError(errors.New("rpc error: code = Unavailable desc = error reading from server"))
	}
	return c.Client.Create(ctx, obj, opts...)
}

// TestForbidAfterAnOutageAsksTheAPIServer: after an outage, a replica's
// cache can show a Job running for up to a minute after it finished (its
// watch waits out client-go's backoff). While the API server failed to
// answer the process recently, a run Forbid holds back is judged from the
// API server's Jobs, and looked at again every second; otherwise from the
// cache, waiting for the Job's update.
func TestForbidAfterAnOutageAsksTheAPIServer(t *testing.T) {
	for name, tc := range map[string]struct {
		outageAgo time.Duration // 0: none
		running   bool          // the Job has not finished
		started   bool
		// recheck: the held run is looked at again within heldRecheck.
		recheck bool
	}{
		"no outage: the cache is trusted":                     {},
		"an outage 30 s ago: the API server's Jobs":           {outageAgo: 30 * time.Second, started: true},
		"an outage 30 s ago, the Job still runs: again in 1s": {outageAgo: 30 * time.Second, running: true, recheck: true},
		"an outage long ago: the cache is trusted":            {outageAgo: recovery.CacheCatchUp + time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			ns, sj, run := forbidWithFirstRun(t)
			first := jobs(t, ns)[0]
			running := first.DeepCopy()
			if !tc.running {
				finish(t, &first, true, run.Add(70*time.Second))
			}

			opts := testOptions
			now := run.Add(75 * time.Second)
			if tc.outageAgo > 0 {
				opts.Unanswered = recovery.NewUnanswered(env.Clock)
				env.Clock.SetTime(now.Add(-tc.outageAgo))
				opts.Unanswered.Failed()
			}
			behind := NewController(staleJobs{Client: env.Cached, stale: running}, env.Reader, env.Clock, env.Recorder, opts)
			result := reconcileWith(t, behind, get(t, sj), now)
			if started := len(jobs(t, ns)) == 2; started != tc.started {
				t.Errorf("the held run started: %v, want %v", started, tc.started)
			}
			if recheck := result.RequeueAfter <= heldRecheck; !tc.started && recheck != tc.recheck {
				t.Errorf("requeue after %v: a held run is looked at again every %v only after an outage", result.RequeueAfter, heldRecheck)
			}
		})
	}
}

// staleJobs is a cache behind the API server: it lists one Job as it was
// before it finished.
type staleJobs struct {
	client.Client
	stale *batchv1.Job
}

func (c staleJobs) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if jobs, ok := list.(*batchv1.JobList); ok {
		for i := range jobs.Items {
			if jobs.Items[i].UID == c.stale.UID {
				jobs.Items[i] = *c.stale.DeepCopy()
			}
		}
	}
	return nil
}
