//go:build chaos

// Package chaos runs ScheduledJobs through faults and checks, from the API
// server's audit log, that no run was created twice and none was lost.
//
// In a fresh kwok cluster it starts two `ontime controller` replicas with
// leader election, each restarted a second after it exits (as a Deployment
// would), and N ScheduledJobs on "* * * * *" (Allow, Forbid and Replace in
// turn; every fourth with startingDeadlineSeconds 30; every fifth in
// America/New_York and every fifth in Europe/Amsterdam). For the duration it
// kills the leader with SIGKILL every -kill-every, and kills kube-apiserver
// and etcd with SIGKILL once each, restarting them after -down. Then:
//
//   - duplicates: Job creations that succeeded more than once for one
//     (ScheduledJob, scheduled time), from the audit log (a Job deleted by
//     Replace or history cleanup still left its creation there). Must be 0.
//
//   - lost runs: a scheduled time with no Job although, within the run's
//     window (its starting deadline, at most the minute until the next run
//     supersedes it), a leader held the lease with the API server up for
//     at least -grace. Must be 0. A Job counts as created when the audit
//     log has its creation, or, since a kube-apiserver killed as it
//     completes a create loses that entry (and a create that etcd persisted
//     may still be answered 500), when the Job is there at the end, a later
//     create of it was answered AlreadyExists, or it was deleted.
//
//   - creation skew and leader takeover times.
//
//     make chaos                    # 200 ScheduledJobs, 10 minutes, then TestGracefulHandover
//     go test -tags chaos -v -run '^TestChaos$' ./test/chaos -args -n 60 -duration 3m -kill-every 30s   # make test's short run
//
// It is a Go test behind the build tag chaos, on the shared test framework
// (test/framework): the cluster and the replicas are stopped by the
// test's cleanups, also when it fails.
package chaos

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
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

const (
	cluster   = "ontime-chaos"
	namespace = "chaos"
)

type config struct {
	n         int
	duration  time.Duration
	killEvery time.Duration
	down      time.Duration
	grace     time.Duration
	// standbyGrace is the replicas' --standby-grace (0: only the leader
	// starts runs, as before 2026-11-25).
	standbyGrace time.Duration
	// maxSkew bounds the creation skew's p99 of the runs whose minute saw
	// kube-apiserver answer throughout (0: not checked).
	maxSkew time.Duration
	// terminateBefore, when set, replaces the faults: the leader is
	// stopped with SIGTERM this long before every minute, nothing else.
	terminateBefore time.Duration
}

var cfg config

func init() {
	flag.IntVar(&cfg.n, "n", 200, "ScheduledJobs")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Minute, "how long faults are injected")
	flag.DurationVar(&cfg.killEvery, "kill-every", 20*time.Second, "interval between kills of the leader")
	flag.DurationVar(&cfg.down, "down", 10*time.Second, "how long kube-apiserver and etcd stay down when killed")
	flag.DurationVar(&cfg.grace, "grace", 5*time.Second, "how long a leader with the API server up must have had to create a run before a missing run counts as lost")
	flag.DurationVar(&cfg.standbyGrace, "standby-grace", 500*time.Millisecond, "the replicas' --standby-grace (0: only the leader starts runs)")
	flag.DurationVar(&cfg.maxSkew, "max-skew", 2*time.Second, "the most the creation skew's p99 may be outside the minutes kube-apiserver or etcd is down (0: not checked)")
}

// TestGracefulHandover (issue #21): a leader stopped gracefully, as a
// rolling update or a node drain stops it, costs no run more than 1 s, even
// stopped just before the minute its runs are due, before its successor
// holds the Lease. make chaos runs it after TestChaos:
//
//	go test -tags chaos -v -run '^TestGracefulHandover$' ./test/chaos -args -n 200 -duration 5m
func TestGracefulHandover(t *testing.T) {
	graceful := cfg
	graceful.terminateBefore = 300 * time.Millisecond
	r := run(t, graceful)
	fmt.Println(r.table(graceful))
	if r.duplicates > 0 || r.lost > 0 || r.created < r.due {
		t.Errorf("%d of %d runs created, %d duplicated, %d lost; see %s", r.created, r.due, r.duplicates, r.lost, r.work)
	}
	if worst := framework.PercentileValue(r.skews, 100); worst > time.Second {
		t.Errorf("the latest run was created %s after its time, want ≤ 1s; see %s", worst, r.work)
	}
}

// restartDelay is how long an exited replica stays down before it is
// started again, as a Deployment's kubelet restarts a container.
const restartDelay = time.Second

func TestChaos(t *testing.T) {
	r := run(t, cfg)
	fmt.Println(r.table(cfg))
	if r.duplicates > 0 || r.lost > 0 {
		t.Errorf("%d duplicated and %d lost runs; see %s", r.duplicates, r.lost, r.work)
	}
	if p99 := framework.PercentileValue(r.healthySkews, 99); cfg.maxSkew > 0 && p99 > cfg.maxSkew {
		t.Errorf("creation skew p99 %s outside the minutes kube-apiserver or etcd was down, want ≤ %s; see %s", p99, cfg.maxSkew, r.work)
	}
}

// run sets the cluster up, injects the faults and reads the results.
func run(t *testing.T, cfg config) *result {
	framework.Progress("starting a fresh cluster %s", cluster)
	cl := framework.StartCluster(t, cluster, framework.ClusterOptions{Nodes: 3, Env: []string{"ONTIME_KWOK_STAGES=fast"}, AuditPolicy: "test/chaos/audit-policy.yaml"})
	work, kubeconfig, clusterDir := cl.Work, cl.Kubeconfig, framework.ClusterDir(cluster)
	framework.Progress("work directory %s", work)
	// The CRD and the leader-election namespace; no webhook (two replicas
	// on one host cannot both serve it).
	cl.Kubectl(t, "apply", "--server-side", "-k", "config/crd")
	cl.Kubectl(t, "apply", "--server-side", "-f", "config/dev/namespace.yaml")
	binary := framework.BuildOntime(t, work)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var replicas []*framework.Controller
	for _, name := range []string{"a", "b"} {
		replica := framework.NewController(t, framework.ControllerOptions{Name: name, Binary: binary, Kubeconfig: kubeconfig, Work: work, LeaderElect: true,
			Extra: []string{"--standby-grace", cfg.standbyGrace.String()}})
		replicas = append(replicas, replica)
		t.Cleanup(replica.Stop)
		go replica.Supervise(ctx, restartDelay, func(what string, err error) {
			framework.Progress("replica %s %s (%v); restarting it in %s", name, what, err, restartDelay)
		})
	}
	c := framework.NewClient(t, kubeconfig)
	createScheduledJobs(ctx, t, c, cfg.n)

	obs := newObserver(t, replicas, kubeconfig)
	go obs.poll(ctx)
	// Runs are measured from the first whole minute after the setup to the
	// last one before the faults stop.
	start := time.Now()
	from := start.Truncate(time.Minute).Add(time.Minute)
	to := start.Add(cfg.duration).Truncate(time.Minute).Add(time.Minute) // exclusive
	framework.Progress("%d ScheduledJobs; faults until %s, measuring the runs from %s to %s", cfg.n,
		start.Add(cfg.duration).Format(time.TimeOnly), from.Format(time.TimeOnly), to.Add(-time.Minute).Format(time.TimeOnly))
	f := newFaults(t, obs, clusterDir)
	supervised := make(chan struct{})
	go func() {
		defer close(supervised)
		f.superviseComponents(ctx, t)
	}()
	f.inject(ctx, t, cfg, start)
	// Let the last runs of the window be created, without faults.
	until := to.Add(75 * time.Second)
	framework.Progress("faults over; results at %s", until.Format(time.TimeOnly))
	time.Sleep(time.Until(until))
	createdAt, finished := jobsAtEnd(t, c)
	cancel()
	<-supervised // before the cluster is deleted
	for _, r := range replicas {
		r.Stop()
	}
	// Keep the audit log with the replicas' logs: the cluster goes.
	auditLog := filepath.Join(work, "audit.log")
	framework.Command(t, nil, "cp", filepath.Join(clusterDir, "logs", "audit.log"), auditLog)
	return analyze(t, auditLog, cfg, from, to, obs, f, jobsSeen{createdAt: createdAt, finished: finished}, work)
}

// createScheduledJobs creates n ScheduledJobs with a mix of policies,
// deadlines and zones.
func createScheduledJobs(ctx context.Context, t *testing.T, c client.Client, n int) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	policies := []v1alpha1.ConcurrencyPolicy{v1alpha1.AllowConcurrent, v1alpha1.ForbidConcurrent, v1alpha1.ReplaceConcurrent}
	for i := range n {
		sj := &v1alpha1.ScheduledJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("job-%04d", i)},
			Spec: v1alpha1.ScheduledJobSpec{
				Schedule:          "* * * * *",
				ConcurrencyPolicy: policies[i%3],
				// Keep every finished Job, so that the analysis can see when
				// the run before a Forbid run finished.
				SuccessfulJobsHistoryLimit: ptr.To[int32](30),
				FailedJobsHistoryLimit:     ptr.To[int32](30),
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
				}}}},
			},
		}
		if i%4 == 1 {
			sj.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
		}
		switch i % 5 {
		case 2:
			sj.Spec.TimeZone = ptr.To("America/New_York")
		case 3:
			sj.Spec.TimeZone = ptr.To("Europe/Amsterdam")
		}
		if err := c.Create(ctx, sj); err != nil {
			t.Fatalf("creating %s: %v", sj.Name, err)
		}
	}
}

// window is how long after its scheduled time a run may still start: its
// starting deadline, and at most until the next run, which supersedes it.
func window(i int) time.Duration {
	if i%4 == 1 {
		return 30 * time.Second
	}
	return time.Minute
}

// auditedJobs is what the audit log says of the namespace's Jobs.
type auditedJobs struct {
	// created are, per Job name, the times its creation succeeded (201).
	created map[string][]time.Time
	// existed is, per Job name, the first time the API server showed the
	// Job existed without a logged creation: a create answered 409
	// AlreadyExists, or a read, update or delete of it that succeeded.
	existed map[string]time.Time
	// byControllers are the times of ontime's requests, of any kind
	// (its user agent is the binary's name).
	byControllers *[]time.Time
}

// readAudit reads the Job requests of the audit log.
func readAudit(t *testing.T, auditLog string) auditedJobs {
	a := auditedJobs{created: map[string][]time.Time{}, existed: map[string]time.Time{}, byControllers: &[]time.Time{}}
	framework.ReadAudit(t, auditLog, a.add)
	return a
}

// add records one audit event, if it is about a Job of the namespace.
func (a auditedJobs) add(e framework.AuditEvent) {
	if strings.HasPrefix(e.UserAgent, "ontime/") {
		*a.byControllers = append(*a.byControllers, e.StageTimestamp)
	}
	a.addJob(e)
}

// addJob records an audit event about a Job of the namespace.
func (a auditedJobs) addJob(e framework.AuditEvent) {
	if e.ObjectRef == nil || e.ObjectRef.Resource != "jobs" || e.ObjectRef.Namespace != namespace || e.ObjectRef.Name == "" || e.ResponseStatus == nil {
		return
	}
	name, code := e.ObjectRef.Name, e.ResponseStatus.Code
	switch {
	case e.Verb == "create" && code == http.StatusCreated:
		a.created[name] = append(a.created[name], e.StageTimestamp)
	case (e.Verb == "create" && code == http.StatusConflict) || (e.Verb != "create" && code >= 200 && code < 300):
		if first, ok := a.existed[name]; !ok || e.StageTimestamp.Before(first) {
			a.existed[name] = e.StageTimestamp
		}
	}
}

type result struct {
	work                     string
	due, created, duplicates int
	lost, notStarted         int
	heldByForbid             int
	skews, takeovers         []time.Duration
	// healthySkews are the skews of the runs whose minute saw the API
	// server answer throughout, from when each could start (a Forbid run:
	// once the run before it finished).
	healthySkews []time.Duration
	// requests are the controllers' API requests in the measured minutes.
	requests                  int
	kills, apiserver, etcd    int
	lostExamples, duplicateEx []string
	// unlogged are created runs whose creation is missing from the audit
	// log: kube-apiserver was killed, or etcd failed, as it completed.
	unlogged []string
	// startedLate are Forbid runs not started whose previous run finished
	// within their window, with no leader working from then.
	startedLate []string
}

// jobsAtEnd reads when each Job in the namespace was created and when it
// finished (zero: not).
func jobsAtEnd(t *testing.T, c client.Client) (createdAt, finished map[string]time.Time) {
	var jobs batchv1.JobList
	if err := c.List(context.Background(), &jobs, client.InNamespace(namespace)); err != nil {
		t.Fatalf("listing Jobs: %v", err)
	}
	createdAt, finished = map[string]time.Time{}, map[string]time.Time{}
	for _, job := range jobs.Items {
		createdAt[job.Name] = job.CreationTimestamp.Time
		var at time.Time
		if condition, done := v1alpha1.JobFinished(&job); done {
			for _, cond := range job.Status.Conditions {
				if cond.Type == condition {
					at = cond.LastTransitionTime.Time
				}
			}
		}
		finished[job.Name] = at
	}
	return createdAt, finished
}

// forbidStart returns when a Forbid ScheduledJob's run at t could start:
// at t, or when the run before it finished, if later. held reports that
// the run before it had not finished within the run's window.
func forbidStart(name string, t time.Time, created map[string][]time.Time, finished map[string]time.Time, window, grace time.Duration) (start time.Time, held bool) {
	for prev := t.Add(-time.Minute); prev.After(t.Add(-time.Hour)); prev = prev.Add(-time.Minute) {
		jobName := fmt.Sprintf("%s-%d", name, prev.Unix()/60)
		if len(created[jobName]) == 0 {
			continue
		}
		done, ok := finished[jobName]
		if !ok || done.IsZero() || !done.Before(t.Add(window-grace)) {
			return t, true
		}
		return later(t, done), false
	}
	return t, false
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// jobsSeen is what the API server held at the end.
type jobsSeen struct{ createdAt, finished map[string]time.Time }

// creations merges the audit log and the Jobs left at the end: per Job
// name, the times its creation succeeded, and, for a Job whose creation
// the audit log lacks but which existed (kube-apiserver was killed before
// it logged the creation, or etcd failed after persisting it and the
// create was answered 500), its creation time: its creationTimestamp if it
// is still there, else the first time the API server showed it existed.
func creations(audit auditedJobs, seen jobsSeen) (created map[string][]time.Time, unlogged map[string]bool) {
	created, unlogged = maps.Clone(audit.created), map[string]bool{}
	for name, at := range audit.existed {
		if len(created[name]) == 0 {
			created[name], unlogged[name] = []time.Time{at}, true
		}
	}
	for name, at := range seen.createdAt {
		if len(created[name]) == 0 || unlogged[name] {
			created[name], unlogged[name] = []time.Time{at}, true
		}
	}
	return created, unlogged
}

// notStartedRun classifies a run without a Job, due at t and startable
// from start: held by Forbid, lost (a leader worked from start within its
// window), or not started for want of one.
func (r *result) notStartedRun(jobName string, t, start time.Time, held, leaderWorked bool) {
	r.notStarted++
	example := fmt.Sprintf("%s (run at %s)", jobName, t.Format(time.TimeOnly))
	if start.After(t) {
		example += ", startable from " + start.Format("15:04:05.000") + " when the run before it finished"
	}
	switch {
	case held:
		r.heldByForbid++
	case leaderWorked:
		r.lost++
		r.lostExamples = append(r.lostExamples, example)
	case start.After(t):
		r.startedLate = append(r.startedLate, example+"; no leader worked from then within its window")
	}
}

func analyze(t *testing.T, auditLog string, cfg config, from, to time.Time, obs *observer, f *faults, seen jobsSeen, work string) *result {
	audit := readAudit(t, auditLog)
	created, unlogged := creations(audit, seen)
	r := &result{work: work, kills: len(f.kills), apiserver: f.apiserverRestarts, etcd: f.etcdRestarts, takeovers: obs.takeovers(f.kills)}
	for _, name := range components {
		if n := f.restarts[name]; n > 0 {
			framework.Progress("%s exited and was started again %d times", name, n)
		}
	}
	for i := range cfg.n {
		name := fmt.Sprintf("job-%04d", i)
		for t := from; t.Before(to); t = t.Add(time.Minute) {
			r.due++
			jobName := fmt.Sprintf("%s-%d", name, t.Unix()/60)
			times := created[jobName]
			switch {
			case len(times) > 1:
				r.duplicates++
				r.duplicateEx = append(r.duplicateEx, fmt.Sprintf("%s created %d times", jobName, len(times)))
			case len(times) == 0:
				// A Forbid run can start only once the run before it has
				// finished: a leader must work after that, in the window.
				start, held := t, false
				if i%3 == 1 {
					start, held = forbidStart(name, t, created, seen.finished, window(i), cfg.grace)
				}
				r.notStartedRun(jobName, t, start, held, obs.workingFor(start, t.Add(window(i)), cfg.grace))
				continue
			}
			if unlogged[jobName] {
				r.unlogged = append(r.unlogged, fmt.Sprintf("%s (run at %s): created by %s, not in the audit log", jobName, t.Format(time.TimeOnly), times[0].Format("15:04:05.000")))
			}
			r.created++
			r.skews = append(r.skews, times[0].Sub(t))
			if !obs.apiDownDuring(t, t.Add(time.Minute)) {
				// A Forbid run can start only once the run before it
				// finished: its skew counts from then (the Job's finish
				// is stamped in whole seconds, down, so this errs late).
				startable := t
				if i%3 == 1 {
					startable, _ = forbidStart(name, t, created, seen.finished, window(i), cfg.grace)
				}
				r.healthySkews = append(r.healthySkews, times[0].Sub(startable))
			}
		}
	}
	r.requests = countWithin(*audit.byControllers, from, to)
	perMinute(created, cfg.n, from, to)
	slices.Sort(r.skews)
	slices.Sort(r.healthySkews)
	slices.Sort(r.takeovers)
	for _, group := range []struct {
		header string
		lines  []string
	}{
		{"duplicated runs:", r.duplicateEx},
		{"lost runs:", r.lostExamples},
		{fmt.Sprintf("%d created runs are missing from the audit log, their Jobs found otherwise:", len(r.unlogged)), r.unlogged},
		{fmt.Sprintf("%d Forbid runs not started: the run before finished in their window, no leader worked after:", len(r.startedLate)), r.startedLate},
	} {
		if len(group.lines) == 0 {
			continue
		}
		framework.Progress("%s", group.header)
		for _, line := range group.lines[:min(len(group.lines), 20)] {
			framework.Progress("  %s", line)
		}
	}
	obs.dump(filepath.Join(work, "timeline.txt"))
	return r
}

// countWithin counts the times from from to to.
func countWithin(times []time.Time, from, to time.Time) int {
	n := 0
	for _, at := range times {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return n
}

// perMinute prints, for each scheduled minute, how many runs were created
// and how late, to see which fault a late or missing run followed.
func perMinute(created map[string][]time.Time, n int, from, to time.Time) {
	for t := from; t.Before(to); t = t.Add(time.Minute) {
		var skews []time.Duration
		for i := range n {
			if times := created[fmt.Sprintf("job-%04d-%d", i, t.Unix()/60)]; len(times) > 0 {
				skews = append(skews, times[0].Sub(t))
			}
		}
		slices.Sort(skews)
		framework.Progress("runs at %s: %d of %d created, skew p50 %s max %s", t.Format(time.TimeOnly), len(skews), n,
			framework.Percentile(skews, 50), framework.Percentile(skews, 100))
	}
}

func (r *result) table(cfg config) string {
	var b strings.Builder
	if cfg.terminateBefore > 0 {
		fmt.Fprintf(&b, "%d ScheduledJobs on \"* * * * *\" for %s: the leader stopped with SIGTERM %s before the minute, %d times.\n\n",
			cfg.n, cfg.duration, cfg.terminateBefore, r.kills)
	} else {
		fmt.Fprintf(&b, "%d ScheduledJobs on \"* * * * *\" for %s: the leader killed %d times (every %s), kube-apiserver killed %d and etcd %d times (down %s each).\n\n",
			cfg.n, cfg.duration, r.kills, cfg.killEvery, r.apiserver, r.etcd, cfg.down)
	}
	b.WriteString("| runs due | created | duplicated | lost | not started: no leader in their window | held by Forbid | creation skew p50 | p99 | max | p99 outside API outages, from startable | leader takeover p50 | max | controllers' API requests per run |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %.1f |", r.due, r.created, r.duplicates, r.lost, r.notStarted-r.lost-r.heldByForbid, r.heldByForbid,
		framework.Percentile(r.skews, 50), framework.Percentile(r.skews, 99), framework.Percentile(r.skews, 100), framework.Percentile(r.healthySkews, 99),
		framework.Percentile(r.takeovers, 50), framework.Percentile(r.takeovers, 100), float64(r.requests)/float64(max(r.due, 1)))
	return b.String()
}
