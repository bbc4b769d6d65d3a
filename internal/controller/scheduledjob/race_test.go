package scheduledjob

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// TestLeaderAndStandbyRace interleaves, at random, the leader's reconciles
// and a standby's (issue #21: every replica acts on every ScheduledJob, the
// standby StandbyGrace late) on the same ScheduledJobs against the suite's
// real API server, with the clock stepped between them, Jobs finishing, the
// leader away for stretches (dead, its Lease not yet passed on) and the
// standby sometimes acting on a cache that has not caught up. After every
// step it checks that each run has one Job, that a Forbid ScheduledJob never
// has two Jobs running, and, after the leader's reconciles, that the
// history limits hold; at the end, that no placeholder is left.
func TestLeaderAndStandbyRace(t *testing.T) {
	for seed := range raceSeeds() {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			if violations := race(t, seed, func(c *Controller) *Standby { return NewStandby(c, nil, StandbyGrace) }); len(violations) > 0 {
				t.Errorf("%d invariants broken, first: %s", len(violations), violations[0])
			}
		})
	}
}

// TestRaceFindsABrokenStandby: the same interleaving catches a standby that
// forgets concurrencyPolicy (here, through a client that reads every
// ScheduledJob as Allow): it starts a Forbid run while another runs.
func TestRaceFindsABrokenStandby(t *testing.T) {
	var violations []string
	for seed := range raceSeeds() {
		violations = append(violations, race(t, seed, func(c *Controller) *Standby {
			c.kubeClient = policyBlindClient{c.kubeClient}
			return NewStandby(c, nil, StandbyGrace)
		})...)
	}
	if !strings.Contains(strings.Join(violations, "\n"), "Forbid") {
		t.Errorf("the broken standby broke no Forbid invariant; violations: %q", violations)
	} else {
		t.Logf("found, first: %s", violations[0])
	}
}

// policyBlindClient reads every ScheduledJob's concurrencyPolicy as Allow.
type policyBlindClient struct{ client.Client }

func (c policyBlindClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	if sj, ok := obj.(*v1alpha1.ScheduledJob); ok {
		sj.Spec.ConcurrencyPolicy = v1alpha1.AllowConcurrent
	}
	return err
}

// raceSeeds is how many random interleavings each test tries: one in make
// unit's -short run, three in make test's.
func raceSeeds() uint64 {
	if testing.Short() {
		return 1
	}
	return 3
}

// raceSteps is how many random steps each race takes.
const raceSteps = 120

// racer is one randomized interleaving's state.
type racer struct {
	t               *testing.T
	rng             *rand.Rand
	ns              string
	sjs             []*v1alpha1.ScheduledJob
	leader          *Controller
	standby         *Standby
	leaderAwayUntil time.Time
	byStandby       int // Jobs the standby created
}

// race runs one randomized interleaving and returns the broken invariants.
func race(t *testing.T, seed uint64, newStandby func(*Controller) *Standby) []string {
	t.Helper()
	ns := newNamespace(t)
	forbid := newScheduledJob(ns, "forbid", "* * * * *")
	forbid.Spec.ConcurrencyPolicy = v1alpha1.ForbidConcurrent
	forbid.Spec.SuccessfulJobsHistoryLimit, forbid.Spec.FailedJobsHistoryLimit = ptr.To[int32](1), ptr.To[int32](1)
	replace := newScheduledJob(ns, "replace", "*/2 * * * *")
	replace.Spec.ConcurrencyPolicy = v1alpha1.ReplaceConcurrent
	warm := newScheduledJob(ns, "warm", "* * * * *")
	warm.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(30 * time.Second)}
	warm.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](2)
	r := &racer{t: t, rng: rand.New(rand.NewPCG(seed, 21)), ns: ns, sjs: []*v1alpha1.ScheduledJob{forbid, replace, warm},
		leader: newSuiteController(env.Cached), standby: newStandby(newSuiteController(env.Cached))}
	var created time.Time
	for _, sj := range r.sjs {
		create(t, sj)
		created = later(created, sj.CreationTimestamp.Time)
	}
	// Runs before their ScheduledJob's creation never happen: the race
	// starts with the first minute after it.
	start := created.Truncate(time.Minute).Add(time.Minute)
	now := start.Add(-45 * time.Second)
	var violations []string
	seen := map[string]bool{}
	for step := range raceSteps {
		now = now.Add(time.Duration(r.rng.IntN(25_000)) * time.Millisecond)
		what, broken := r.step(now)
		for _, job := range jobs(t, ns) {
			seen[job.Name] = true
		}
		for _, v := range append(broken, checkRuns(t, ns, forbid)...) {
			violations = append(violations, fmt.Sprintf("step %d (%s, %s): %s", step, now.Format(time.TimeOnly), what, v))
		}
	}
	violations = append(violations, r.leftovers(now.Add(time.Hour))...)
	t.Logf("%d Jobs created over %d steps from %s to %s, %d of them by the standby; %d invariants broken",
		len(seen), raceSteps, start.Format(time.TimeOnly), now.Format(time.TimeOnly), r.byStandby, len(violations))
	if r.byStandby == 0 {
		t.Error("the standby started no run: the race tested nothing of it")
	}
	return violations
}

// step takes one random step at now: the leader or the standby reconciles
// a random ScheduledJob, a Job finishes, or the leader dies for a while. It
// says what it did, and the invariants the leader's reconcile found broken.
func (r *racer) step(now time.Time) (string, []string) {
	t := r.t
	sj := r.sjs[r.rng.IntN(len(r.sjs))]
	switch roll := r.rng.IntN(10); {
	case roll < 3 && now.After(r.leaderAwayUntil):
		reconcileWith(t, r.leader, sj, now)
		return "leader reconciles " + sj.Name, checkHistory(t, sj)
	case roll < 6:
		env.Clock.SetTime(now)
		if r.rng.IntN(2) == 0 {
			waitForCache(t, sj) // else on whatever the cache has
		}
		before := len(jobs(t, r.ns))
		if _, err := r.standby.Reconcile(env.Ctx, requestFor(sj)); err != nil {
			t.Fatalf("standby: %v", err)
		}
		r.byStandby += max(len(jobs(t, r.ns))-before, 0)
		return "standby reconciles " + sj.Name, nil
	case roll < 9:
		finishRandomJob(t, r.rng, r.ns, now)
		return "a Job finishes", nil
	default:
		r.leaderAwayUntil = now.Add(time.Duration(20+r.rng.IntN(40)) * time.Second)
		return "the leader dies until " + r.leaderAwayUntil.Format(time.TimeOnly), nil
	}
}

// leftovers has the leader return at now, suspends every ScheduledJob
// (which cancels the coming warm-ups) and reports any placeholder left.
func (r *racer) leftovers(now time.Time) []string {
	t := r.t
	for _, sj := range r.sjs {
		suspended := get(t, sj)
		suspended.Spec.Suspend = ptr.To(true)
		if err := env.Live.Update(env.Ctx, suspended); err != nil {
			t.Fatal(err)
		}
		reconcileWith(t, r.leader, suspended, now)
	}
	var pods corev1.PodList
	if err := env.Live.List(env.Ctx, &pods, client.InNamespace(r.ns), client.MatchingLabelsSelector{Selector: warmup.PodSelector()}); err != nil {
		t.Fatal(err)
	}
	var violations []string
	for _, pod := range pods.Items {
		violations = append(violations, "placeholder left: "+pod.Name)
	}
	return violations
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// finishRandomJob finishes one running Job, as the Job controller would.
func finishRandomJob(t *testing.T, rng *rand.Rand, ns string, now time.Time) {
	t.Helper()
	var running []batchv1.Job
	for _, job := range jobs(t, ns) {
		if _, done := v1alpha1.JobFinished(&job); !done && job.DeletionTimestamp == nil {
			running = append(running, job)
		}
	}
	if len(running) == 0 {
		return
	}
	job := running[rng.IntN(len(running))]
	finish(t, &job, rng.IntN(3) > 0, now)
}

// checkRuns checks that no run has two Jobs, that every Job is named for
// its run, and that forbid never has two Jobs running.
func checkRuns(t *testing.T, ns string, forbid *v1alpha1.ScheduledJob) []string {
	t.Helper()
	var violations []string
	runs := map[string]string{}
	running := 0
	for _, job := range jobs(t, ns) {
		scheduled, ok := v1alpha1.ScheduledTime(&job)
		owner := metav1.GetControllerOf(&job)
		if !ok || owner == nil {
			violations = append(violations, "a Job without its run: "+job.Name)
			continue
		}
		run := owner.Name + " at " + scheduled.Format(time.TimeOnly)
		if other, seen := runs[run]; seen {
			violations = append(violations, fmt.Sprintf("run %s has two Jobs: %s and %s", run, other, job.Name))
		}
		runs[run] = job.Name
		if job.Name != v1alpha1.RunJobName(owner.Name, scheduled) {
			violations = append(violations, fmt.Sprintf("Job %s is not named for its run %s", job.Name, run))
		}
		if _, done := v1alpha1.JobFinished(&job); owner.Name == forbid.Name && !done && job.DeletionTimestamp == nil {
			running++
		}
	}
	if running > 1 {
		violations = append(violations, fmt.Sprintf("Forbid: %d Jobs of %s running at once", running, forbid.Name))
	}
	return violations
}

// checkHistory checks, after the leader's reconcile, that sj keeps no more
// finished Jobs than its history limits.
func checkHistory(t *testing.T, sj *v1alpha1.ScheduledJob) []string {
	t.Helper()
	limits := map[bool]int32{true: 3, false: 1}
	if l := sj.Spec.SuccessfulJobsHistoryLimit; l != nil {
		limits[true] = *l
	}
	if l := sj.Spec.FailedJobsHistoryLimit; l != nil {
		limits[false] = *l
	}
	kept := map[bool]int32{}
	for _, job := range jobs(t, sj.Namespace) {
		owner := metav1.GetControllerOf(&job)
		condition, done := v1alpha1.JobFinished(&job)
		if owner != nil && owner.Name == sj.Name && done && job.DeletionTimestamp == nil {
			kept[condition == batchv1.JobComplete]++
		}
	}
	var violations []string
	for succeeded, n := range kept {
		if n > limits[succeeded] {
			violations = append(violations, fmt.Sprintf("%s keeps %d finished Jobs (succeeded %v), over its limit %d", sj.Name, n, succeeded, limits[succeeded]))
		}
	}
	return violations
}
