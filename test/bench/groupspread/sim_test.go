// Package groupspread measures, on a virtual clock, what balancing the
// members of a concurrency group by their runs in flight changes (issue
// #34, item 5): the members' minutes come from the shipped balancer
// (internal/spread, as the controller places a Balanced spread, in the
// order the ScheduledJobs are created) and the group's decision from the
// shipped internal/concurrency.Decide, run every 10 s as the controller
// runs it; runs are simulated. It is deterministic and takes about a
// second:
//
//	go test -count=1 -v ./test/bench/groupspread/
//
// The workload: 40 hourly members ("H * * * *") in a group of at most 6
// runs at once; every fourth member's runs last 20 minutes, the others' 3
// (290 run-minutes an hour: 4.8 in flight on average, so the limit can be
// met). Four ways to choose their minutes are compared, each over 20 sets
// of names (the hash, and so Hash's minutes and the order of ties, depend
// on them): all at minute 0 (not spread), Hash, Balanced counting starts,
// and Balanced counting runs in flight (spec.spread.runDuration set to
// each member's run time). A second workload, every run 7 minutes (280
// run-minutes an hour), checks whether balancing starts is enough when
// runs last alike: it is not, since empty minutes next to each other are
// as quiet as empty minutes apart.
package groupspread

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/concurrency"
	"github.com/ontime-dev/ontime/internal/spread"
)

const (
	members  = 40
	limit    = 6
	longRun  = 20 * time.Minute
	shortRun = 3 * time.Minute
	step     = 10 * time.Second
	hours    = 3
	nameSets = 20
	// shortSets are the name sets under -short (make unit and make test
	// run it with the race detector, ten times slower).
	shortSets = 3
)

var first = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

// workload says how long member i's runs last.
type workload struct {
	name    string
	runTime func(i int) time.Duration
}

var (
	mixed = workload{"every fourth member's runs 20 minutes, the others' 3", func(i int) time.Duration {
		if i%4 == 0 {
			return longRun
		}
		return shortRun
	}}
	alike = workload{"every run 7 minutes", func(int) time.Duration { return 7 * time.Minute }}
)

// placement chooses each member's minute of the hour.
type placement struct {
	name    string
	minutes func(t *testing.T, w workload, keys []string) []int
}

var placements = []placement{
	{"not spread (0 * * * *)", func(_ *testing.T, _ workload, keys []string) []int { return make([]int, len(keys)) }},
	{"Hash (H * * * *)", func(t *testing.T, w workload, keys []string) []int { return place(t, w, keys, false, false) }},
	{"Balanced, counting starts", func(t *testing.T, w workload, keys []string) []int { return place(t, w, keys, true, false) }},
	{"Balanced, counting runs in flight (runDuration)", func(t *testing.T, w workload, keys []string) []int { return place(t, w, keys, true, true) }},
}

// place reads "H * * * *" for each key as the controller does: hashed, or
// placed one after the other by the balancer, with each member's run time
// as its span when inFlight.
func place(t *testing.T, w workload, keys []string, balanced, inFlight bool) []int {
	t.Helper()
	group := make([]spread.Member, len(keys))
	for i, key := range keys {
		parser, err := v1alpha1.ScheduleParser(spread.KindScheduledJob, key, "", "")
		if err != nil {
			t.Fatal(err)
		}
		group[i] = spread.Member{Key: key, Schedule: "H * * * *", Parser: parser}
		if inFlight {
			group[i].Span = int(w.runTime(i) / time.Minute)
		}
	}
	if balanced {
		var err error
		if group, err = spread.Place(group, first); err != nil {
			t.Fatal(err)
		}
	}
	minutes := make([]int, len(group))
	for i, m := range group {
		spec, err := m.Parse()
		if err != nil {
			t.Fatal(err)
		}
		minutes[i] = spec.MinutesOfDay()[0] % 60
	}
	return minutes
}

// run is one run's Job and when the group started it.
type run struct {
	job                *batchv1.Job
	scheduled, started time.Time
	length             time.Duration
}

// outcome is what one simulation measured.
type outcome struct {
	// peakDemand is the most runs that would be in flight at once if none
	// waited; maxActive the most the group let run at once.
	peakDemand, maxActive int
	// waits are the waits of the runs of the hours after the first.
	waits []time.Duration
}

// simulate runs the group for hours with the members at these minutes.
func simulate(t *testing.T, w workload, keys []string, minutes []int) outcome {
	t.Helper()
	var runs []*run
	var status v1alpha1.ConcurrencyGroupStatus
	var out outcome
	// Runs are scheduled for hours; the clock runs on until the last waits
	// are over.
	for now := first; now.Before(first.Add((hours + 2) * time.Hour)); now = now.Add(step) {
		if now.Before(first.Add(hours * time.Hour)) {
			runs = schedule(w, keys, minutes, runs, now)
		}
		active, demand := progress(runs, now)
		out.maxActive, out.peakDemand = max(out.maxActive, active), max(out.peakDemand, demand)
		jobs := make([]*batchv1.Job, len(runs))
		for i, r := range runs {
			jobs[i] = r.job
		}
		plan := concurrency.Decide(concurrency.Input{Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: limit}, Status: status, Jobs: jobs, Now: now})
		for _, job := range plan.Release {
			r := runs[slices.IndexFunc(runs, func(r *run) bool { return r.job == job })]
			job.Spec.Suspend = ptr.To(false)
			job.Status.StartTime = &metav1.Time{Time: now}
			r.started = now
		}
		status = plan.Status
	}
	for _, r := range runs {
		if r.scheduled.Before(first.Add(time.Hour)) {
			continue
		}
		if r.started.IsZero() {
			t.Fatalf("%s never started", r.job.Name)
		}
		out.waits = append(out.waits, r.started.Sub(r.scheduled))
	}
	return out
}

// schedule creates each member's run at its minute, suspended in the
// group, as the ScheduledJob controller does.
func schedule(w workload, keys []string, minutes []int, runs []*run, now time.Time) []*run {
	if now.Second() != 0 {
		return runs
	}
	for i, key := range keys {
		if now.Minute() != minutes[i] {
			continue
		}
		namespace, name, _ := strings.Cut(key, "/")
		jobName := v1alpha1.RunJobName(name, now)
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: jobName, Namespace: namespace, UID: types.UID(jobName), CreationTimestamp: metav1.NewTime(now),
			Annotations:     map[string]string{v1alpha1.ScheduledTimestampAnnotation: now.Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ScheduledJob", Name: name, UID: types.UID(key), Controller: ptr.To(true)}}}}
		v1alpha1.JoinGroup(job, v1alpha1.ConcurrencyGroupRef{Name: "db"}, nil)
		runs = append(runs, &run{job: job, scheduled: now, length: w.runTime(i)})
	}
	return runs
}

// progress completes the runs whose time is up, and counts the runs
// running (active) and those that would be running had none waited
// (demand).
func progress(runs []*run, now time.Time) (active, demand int) {
	for _, r := range runs {
		if now.Before(r.scheduled.Add(r.length)) {
			demand++
		}
		if r.started.IsZero() || r.job.Status.CompletionTime != nil {
			continue
		}
		if done := r.started.Add(r.length); !now.Before(done) {
			r.job.Status.CompletionTime = &metav1.Time{Time: done}
			r.job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(done)}}
			continue
		}
		active++
	}
	return active, demand
}

// summary is one placement's outcomes over every name set.
type summary struct {
	peakDemand, maxActive []int
	waits                 []time.Duration
	waited                int
}

func (s *summary) add(o outcome) {
	s.peakDemand = append(s.peakDemand, o.peakDemand)
	s.maxActive = append(s.maxActive, o.maxActive)
	s.waits = append(s.waits, o.waits...)
	for _, w := range o.waits {
		if w > step {
			s.waited++
		}
	}
}

// waitedMinutesPerHour is the run-minutes spent waiting in an hour, on
// average over the name sets.
func (s *summary) waitedMinutesPerHour() float64 {
	var total time.Duration
	for _, w := range s.waits {
		total += w
	}
	return total.Minutes() / float64(len(s.peakDemand)*(hours-1))
}

// sets is how many name sets to measure: all of them, or a few under
// -short.
func sets() int {
	if testing.Short() {
		return shortSets
	}
	return nameSets
}

func (s *summary) percentile(p float64) time.Duration {
	sorted := slices.Sorted(slices.Values(s.waits))
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

func mean(values []int) float64 {
	total := 0
	for _, v := range values {
		total += v
	}
	return float64(total) / float64(len(values))
}

// measure runs every placement of the workload over every name set.
func measure(t *testing.T, w workload, of []placement) []summary {
	t.Helper()
	results := make([]summary, len(of))
	for set := range sets() {
		keys := make([]string, members)
		for i := range keys {
			keys[i] = fmt.Sprintf("tenant-%02d/job-%02d", set, i)
		}
		for p, pl := range of {
			results[p].add(simulate(t, w, keys, pl.minutes(t, w, keys)))
		}
	}
	fmt.Printf("\n%s, %d members, limit %d:\n\n", w.name, members, limit)
	fmt.Printf("| minutes chosen by | runs wanting to run at once, at the peak: mean / max over %d name sets | most running at once | runs that waited | wait p50 / p95 / max | run-minutes waited per hour |\n", sets())
	fmt.Println("|---|---:|---:|---:|---|---:|")
	for p, pl := range of {
		r := &results[p]
		fmt.Printf("| %s | %.1f / %d | %d | %d of %d | %s / %s / %s | %.1f |\n", pl.name, mean(r.peakDemand), slices.Max(r.peakDemand), slices.Max(r.maxActive),
			r.waited, len(r.waits), r.percentile(0.5), r.percentile(0.95), slices.Max(r.waits), r.waitedMinutesPerHour())
		if slices.Max(r.maxActive) > limit {
			t.Errorf("%s: %d runs at once, over the limit %d", pl.name, slices.Max(r.maxActive), limit)
		}
	}
	return results
}

// TestBalancingRunsInFlight: balancing the members by their runs in
// flight keeps the peak of runs wanting to run at once at or under the
// limit, so no run waits, whether runs last differently or alike (the
// table shows what the other placements make wait). Whatever the
// placement, the group never runs more than its limit.
func TestBalancingRunsInFlight(t *testing.T) {
	of := placements
	if testing.Short() {
		of = placements[1:] // not spread is the slowest to simulate, and no question
	}
	results := measure(t, mixed, of)
	starts, inFlight := &results[len(of)-2], &results[len(of)-1]
	if slices.Max(inFlight.peakDemand) > limit || inFlight.waited != 0 {
		t.Errorf("%s: counting runs in flight, peak %d (limit %d) and %d runs waited; counting starts, %d runs waited",
			mixed.name, slices.Max(inFlight.peakDemand), limit, inFlight.waited, starts.waited)
	}
	results = measure(t, alike, placements[1:])
	starts, inFlight = &results[1], &results[2]
	if slices.Max(inFlight.peakDemand) > limit || inFlight.waited != 0 {
		t.Errorf("%s: counting runs in flight, peak %d (limit %d) and %d runs waited; counting starts, %d runs waited",
			alike.name, slices.Max(inFlight.peakDemand), limit, inFlight.waited, starts.waited)
	}
}
