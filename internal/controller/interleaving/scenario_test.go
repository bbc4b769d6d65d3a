package interleaving

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// namespace holds every seed's ScheduledJobs.
const namespace = "tenant"

// scenario is what one seed runs: ScheduledJobs, how long their runs last,
// the faults and how fast each cache follows.
type scenario struct {
	start         time.Time
	chaos, quiet  time.Duration
	scheduledJobs []*v1alpha1.ScheduledJob
	faults        []fault
	// cacheSpeed weighs how often each replica's informer of each kind
	// catches up by a change (key: replica name and kind).
	cacheSpeed map[string]float64
	// cacheLag is how far behind the API server a cache may fall.
	cacheLag time.Duration
	// runs are, per ScheduledJob, the lengths its runs draw from.
	runs map[string][]time.Duration
	// failing are the ScheduledJobs whose runs may fail: with
	// suspendAfterFailures, about one run in two fails.
	failing map[string]bool
}

// fails reports whether a Job fails: for a failing ScheduledJob, by the
// Job's name.
func (s scenario) fails(job *batchv1.Job) bool {
	owner := metav1.GetControllerOf(job)
	if !s.failing[owner.Name] {
		return false
	}
	h := fnv.New32a()
	h.Write([]byte("fails " + job.Name))
	return h.Sum32()%2 == 0
}

// runFor is how long a Job runs: one of its ScheduledJob's lengths, chosen
// by the Job's name.
func (s scenario) runFor(job *batchv1.Job) time.Duration {
	owner := metav1.GetControllerOf(job)
	lengths := s.runs[owner.Name]
	h := fnv.New32a()
	h.Write([]byte(job.Name))
	return lengths[int(h.Sum32())%len(lengths)]
}

// newScenario draws a scenario: one to three ScheduledJobs with every
// combination of schedule, runAt, concurrency policy, history limits and
// starting deadline, runs from a tenth of a second to longer than the
// period, and faults during chaos: the leader killed (its request in
// flight reaching the API server or not), the other replica killed, the
// leader stopped gracefully, an outage of the API server, runs triggered
// by hand.
func newScenario(rng *rand.Rand) scenario {
	s := scenario{
		start: time.Date(2026, 11, 26, 10, 0, 15, 0, time.UTC),
		chaos: 4 * time.Minute, quiet: 2 * time.Minute,
		cacheSpeed: map[string]float64{}, runs: map[string][]time.Duration{}, failing: map[string]bool{},
	}
	s.cacheLag = 5 * time.Second
	if rng.IntN(3) == 0 {
		s.cacheLag = 75 * time.Second
	}
	speeds := []float64{0.05, 0.5, 2, 6}
	for _, r := range []string{"a", "b"} {
		for _, k := range []kind{kindScheduledJob, kindJob} {
			s.cacheSpeed[r+string(k)] = speeds[rng.IntN(len(speeds))]
		}
	}
	n := 1 + rng.IntN(3)
	for i := range n {
		s.scheduledJobs = append(s.scheduledJobs, s.newScheduledJob(rng, fmt.Sprintf("sj-%d", i)))
	}
	s.faults = s.drawFaults(rng)
	// Drawn last, so that the rest of each seed's scenario is what it was
	// before runs could fail. Not with Replace: a run it replaces may have
	// ended just before, unseen, and counts neither way (documented), which
	// the checks cannot tell from the API server's history.
	for _, sj := range s.scheduledJobs {
		if rng.IntN(3) == 0 && sj.Spec.ConcurrencyPolicy != v1alpha1.ReplaceConcurrent {
			sj.Spec.SuspendAfterFailures = ptr.To(int32(1 + rng.IntN(3)))
			s.failing[sj.Name] = true
		}
	}
	// Drawn after that, for the same reason.
	for _, sj := range s.scheduledJobs {
		if rng.IntN(2) == 0 && sj.Spec.ConcurrencyPolicy == v1alpha1.AllowConcurrent {
			sj.Spec.MaxActive = ptr.To(int32(1 + rng.IntN(2)))
		}
	}
	// And catch-up after that: runs longer than the period under a limit,
	// outages and takeovers leave runs owed.
	for _, sj := range s.scheduledJobs {
		if rng.IntN(2) == 0 && sj.Spec.ConcurrencyPolicy != v1alpha1.ReplaceConcurrent && sj.Spec.RunAt == nil {
			sj.Spec.CatchUp = &v1alpha1.CatchUp{MaxRuns: int32(1 + rng.IntN(3))}
		}
	}
	return s
}

func (s *scenario) newScheduledJob(rng *rand.Rand, name string) *v1alpha1.ScheduledJob {
	sj := &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1alpha1.ScheduledJobSpec{
			ConcurrencyPolicy: []v1alpha1.ConcurrencyPolicy{v1alpha1.AllowConcurrent, v1alpha1.ForbidConcurrent, v1alpha1.ReplaceConcurrent}[rng.IntN(3)],
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
			}}}},
		},
	}
	switch roll := rng.IntN(10); {
	case roll < 7:
		sj.Spec.Schedule = "* * * * *"
	case roll < 8:
		sj.Spec.Schedule = "*/2 * * * *"
	case roll < 9: // runs at minutes 0, 2, 3, 4, 6: a union (spec.schedules)
		sj.Spec.Schedules = []string{"*/2 * * * *", "*/3 * * * *"}
	default:
		sj.Spec.RunAt = &metav1.Time{Time: s.start.Add(time.Duration(45+rng.IntN(120)) * time.Second)}
	}
	limits := []int32{0, 0, 1, 3}
	sj.Spec.SuccessfulJobsHistoryLimit = ptr.To(limits[rng.IntN(len(limits))])
	sj.Spec.FailedJobsHistoryLimit = ptr.To(limits[rng.IntN(len(limits))])
	switch rng.IntN(5) {
	case 0:
		sj.Spec.StartingDeadlineSeconds = ptr.To[int64](10)
	case 1:
		sj.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
	}
	var lengths []time.Duration
	for range 3 {
		switch rng.IntN(3) {
		case 0: // done before anything notices
			lengths = append(lengths, time.Duration(100+rng.IntN(2900))*time.Millisecond)
		case 1: // within a takeover
			lengths = append(lengths, time.Duration(5+rng.IntN(15))*time.Second)
		default: // longer than the period
			lengths = append(lengths, time.Duration(30+rng.IntN(70))*time.Second)
		}
	}
	s.runs[name] = lengths
	return sj
}

// drawFaults draws the chaos: most faults near a minute's start, where the
// runs are.
func (s scenario) drawFaults(rng *rand.Rand) []fault {
	var faults []fault
	at := func() time.Time {
		offset := time.Duration(rng.IntN(int(s.chaos / time.Millisecond)))
		t := s.start.Add(offset * time.Millisecond)
		if rng.IntN(2) == 0 { // near a minute's start
			t = t.Truncate(time.Minute).Add(time.Minute + time.Duration(rng.IntN(4000)-2000)*time.Millisecond)
		}
		return t
	}
	for range rng.IntN(6) {
		faults = append(faults, fault{at: at(), what: killLeader, landed: rng.IntN(2) == 0})
	}
	for range rng.IntN(3) {
		faults = append(faults, fault{at: at(), what: killStandby, landed: rng.IntN(2) == 0})
	}
	if rng.IntN(3) == 0 {
		faults = append(faults, fault{at: at(), what: stopLeader})
	}
	if rng.IntN(3) == 0 {
		faults = append(faults, fault{at: at(), what: outage, down: time.Duration(1+rng.IntN(50)) * time.Second})
	}
	for i, sj := range s.scheduledJobs {
		if rng.IntN(3) == 0 {
			for j := range 1 + rng.IntN(2) {
				faults = append(faults, fault{at: at(), what: triggerRun, name: sj.Name, value: fmt.Sprintf("request-%d-%d", i, j)})
			}
		}
	}
	slices.SortStableFunc(faults, func(a, b fault) int { return a.at.Compare(b.at) })
	return faults
}

func (s scenario) String() string {
	out := ""
	for _, sj := range s.scheduledJobs {
		when := sj.Spec.Schedule
		if len(sj.Spec.Schedules) > 0 {
			when = strings.Join(sj.Spec.Schedules, "; ")
		}
		if sj.Spec.RunAt != nil {
			when = "runAt " + sj.Spec.RunAt.Format(time.TimeOnly)
		}
		deadline := "-"
		if d := sj.Spec.StartingDeadlineSeconds; d != nil {
			deadline = fmt.Sprint(*d, "s")
		}
		failing := ""
		if n := sj.Spec.SuspendAfterFailures; n != nil {
			failing = fmt.Sprintf(", runs may fail, suspendAfterFailures %d", *n)
		}
		policy := string(sj.Spec.ConcurrencyPolicy)
		if n := sj.Spec.MaxActive; n != nil {
			policy += fmt.Sprintf(" maxActive %d", *n)
		}
		if c := sj.Spec.CatchUp; c != nil {
			policy += fmt.Sprintf(", catchUp %d", c.MaxRuns)
		}
		out += fmt.Sprintf("  %s: %q %s, history %d/%d, deadline %s, runs %v%s\n", sj.Name, when, policy,
			*sj.Spec.SuccessfulJobsHistoryLimit, *sj.Spec.FailedJobsHistoryLimit, deadline, s.runs[sj.Name], failing)
	}
	out += fmt.Sprintf("  caches up to %s behind\n", s.cacheLag)
	for _, f := range s.faults {
		out += fmt.Sprintf("  %s %s %s %s\n", f.at.Format("15:04:05.000"), f.what, f.name, map[bool]string{true: "(request landed)"}[f.landed])
	}
	return out
}
