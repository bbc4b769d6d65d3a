//go:build integration

package scheduledjob

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// hourRun is the first run of an hourly ScheduledJob.
func hourRun(sj *v1alpha1.ScheduledJob) time.Time {
	return sj.CreationTimestamp.Time.Truncate(time.Hour).Add(time.Hour)
}

// warmUpPods lists the live warm-up pods of a namespace that are not being
// deleted.
func warmUpPods(t *testing.T, namespace string) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := env.Live.List(env.Ctx, &list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: warmup.PodSelector()}); err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
}

// bind places pods on a node, as the scheduler would.
func bind(t *testing.T, pods []corev1.Pod) {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-", Labels: map[string]string{"pool": "batch"}}}
	create(t, node)
	for i := range pods {
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pods[i].Name, Namespace: pods[i].Namespace},
			Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}
		if err := env.Live.SubResource("binding").Create(env.Ctx, &pods[i], binding); err != nil {
			t.Fatalf("binding %s: %v", pods[i].Name, err)
		}
	}
}

func capacityOf(sj *v1alpha1.ScheduledJob) string {
	if c := meta.FindStatusCondition(sj.Status.Conditions, v1alpha1.ConditionCapacityReady); c != nil {
		return string(c.Status) + "/" + c.Reason
	}
	return ""
}

// warmUp creates sj and reconciles it at its first run's warm-up start;
// it returns the run's time and the fresh ScheduledJob.
func warmUp(t *testing.T, sj *v1alpha1.ScheduledJob) (time.Time, *v1alpha1.ScheduledJob) {
	t.Helper()
	create(t, sj)
	sj = get(t, sj)
	run := hourRun(sj)
	reconcileAt(t, sj, run.Add(-10*time.Minute))
	if n := len(warmUpPods(t, sj.Namespace)); n != int(warmup.PodsPerRun(&sj.Spec.JobTemplate.Spec)) {
		t.Fatalf("%d placeholders at the warm-up's start", n)
	}
	return run, get(t, sj)
}

// TestPlaceholderWarmUp follows one run: placeholders shaped like its pods
// at lead before it, ready once placed, the run's Job unchanged at its
// time, placeholders gone once its pods are ready.
func TestPlaceholderWarmUp(t *testing.T) {
	ns := newNamespace(t)
	sj := newWarmUpJob(ns, "warm")
	create(t, sj)
	sj = get(t, sj)
	run := hourRun(sj)
	drainEvents()

	result := reconcileAt(t, sj, run.Add(-15*time.Minute))
	if n := len(warmUpPods(t, ns)); n != 0 || result.RequeueAfter != 5*time.Minute {
		t.Fatalf("15 minutes ahead: %d placeholders, requeue %v; want none, and a wake-up in 5m", n, result.RequeueAfter)
	}
	if got := get(t, sj).Status.NextWarmUpTime; got == nil || !got.Time.Equal(run.Add(-10*time.Minute)) {
		t.Errorf("nextWarmUpTime %v, want %v", got, run.Add(-10*time.Minute))
	}

	reconcileAt(t, sj, run.Add(-10*time.Minute))
	pods := warmUpPods(t, ns)
	if len(pods) != 2 {
		t.Fatalf("%d placeholders, want 2 (parallelism)", len(pods))
	}
	checkPlaceholderPod(t, &pods[0], get(t, sj))
	reconcileAt(t, sj, run.Add(-10*time.Minute+time.Second))
	if n := len(warmUpPods(t, ns)); n != 2 {
		t.Errorf("a second reconcile left %d placeholders", n)
	}
	if sj = get(t, sj); capacityOf(sj) != "False/WarmingUp" || sj.Status.WarmUp == nil || sj.Status.WarmUp.Pods != 2 {
		t.Errorf("warming: CapacityReady %s, warmUp %+v", capacityOf(sj), sj.Status.WarmUp)
	}

	bind(t, pods)
	reconcileAt(t, sj, run.Add(-9*time.Minute))
	if sj = get(t, sj); capacityOf(sj) != "True/CapacityReady" || sj.Status.WarmUp.ReadyTime == nil {
		t.Errorf("placed: CapacityReady %s, warmUp %+v", capacityOf(sj), sj.Status.WarmUp)
	}
	events := drainEvents()
	for _, want := range []string{"WarmUpStarted", "WarmUpReady"} {
		if !hasEvent(events, want) {
			t.Errorf("no %s event in %v", want, events)
		}
	}

	checkHandOff(t, sj, run)
}

// checkHandOff: at the run, its Job as without warm-up; the placeholders
// stay until its pods are ready.
func checkHandOff(t *testing.T, sj *v1alpha1.ScheduledJob, run time.Time) {
	t.Helper()
	ns := sj.Namespace
	reconcileAt(t, sj, run.Add(100*time.Millisecond))
	created := jobs(t, ns)
	if len(created) != 1 || created[0].Name != sj.JobName(run) || len(created[0].Spec.Template.Spec.InitContainers) != 0 {
		t.Fatalf("jobs %v, want %s as without warm-up", created, sj.JobName(run))
	}
	if n := len(warmUpPods(t, ns)); n != 2 {
		t.Errorf("%d placeholders during the hand-off, want 2", n)
	}
	job := created[0]
	job.Status.Ready = ptr.To[int32](2)
	job.Status.Active = 2
	if err := env.Live.Status().Update(env.Ctx, &job); err != nil {
		t.Fatal(err)
	}
	reconcileAt(t, sj, run.Add(3*time.Second))
	if n := len(warmUpPods(t, ns)); n != 0 {
		t.Errorf("%d placeholders after the run's pods are ready", n)
	}
}

// checkPlaceholderPod checks what the API server stored of a placeholder:
// its shape, priority, owner and labels.
func checkPlaceholderPod(t *testing.T, pod *corev1.Pod, sj *v1alpha1.ScheduledJob) {
	t.Helper()
	if !metav1.IsControlledBy(pod, sj) {
		t.Errorf("placeholder owners %v, want the ScheduledJob", pod.OwnerReferences)
	}
	if pod.Spec.PriorityClassName != v1alpha1.DefaultPlaceholderPriorityClass || ptr.Deref(pod.Spec.Priority, 0) != -5 ||
		ptr.Deref(pod.Spec.PreemptionPolicy, "") != corev1.PreemptNever {
		t.Errorf("priority %s %v %v, want ontime-placeholder, -5, Never", pod.Spec.PriorityClassName, pod.Spec.Priority, pod.Spec.PreemptionPolicy)
	}
	if cpu := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; cpu.String() != "500m" || pod.Spec.NodeSelector["pool"] != "batch" {
		t.Errorf("placeholder requests %s on %v, want 500m on pool=batch", cpu.String(), pod.Spec.NodeSelector)
	}
	if pod.Labels[v1alpha1.RunLabel] != v1alpha1.RunLabelValue(hourRun(sj)) || pod.Labels["app"] != sj.Name {
		t.Errorf("placeholder labels %v", pod.Labels)
	}
}

// TestPlaceholdersGoWhenTheRunDoesNotStart: suspend, a schedule edit,
// Forbid with an active run and a missed deadline each delete the
// placeholders, and say so.
func TestPlaceholdersGoWhenTheRunDoesNotStart(t *testing.T) {
	cases := map[string]func(t *testing.T, sj *v1alpha1.ScheduledJob, run time.Time) time.Time{
		"suspended": func(t *testing.T, sj *v1alpha1.ScheduledJob, run time.Time) time.Time {
			update(t, sj, func(sj *v1alpha1.ScheduledJob) { sj.Spec.Suspend = ptr.To(true) })
			return run.Add(-5 * time.Minute)
		},
		"schedule edited": func(t *testing.T, sj *v1alpha1.ScheduledJob, run time.Time) time.Time {
			update(t, sj, func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "30 * * * *" })
			return run.Add(-5 * time.Minute)
		},
		"Forbid with an active run": func(t *testing.T, sj *v1alpha1.ScheduledJob, run time.Time) time.Time {
			update(t, sj, func(sj *v1alpha1.ScheduledJob) { sj.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent })
			// An active run triggered by hand holds the scheduled one back.
			update(t, sj, func(sj *v1alpha1.ScheduledJob) {
				sj.Annotations = map[string]string{v1alpha1.TriggerAnnotation: "manual"}
			})
			reconcileAt(t, get(t, sj), run.Add(-5*time.Minute))
			return run.Add(100 * time.Millisecond)
		},
		"past its deadline": func(t *testing.T, sj *v1alpha1.ScheduledJob, run time.Time) time.Time {
			update(t, sj, func(sj *v1alpha1.ScheduledJob) { sj.Spec.StartingDeadlineSeconds = ptr.To[int64](30) })
			return run.Add(time.Minute)
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			run, sj := warmUp(t, newWarmUpJob(ns, "warm"))
			at := change(t, sj, run)
			drainEvents()
			reconcileAt(t, get(t, sj), at)
			if n := len(warmUpPods(t, ns)); n != 0 {
				t.Errorf("%d placeholders left", n)
			}
			if events := drainEvents(); !hasEvent(events, "WarmUpCanceled") {
				t.Errorf("events %v, want WarmUpCanceled", events)
			}
		})
	}
}

func update(t *testing.T, sj *v1alpha1.ScheduledJob, change func(*v1alpha1.ScheduledJob)) {
	t.Helper()
	fresh := get(t, sj)
	change(fresh)
	if err := env.Live.Update(env.Ctx, fresh); err != nil {
		t.Fatal(err)
	}
}

// TestWarmUpContinuesAfterARestart: a new controller process finds the
// placeholders, makes no second set, and removes them at the hold's end.
func TestWarmUpContinuesAfterARestart(t *testing.T) {
	ns := newNamespace(t)
	run, sj := warmUp(t, newWarmUpJob(ns, "restarted"))
	started := sj.Status.WarmUp.StartTime
	restarted := newSuiteController(env.Cached)
	saved := env.ctrl
	env.ctrl = restarted
	t.Cleanup(func() { env.ctrl = saved })

	reconcileAt(t, sj, run.Add(-9*time.Minute))
	if n := len(warmUpPods(t, ns)); n != 2 {
		t.Errorf("%d placeholders after the restart, want the same 2", n)
	}
	if got := get(t, sj).Status.WarmUp.StartTime; !got.Equal(&started) {
		t.Errorf("warm-up start %v after the restart, want %v", got, started)
	}
	reconcileAt(t, sj, run.Add(100*time.Millisecond))
	reconcileAt(t, sj, run.Add(v1alpha1.DefaultHoldAfterSchedule))
	if n := len(warmUpPods(t, ns)); n != 0 {
		t.Errorf("%d placeholders after the hold, want none", n)
	}
}

// TestEarlyStartJob: the run's Job lead early, its pods held by the wait
// container; lastScheduleTime moves at the run's time, and no second Job.
func TestEarlyStartJob(t *testing.T) {
	ns := newNamespace(t)
	sj := newWarmUpJob(ns, "early")
	sj.Spec.WarmUp.Strategy = v1alpha1.WarmUpEarlyStart
	create(t, sj)
	sj = get(t, sj)
	run := hourRun(sj)
	reconcileAt(t, sj, run.Add(-10*time.Minute))
	created := jobs(t, ns)
	if len(created) != 1 || created[0].Name != sj.JobName(run) {
		t.Fatalf("jobs %v, want %s early", created, sj.JobName(run))
	}
	pod := created[0].Spec.Template
	wait := pod.Spec.InitContainers[0]
	if wait.Name != warmup.WaitContainerName || wait.Image != testEarlyStartImage || strings.Join(wait.Command, " ") != warmup.WaitCommand ||
		strings.Join(wait.Args, " ") != "--until "+run.UTC().Format(time.RFC3339) {
		t.Errorf("wait container %+v", wait)
	}
	if pod.Labels[v1alpha1.WarmUpLabel] != v1alpha1.WarmUpEarlyStartPod {
		t.Errorf("pod template labels %v", pod.Labels)
	}
	if s := get(t, sj).Status; s.LastScheduleTime != nil || s.ActiveCount != 1 {
		t.Errorf("before the run: lastScheduleTime %v, activeCount %d; want unset and 1", s.LastScheduleTime, s.ActiveCount)
	}
	reconcileAt(t, sj, run.Add(100*time.Millisecond))
	if n := len(jobs(t, ns)); n != 1 {
		t.Errorf("%d jobs at the run's time, want the early one only", n)
	}
	if s := get(t, sj).Status; s.LastScheduleTime == nil || !s.LastScheduleTime.Time.Equal(run) {
		t.Errorf("at the run: lastScheduleTime %v, want %v", s.LastScheduleTime, run)
	}
}

// TestStartLateness: when the run's Job reports a ready pod, its first
// container start is recorded as the run's start, split into phases by
// the pod's conditions (its node read from the API server, as the pod
// waited to be scheduled), among the recent starts.
func TestStartLateness(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "measured", "* * * * *")
	create(t, sj)
	sj = get(t, sj)
	run := firstRun(sj)
	reconcileAt(t, sj, run.Add(100*time.Millisecond))
	job := jobs(t, ns)[0]
	// A node that was there before the pod: its wait is Scheduling.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}
	create(t, node)
	t.Cleanup(func() { _ = env.Live.Delete(env.Ctx, node) })
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-pod", Namespace: ns, Labels: map[string]string{batchv1.ControllerUidLabel: string(job.UID)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = node.Name
	create(t, pod)
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(run.Add(70 * time.Second))},
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(run.Add(71 * time.Second))},
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "busybox", Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(run.Add(73 * time.Second))}}}}
	if err := env.Live.Status().Update(env.Ctx, pod); err != nil {
		t.Fatal(err)
	}
	job.Status.Ready, job.Status.Active = ptr.To[int32](1), 1
	if err := env.Live.Status().Update(env.Ctx, &job); err != nil {
		t.Fatal(err)
	}
	reconcileAt(t, sj, run.Add(75*time.Second))
	status := get(t, sj).Status
	start := status.LastRunStart
	if start == nil || start.Lateness.Duration != 73*time.Second || !start.ScheduledTime.Time.Equal(run) {
		t.Fatalf("lastRunStart %+v, want the run 73s late", start)
	}
	// The Job and the pod were created by this machine's clock, which is
	// before the run's time unless the test began a second before a
	// minute: the phases before scheduling take the rest of 70 s.
	spent := map[v1alpha1.RunPhaseName]time.Duration{}
	for _, p := range start.Phases {
		spent[p.Name] = p.Duration.Duration
	}
	beforeBinding := spent[v1alpha1.PhaseController] + spent[v1alpha1.PhaseConcurrencyGroup] + spent[v1alpha1.PhaseJobController] + spent[v1alpha1.PhaseScheduling]
	if spent[v1alpha1.PhaseScheduling] < 60*time.Second || beforeBinding != 70*time.Second || spent[v1alpha1.PhaseNode] != 0 ||
		spent[v1alpha1.PhasePodSandbox] != time.Second || spent[v1alpha1.PhaseImagePull] != 2*time.Second {
		t.Errorf("phases %+v, want Scheduling about 70s (its node was there before it), PodSandbox 1s, ImagePull 2s", start.Phases)
	}
	if len(status.RecentRunStarts) != 1 || !equality.Semantic.DeepEqual(status.RecentRunStarts[0], *start) {
		t.Errorf("recentRunStarts %+v, want lastRunStart alone", status.RecentRunStarts)
	}
}

// TestRefusedPlaceholdersDoNotHoldBackTheRun: a namespace that refuses
// the placeholders, by a ResourceQuota that allows no pod or by an
// admission policy (the API server's own; policy engines' webhooks answer
// alike). The ScheduledJob says so once (event and CapacityReady naming
// the refusal), the reconcile does not fail (a failure waits for the
// workqueue's backoff, up to 30 s, which could pass the run's time),
// warm-up is tried again within warmup.RefusedRetry, and the run starts at
// its time.
func TestRefusedPlaceholdersDoNotHoldBackTheRun(t *testing.T) {
	refusals := map[string]struct {
		refuse func(t *testing.T, namespace string)
		says   string
	}{
		"a ResourceQuota":     {refuse: env.RefusePods, says: "exceeded quota: no-pods"},
		"an admission policy": {refuse: func(t *testing.T, ns string) { env.RefuseWarmUpByPolicy(t, ns, v1alpha1.WarmUpLabel) }, says: testenv.PolicyMessage},
	}
	for name, refusal := range refusals {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			refusal.refuse(t, ns)
			sj := newWarmUpJob(ns, "refused")
			create(t, sj)
			sj = get(t, sj)
			run := hourRun(sj)
			drainEvents()

			result := reconcileAt(t, sj, run.Add(-10*time.Minute))
			if n := len(warmUpPods(t, ns)); n != 0 {
				t.Fatalf("%d placeholders in a namespace that refuses them", n)
			}
			if result.RequeueAfter <= 0 || result.RequeueAfter > warmup.RefusedRetry {
				t.Errorf("next look in %v, want within %v", result.RequeueAfter, warmup.RefusedRetry)
			}
			checkRefusalReported(t, get(t, sj), refusal.says)
			reconcileAt(t, sj, run)
			if got := jobsOf(t, ns, sj); len(got) != 1 {
				t.Errorf("Jobs at the run's time %v, want the run's", got)
			}
		})
	}
}

// checkRefusalReported: CapacityReady and one WarmUpFailed event name the
// refusal (the second warm-up object is not tried).
func checkRefusalReported(t *testing.T, sj *v1alpha1.ScheduledJob, says string) {
	t.Helper()
	condition := meta.FindStatusCondition(sj.Status.Conditions, v1alpha1.ConditionCapacityReady)
	if condition == nil || condition.Reason != v1alpha1.ReasonWarmUpFailed || !strings.Contains(condition.Message, says) {
		t.Errorf("CapacityReady %+v, want WarmUpFailed naming %q", condition, says)
	}
	events := slices.DeleteFunc(drainEvents(), func(e string) bool { return !strings.Contains(e, "WarmUpFailed") })
	if len(events) != 1 || !strings.Contains(events[0], "the run starts at its time") || !strings.Contains(events[0], says) {
		t.Errorf("WarmUpFailed events %q, want one naming %q", events, says)
	}
}

// TestPlaceholdersPassPodSecurityRestricted: placeholders run as non-root
// without privileges or capabilities, so a namespace that enforces the
// restricted Pod Security level admits them.
func TestPlaceholdersPassPodSecurityRestricted(t *testing.T) {
	ns := newNamespace(t)
	env.EnforcePodSecurity(t, ns, "restricted")
	sj := newWarmUpJob(ns, "restricted")
	create(t, sj)
	sj = get(t, sj)
	drainEvents()
	reconcileAt(t, sj, hourRun(sj).Add(-10*time.Minute))
	if n := len(warmUpPods(t, ns)); n != 2 {
		t.Errorf("%d placeholders in a restricted namespace, want 2; events %q", n, drainEvents())
	}
}

// TestAutoLeadSharedInItsPool: a new ScheduledJob with lead Auto whose
// pods land on the nodes of another that has measured its provisioning
// time starts from that lead, not maxLead, and says whose it is; one on
// other nodes starts from maxLead.
func TestAutoLeadSharedInItsPool(t *testing.T) {
	ns := newNamespace(t)
	auto := func(name, pool string) *v1alpha1.ScheduledJob {
		sj := newWarmUpJob(ns, name)
		sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}, MaxLead: &metav1.Duration{Duration: 20 * time.Minute}}
		sj.Spec.JobTemplate.Spec.Template.Spec.NodeSelector = map[string]string{"pool": pool}
		return sj
	}
	measured, peer, elsewhere := auto("measured", "batch"), auto("peer", "batch"), auto("elsewhere", "gpu")
	for _, sj := range []*v1alpha1.ScheduledJob{measured, peer, elsewhere} {
		create(t, sj)
	}
	run := hourRun(get(t, peer))
	// measured's last warm-up, an hour earlier: 90 s ahead, ready after
	// 60 s, its run on time.
	measured = get(t, measured)
	before := run.Add(-time.Hour)
	measured.Status.WarmUp = &v1alpha1.WarmUpStatus{Strategy: v1alpha1.WarmUpPlaceholder, ScheduledTime: metav1.NewTime(before),
		StartTime: metav1.NewTime(before.Add(-90 * time.Second)), ReadyTime: &metav1.Time{Time: before.Add(-30 * time.Second)}, Pods: 2, ScheduledPods: 2,
		Lead: &v1alpha1.LeadStatus{Lead: metav1.Duration{Duration: 90 * time.Second}, Reason: v1alpha1.LeadLearned, MarginPercent: 150, Provisioning: &metav1.Duration{Duration: time.Minute}}}
	measured.Status.LastRunStart = &v1alpha1.RunStart{ScheduledTime: metav1.NewTime(before), StartTime: metav1.NewTime(before)}
	if err := env.Live.Status().Update(env.Ctx, measured); err != nil {
		t.Fatal(err)
	}
	waitForCache(t, measured)

	// 60 s × (150 % shrunk a tenth: 135 %) = 81 s.
	reconcileAt(t, peer, run.Add(-20*time.Minute))
	reconcileAt(t, elsewhere, run.Add(-20*time.Minute))
	if got := get(t, peer).Status.NextWarmUpTime; got == nil || !got.Time.Equal(run.Add(-81*time.Second)) {
		t.Errorf("peer's nextWarmUpTime %v, want %v (81 s, its pool's lead)", got, run.Add(-81*time.Second))
	}
	if got := get(t, elsewhere).Status.WarmUp; got == nil || got.Lead == nil || got.Lead.Reason != v1alpha1.LeadFirstRun || got.Lead.SharedFrom != "" {
		t.Errorf("elsewhere's warm-up %+v, want its first, maxLead ahead", got)
	}
	reconcileAt(t, peer, run.Add(-81*time.Second))
	lead := get(t, peer).Status.WarmUp.Lead
	if want := ns + "/measured"; lead == nil || lead.Lead.Duration != 81*time.Second || lead.SharedFrom != want {
		t.Errorf("peer's status.warmUp.lead %+v, want 81s shared from %s", lead, want)
	}
}
