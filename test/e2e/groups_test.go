//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

// TestConcurrencyGroups runs a ConcurrencyGroup of 2 shared by three
// ScheduledJobs and two plain CronJobs (annotated), every minute, runs of
// 50 s, starting deadline 100 s: five runs a minute for two slots, so runs
// wait and some are missed. Two replicas run the group's controller; the
// one not serving the Job webhook is killed 90 s in. A watcher reading the
// group's Jobs every 200 ms must never see more than 2 running; every run
// it saw either ran or was reported missed (or still waits, within its
// deadline, at the end); the CronJobs' Jobs were made members by the
// webhook.
func TestConcurrencyGroups(t *testing.T) {
	t.Parallel()
	binary := framework.SharedOntime(t)
	cluster := framework.StartCluster(t, "ontime-groups", framework.ClusterOptions{Nodes: 2})
	cluster.Kubectl(t, "apply", "--server-side", "-k", "config/dev")
	c := framework.NewClient(t, cluster.Kubeconfig)
	ctx := context.Background()
	waitForCRD(t, c)
	replica := func(name string, webhook bool) *framework.Controller {
		return framework.StartController(t, framework.ControllerOptions{Name: name, Binary: binary, Kubeconfig: cluster.Kubeconfig,
			Work: cluster.Work, LeaderElect: true, Webhook: webhook})
	}
	serving, other := replica("groups-webhook", true), replica("groups-other", false)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	group := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "shared"}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 2}}
	if err := c.Create(ctx, group); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 2*time.Second)))
	createGroupMembers(t, c)
	firstRun := time.Now().Truncate(time.Minute).Add(time.Minute)
	w := watchGroup(t, c, "shared")
	t.Run("a CronJob's bad annotation is refused at admission", func(t *testing.T) { checkCronJobAnnotationRefused(t, c) })

	time.Sleep(time.Until(firstRun.Add(90 * time.Second)))
	t.Logf("killing %s (the other replica keeps deciding)", other.Name)
	other.Kill()
	end := firstRun.Add(4*time.Minute + 10*time.Second)
	time.Sleep(time.Until(end))
	w.stop()

	t.Run("never over the limit", func(t *testing.T) {
		if w.samples < 500 || w.most > 2 {
			t.Errorf("%d samples, at most %d running at once (maxActive 2): %s", w.samples, w.most, w.worst)
		}
		t.Logf("%d samples, at most %d running at once", w.samples, w.most)
	})
	t.Run("every run ran or was missed", func(t *testing.T) { checkGroupRuns(t, c, w, end) })
	t.Run("the CronJobs' Jobs joined", func(t *testing.T) {
		if len(w.unjoined) > 0 {
			t.Errorf("CronJobs' Jobs without the group's label: %v", w.unjoined)
		}
		for name, job := range w.seen {
			if owner := metav1.GetControllerOf(job); owner != nil && owner.Kind == "CronJob" && job.Annotations[v1alpha1.StartByAnnotation] == "" {
				t.Errorf("%s, a CronJob's, has no start-by: the webhook did not make it a member", name)
			}
		}
	})
	t.Run("status", func(t *testing.T) {
		got := &v1alpha1.ConcurrencyGroup{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(group), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Admitted < 6 || got.Status.ActiveCount > 2 {
			t.Errorf("status %+v: want at least 6 admitted, at most 2 active", got.Status)
		}
		if n, err := serving.MetricSum("ontime_concurrency_group_wait_seconds_count"); err != nil || n < 1 {
			t.Errorf("the serving replica observed %v waits (%v)", n, err)
		}
	})
}

// createGroupMembers creates the group's three ScheduledJobs (one of
// higher priority) and two annotated CronJobs.
func createGroupMembers(t *testing.T, c client.Client) {
	t.Helper()
	template := pair{podSeconds: 50}.template()
	for i, priority := range []int32{0, 0, 10} {
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprint("member-sj-", i)}, Spec: v1alpha1.ScheduledJobSpec{
			Schedule: "* * * * *", StartingDeadlineSeconds: ptr.To[int64](100), JobTemplate: template,
			ConcurrencyGroup: &v1alpha1.ConcurrencyGroupRef{Name: "shared", Priority: priority}}}
		if err := c.Create(context.Background(), sj); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprint("member-cj-", i),
			Annotations: map[string]string{v1alpha1.GroupLabel: "shared"}},
			Spec: batchv1.CronJobSpec{Schedule: "* * * * *", StartingDeadlineSeconds: ptr.To[int64](100), JobTemplate: template}}
		if err := c.Create(context.Background(), cj); err != nil {
			t.Fatal(err)
		}
	}
}

// checkCronJobAnnotationRefused: make dev's CronJob webhook (config/dev,
// with its matchConditions) refuses a CronJob that joins both kinds of
// group, naming the annotation; the Job webhook would otherwise refuse its
// every run.
func checkCronJobAnnotationRefused(t *testing.T, c client.Client) {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "two-groups",
		Annotations: map[string]string{v1alpha1.GroupLabel: "shared", v1alpha1.ClusterGroupLabel: "licenses"}},
		Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: pair{podSeconds: 50}.template()}}
	err := c.Create(context.Background(), cj, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), "metadata.annotations[ontime.dev/cluster-concurrency-group]") || !strings.Contains(err.Error(), "a CronJob joins one group") {
		t.Errorf("a CronJob in two groups: want the CronJob webhook's refusal naming the annotation, got %v", err)
	}
}

// groupWatch samples a group's Jobs every 200 ms.
type groupWatch struct {
	mu      sync.Mutex
	samples int
	most    int
	worst   string
	// seen are the Jobs of the group, as last seen; ran, those seen
	// released (not suspended) at least once.
	seen map[string]*batchv1.Job
	ran  map[string]bool
	// unjoined are CronJobs' Jobs seen without the group's label.
	unjoined map[string]bool
	done     chan struct{}
	wg       sync.WaitGroup
	// group is the group's name.
	group string
}

func watchGroup(t *testing.T, c client.Client, group string) *groupWatch {
	w := &groupWatch{seen: map[string]*batchv1.Job{}, ran: map[string]bool{}, unjoined: map[string]bool{}, group: group, done: make(chan struct{})}
	sampleEvery(&w.wg, w.done, func() {
		var list batchv1.JobList
		if err := c.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
			t.Logf("watcher: %v", err)
			return
		}
		w.sample(list.Items)
	})
	return w
}

// sampleEvery calls sample every 200 ms, in a goroutine of wg, until done
// is closed.
func sampleEvery(wg *sync.WaitGroup, done <-chan struct{}, sample func()) {
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	})
}

func (w *groupWatch) sample(jobs []batchv1.Job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples++
	var running []string
	for i := range jobs {
		job := &jobs[i]
		if job.Labels[v1alpha1.GroupLabel] != w.group {
			if owner := metav1.GetControllerOf(job); owner != nil && owner.Kind == "CronJob" {
				w.unjoined[job.Name] = true
			}
			continue
		}
		w.seen[job.Name] = job
		if job.Spec.Suspend != nil && *job.Spec.Suspend {
			continue
		}
		w.ran[job.Name] = true
		if _, done := v1alpha1.JobFinished(job); !done {
			running = append(running, job.Name)
		}
	}
	if len(running) > w.most {
		w.most, w.worst = len(running), fmt.Sprintf("%v at %s", running, time.Now().Format(time.TimeOnly))
	}
}

func (w *groupWatch) stop() {
	close(w.done)
	w.wg.Wait()
}

// checkGroupRuns: each run the watcher saw ran, or was reported missed (a
// MissedWaitingForGroup event names its Job), or still waits at the end
// within its start-by; and the group both admitted runs that waited and
// missed some (five runs a minute for two slots of 50 s).
func checkGroupRuns(t *testing.T, c client.Client, w *groupWatch, end time.Time) {
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	missed, admitted := map[string]bool{}, 0
	for _, e := range events.Items {
		switch e.Reason {
		case v1alpha1.ReasonMissedInGroup:
			for name := range w.seen {
				if containsWord(e.Message, name) {
					missed[name] = true
				}
			}
		case v1alpha1.ReasonAdmitted:
			admitted++
		}
	}
	for name, job := range w.seen {
		startBy, _ := time.Parse(time.RFC3339, job.Annotations[v1alpha1.StartByAnnotation])
		switch {
		case w.ran[name] && missed[name]:
			t.Errorf("%s ran and was reported missed", name)
		case w.ran[name] || missed[name]:
		case startBy.After(end.Add(-5 * time.Second)):
			// Still waiting at the end, within its deadline.
		default:
			t.Errorf("%s (start-by %s) neither ran nor was reported missed", name, startBy.Format(time.TimeOnly))
		}
	}
	if admitted == 0 || len(missed) == 0 {
		t.Errorf("%d AdmittedByGroup events, %d runs missed: five runs a minute for two slots should give both", admitted, len(missed))
	}
	t.Logf("%d runs seen, %d ran, %d missed, %d admitted after waiting", len(w.seen), len(w.ran), len(missed), admitted)
}

// containsWord reports whether name appears in message as a whole word.
func containsWord(message, name string) bool {
	for i := 0; i+len(name) <= len(message); i++ {
		if message[i:i+len(name)] == name && (i == 0 || message[i-1] == ' ') && (i+len(name) == len(message) || message[i+len(name)] == ' ') {
			return true
		}
	}
	return false
}

// TestGroupCountsRunsMadeWhileOntimeIsDown is issue #44 measured from
// outside: a ConcurrencyGroup of 1 shared by a ScheduledJob and an
// annotated CronJob due at the same minute T. Both replicas are killed at
// T−10 s and started again at T+6 s, so kube-controller-manager creates the
// CronJob's Job at T past the Job webhook (unsuspended, unlabeled,
// running for 40 s). A watcher reading the members' Jobs every 200 ms
// must never see both running: the ScheduledJob's run waits for the
// CronJob's and starts after it finished (its deadline, 100 s, leaves
// room), and the group's status counts the CronJob's run meanwhile.
func TestGroupCountsRunsMadeWhileOntimeIsDown(t *testing.T) {
	t.Parallel()
	binary := framework.SharedOntime(t)
	cluster := framework.StartCluster(t, "ontime-bypass", framework.ClusterOptions{Nodes: 1})
	cluster.Kubectl(t, "apply", "--server-side", "-k", "config/dev")
	c := framework.NewClient(t, cluster.Kubeconfig)
	waitForCRD(t, c)
	replicas := []*framework.Controller{}
	for i, webhook := range []bool{true, false} {
		replicas = append(replicas, framework.StartController(t, framework.ControllerOptions{Name: fmt.Sprint("bypass-", i), Binary: binary,
			Kubeconfig: cluster.Kubeconfig, Work: cluster.Work, LeaderElect: true, Webhook: webhook}))
	}
	for _, r := range replicas {
		r.WaitReady(t, time.Minute)
	}
	due := createMembersOfOne(t, c)
	w := watchMembers(t, c)
	time.Sleep(time.Until(due.Add(-10 * time.Second)))
	t.Logf("killing both replicas at T-10s (T = %s)", due.Format(time.TimeOnly))
	for _, r := range replicas {
		r.Kill()
	}
	time.Sleep(time.Until(due.Add(6 * time.Second)))
	t.Log("starting both replicas again at T+6s")
	for _, r := range replicas {
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
	}
	framework.Eventually(t, 2*time.Minute, "the ScheduledJob's run to run or be missed", func() bool {
		return w.done("sj-") || w.missed(t, c, "sj-")
	})
	w.stop()

	cronJobRun, sjRun := w.first("cj-"), w.first("sj-")
	if cronJobRun == nil || sjRun == nil {
		t.Fatalf("runs seen: CronJob's %v, ScheduledJob's %v", cronJobRun != nil, sjRun != nil)
	}
	if _, _, labeled := v1alpha1.GroupOf(cronJobRun); labeled {
		t.Errorf("%s carries the group's label: the webhook saw it, the case was not made", cronJobRun.Name)
	}
	if w.most > 1 {
		t.Errorf("%d samples, %d members' runs running at once (maxActive 1): %s", w.samples, w.most, w.worst)
	}
	t.Logf("%d samples, at most %d running; %s ran %s–%s; %s first seen running %s",
		w.samples, w.most, cronJobRun.Name, offset(w.started[cronJobRun.Name], due), offset(w.finished[cronJobRun.Name], due), sjRun.Name, offset(w.started[sjRun.Name], due))
	if w.countedBypass == 0 {
		t.Errorf("the group's status never counted the CronJob's run while the ScheduledJob's waited")
	}
	if w.done("sj-") {
		checkLateStartPhases(t, c, due)
	}
}

// checkLateStartPhases: the ScheduledJob's run, created only when the
// replicas came back (T+6 s) and then held by the group while the
// CronJob's 40 s run ran, has its lateness split between the controller
// and the group, adding up.
func checkLateStartPhases(t *testing.T, c client.Client, due time.Time) {
	t.Helper()
	var start *v1alpha1.RunStart
	framework.Eventually(t, time.Minute, "the ScheduledJob's run's start to be measured", func() bool {
		sj := &v1alpha1.ScheduledJob{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "sj"}, sj); err != nil {
			t.Fatal(err)
		}
		start = sj.Status.LastRunStart
		return start != nil && start.ScheduledTime.Time.Equal(due)
	})
	controller, group := start.Spent(v1alpha1.PhaseController), start.Spent(v1alpha1.PhaseConcurrencyGroup)
	t.Logf("the ScheduledJob's run started %s late: %v", start.Lateness.Duration, start.Phases)
	if sum := start.PhasesTotal(); sum != start.Lateness.Duration {
		t.Errorf("phases %v add up to %s, lateness %s", start.Phases, sum, start.Lateness.Duration)
	}
	if controller < 5*time.Second || group < 20*time.Second {
		t.Errorf("phases %v: want Controller ≥ 5s (the replicas were down until T+6s) and ConcurrencyGroup ≥ 20s (the CronJob's 40 s run held the group)", start.Phases)
	}
	checkLateAgainstObjective(t, c, due)
}

// checkLateAgainstObjective: the run, late beyond its start objective's
// 30 s, is counted late in status.startObjective, and its LateStart event
// names the group as where most of its time went.
func checkLateAgainstObjective(t *testing.T, c client.Client, due time.Time) {
	t.Helper()
	sj := &v1alpha1.ScheduledJob{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "sj"}, sj); err != nil {
		t.Fatal(err)
	}
	if o := sj.Status.StartObjective; o == nil || o.Runs != 1 || o.OnTime != 0 || o.Met {
		t.Errorf("status.startObjective %+v, want its one run counted late", o)
	}
	framework.Eventually(t, 30*time.Second, "a LateStart event naming the group", func() bool {
		var events corev1.EventList
		if err := c.List(context.Background(), &events, client.InNamespace(namespace), client.MatchingFields{"involvedObject.name": "sj"}); err != nil {
			return false
		}
		_, ok := eventAbout(events.Items, v1alpha1.ReasonLateStart, due)
		return ok && slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.Reason == v1alpha1.ReasonLateStart && strings.Contains(e.Message, "in phase ConcurrencyGroup")
		})
	})
}

// createMembersOfOne creates the group "one" of maxActive 1, a
// ScheduledJob "sj" and an annotated CronJob "cj" due once, at the same
// minute (returned): the first at least 40 s away, for the members to be
// created and seen before the replicas go.
func createMembersOfOne(t *testing.T, c client.Client) time.Time {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	group := &v1alpha1.ConcurrencyGroup{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "one"}, Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}}
	due := time.Now().Add(40 * time.Second).Truncate(time.Minute).Add(time.Minute)
	schedule := fmt.Sprintf("%d %d * * *", due.UTC().Minute(), due.UTC().Hour())
	template := pair{podSeconds: 40}.template()
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "sj"}, Spec: v1alpha1.ScheduledJobSpec{
		Schedule: schedule, TimeZone: ptr.To("Etc/UTC"), StartingDeadlineSeconds: ptr.To[int64](100), JobTemplate: template,
		ConcurrencyGroup: &v1alpha1.ConcurrencyGroupRef{Name: group.Name},
		StartObjective:   &v1alpha1.StartObjective{Within: metav1.Duration{Duration: 30 * time.Second}, Percent: "99"}}}
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "cj", Annotations: map[string]string{v1alpha1.GroupLabel: group.Name}},
		Spec: batchv1.CronJobSpec{Schedule: schedule, TimeZone: ptr.To("Etc/UTC"), StartingDeadlineSeconds: ptr.To[int64](100), JobTemplate: template}}
	for _, obj := range []client.Object{group, sj, cj} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return due
}

// offset is at relative to due, for the log ("T+41.2s"); "never" for zero.
func offset(at, due time.Time) string {
	if at.IsZero() {
		return "never"
	}
	return fmt.Sprintf("T%+.1fs", at.Sub(due).Seconds())
}

// memberWatch samples the namespace's Jobs, and the group "one", every
// 200 ms.
type memberWatch struct {
	mu      sync.Mutex
	samples int
	most    int
	worst   string
	// jobs are the Jobs as last seen; started and finished when each was
	// first seen running and finished.
	jobs              map[string]*batchv1.Job
	started, finished map[string]time.Time
	// countedBypass counts the samples in which the group's activeCount
	// was 1 while the CronJob's run ran and the ScheduledJob's waited.
	countedBypass int
	stopped       chan struct{}
	wg            sync.WaitGroup
}

func watchMembers(t *testing.T, c client.Client) *memberWatch {
	w := &memberWatch{jobs: map[string]*batchv1.Job{}, started: map[string]time.Time{}, finished: map[string]time.Time{}, stopped: make(chan struct{})}
	sampleEvery(&w.wg, w.stopped, func() {
		var list batchv1.JobList
		group := &v1alpha1.ConcurrencyGroup{}
		if err := c.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
			t.Logf("watcher: %v", err)
			return
		}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "one"}, group); err != nil {
			t.Logf("watcher: %v", err)
			return
		}
		w.sample(list.Items, group.Status.ActiveCount)
	})
	return w
}

func (w *memberWatch) sample(jobs []batchv1.Job, activeCount int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples++
	now := time.Now()
	var running []string
	sjWaits := false
	for i := range jobs {
		job := &jobs[i]
		w.jobs[job.Name] = job
		_, done := v1alpha1.JobFinished(job)
		switch {
		case done:
			if w.finished[job.Name].IsZero() {
				w.finished[job.Name] = now
			}
		case ptr.Deref(job.Spec.Suspend, false):
			sjWaits = sjWaits || strings.HasPrefix(job.Name, "sj-")
		default:
			running = append(running, job.Name)
			if w.started[job.Name].IsZero() {
				w.started[job.Name] = now
			}
		}
	}
	if len(running) > w.most {
		w.most, w.worst = len(running), fmt.Sprintf("%v at %s", running, now.Format(time.TimeOnly))
	}
	if sjWaits && len(running) == 1 && strings.HasPrefix(running[0], "cj-") && activeCount == 1 {
		w.countedBypass++
	}
}

// first is the Job named with prefix, as last seen (nil: none).
func (w *memberWatch) first(prefix string) *batchv1.Job {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, job := range w.jobs {
		if strings.HasPrefix(name, prefix) {
			return job
		}
	}
	return nil
}

// done reports whether the run named with prefix has finished.
func (w *memberWatch) done(prefix string) bool {
	job := w.first(prefix)
	if job == nil {
		return false
	}
	_, finished := v1alpha1.JobFinished(job)
	return finished
}

// missed reports whether the run named with prefix was reported missed.
func (w *memberWatch) missed(t *testing.T, c client.Client, prefix string) bool {
	job := w.first(prefix)
	if job == nil {
		return false
	}
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(namespace)); err != nil {
		t.Logf("events: %v", err)
		return false
	}
	for _, e := range events.Items {
		if e.Reason == v1alpha1.ReasonMissedInGroup && containsWord(e.Message, job.Name) {
			return true
		}
	}
	return false
}

func (w *memberWatch) stop() {
	close(w.stopped)
	w.wg.Wait()
}
