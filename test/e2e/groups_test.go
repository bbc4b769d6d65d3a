//go:build e2e

package e2e

import (
	"context"
	"fmt"
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
	w.wg.Go(func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			var list batchv1.JobList
			if err := c.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
				t.Logf("watcher: %v", err)
				continue
			}
			w.sample(list.Items)
		}
	})
	return w
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
