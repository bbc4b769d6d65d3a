// Package groupwarmup measures, on a virtual clock, what placing warm-up
// before a concurrency group's predicted admission changes (issue #34,
// item 5): the group's decision (internal/concurrency) and each member's
// warm-up decision (internal/warmup, with warmup.PredictAdmission) run as
// the controllers run them, every 10 s; runs, pods and nodes are
// simulated. It is deterministic and takes a fraction of a second:
//
//	go test -count=1 -v ./test/bench/groupwarmup/
//
// The workload: 20 hourly members scheduled at the same minute in a group
// of 5, each run 10 minutes once its pod runs; placeholder warm-up with a
// 5-minute lead and the default 2-minute hold; a placeholder gets a node 3
// minutes after it is created (the autoscaler's provisioning time), and so
// does a run's pod started without one.
package groupwarmup

import (
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/concurrency"
	"github.com/ontime-dev/ontime/internal/warmup"
)

const (
	members      = 20
	limit        = 5
	runTime      = 10 * time.Minute
	provisioning = 3 * time.Minute
	lead         = 5 * time.Minute
	step         = 10 * time.Second
	hours        = 3
)

var first = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

// member is one ScheduledJob of the group, as warm-up sees it.
type member struct {
	owner warmup.Owner
	pods  []*corev1.Pod
	state *v1alpha1.WarmUpStatus
}

// run is one run's Job and what happened to it.
type run struct {
	job       *batchv1.Job
	member    int
	scheduled time.Time
	// released is when the group started it; podRunning when its pod got
	// a node and ran (at release with a placeholder ready, else after
	// provisioning); warm whether a placeholder was ready then.
	released, podRunning time.Time
	warm                 bool
}

// result is what one simulation measured of one hour's runs.
type result struct {
	runs, warm int
	// placeholderMinutes is the capacity warm-up asked for (placeholder
	// pods existing, in pod-minutes); early the part of it held more than
	// the lead before the run it was for started, idle; wasted the part
	// for runs that started without it all the same.
	placeholderMinutes, early, wasted float64
	waits, starts                     []time.Duration
}

// heldAt is how many placeholders a run had at a step.
type heldAt struct {
	at   time.Time
	pods int
}

// simulate runs the group with warm-up placed from the group's
// predictions (predict) or as before them, and returns its runs and when
// their placeholders existed.
func simulate(predict bool) ([]*run, map[string][]heldAt) {
	opts := (&v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(lead)}).Settings()
	ms := make([]*member, members)
	for i := range ms {
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("report-%02d", i), Namespace: "team", UID: types.UID(fmt.Sprintf("uid-%02d", i))}}
		template := &batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}}
		ms[i] = &member{owner: warmup.OwnerOf(sj, v1alpha1.GroupVersion.WithKind("ScheduledJob"), template)}
	}
	var runs []*run
	var status v1alpha1.ConcurrencyGroupStatus
	held := map[string][]heldAt{}
	end := first.Add(hours*time.Hour - time.Minute)
	for now := first.Add(-10 * time.Minute); now.Before(end); now = now.Add(step) {
		runs = schedule(ms, runs, now)
		progress(runs, now)
		status = admit(status, ms, runs, now)
		for i, m := range ms {
			m.warmUp(opts, current(runs, i, now), now, &status, predict)
		}
		observe(held, ms, now)
	}
	return runs, held
}

// summarize measures the runs scheduled at hour, and their placeholders.
func summarize(runs []*run, held map[string][]heldAt, hour time.Time) result {
	var r result
	for _, run := range runs {
		if !run.scheduled.Equal(hour) {
			continue
		}
		r.runs++
		if run.warm {
			r.warm++
		}
		r.waits = append(r.waits, run.released.Sub(run.scheduled))
		r.starts = append(r.starts, run.podRunning.Sub(run.scheduled))
		r.attribute(run, held[run.job.Name])
	}
	slices.Sort(r.waits)
	slices.Sort(r.starts)
	return r
}

// schedule creates each member's run of the hour at its time, suspended
// in the group, as the ScheduledJob controller does.
func schedule(ms []*member, runs []*run, now time.Time) []*run {
	at := now.Truncate(time.Hour)
	if at.Before(first) {
		return runs
	}
	for i, m := range ms {
		name := v1alpha1.RunJobName(m.owner.Name, at)
		if slices.ContainsFunc(runs, func(r *run) bool { return r.job.Name == name }) {
			continue
		}
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team", UID: types.UID(name), CreationTimestamp: metav1.NewTime(now),
			Annotations:     map[string]string{v1alpha1.ScheduledTimestampAnnotation: at.Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{m.owner.Reference}}}
		v1alpha1.JoinGroup(job, v1alpha1.ConcurrencyGroupRef{Name: "db"}, nil)
		runs = append(runs, &run{job: job, member: i, scheduled: at})
	}
	return runs
}

// progress runs the released runs' pods: ready once they have a node,
// complete runTime later.
func progress(runs []*run, now time.Time) {
	for _, run := range runs {
		if run.released.IsZero() {
			continue
		}
		job := run.job
		if !now.Before(run.podRunning) {
			job.Status.Ready = ptr.To[int32](1)
		}
		if done := run.podRunning.Add(runTime); !now.Before(done) && job.Status.CompletionTime == nil {
			job.Status.Ready = ptr.To[int32](0)
			job.Status.CompletionTime = &metav1.Time{Time: done}
			job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(done)}}
		}
	}
}

// admit makes the group's decision and releases what it admits; a
// released run's pod runs at once on its member's ready placeholder, or
// once a node is provisioned for it.
func admit(status v1alpha1.ConcurrencyGroupStatus, ms []*member, runs []*run, now time.Time) v1alpha1.ConcurrencyGroupStatus {
	jobs := make([]*batchv1.Job, 0, len(runs))
	for _, run := range runs {
		jobs = append(jobs, run.job)
	}
	// Each member's next run, as its status.nextScheduleTime says.
	next := now.Truncate(time.Hour).Add(time.Hour)
	upcoming := make([]concurrency.Upcoming, 0, len(ms))
	for _, m := range ms {
		upcoming = append(upcoming, concurrency.Upcoming{Namespace: "team", JobName: v1alpha1.RunJobName(m.owner.Name, next), Scheduled: next})
	}
	plan := concurrency.Decide(concurrency.Input{Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: limit}, Status: status, Jobs: jobs, Upcoming: upcoming, Now: now})
	for _, job := range plan.Release {
		run := runs[slices.IndexFunc(runs, func(r *run) bool { return r.job == job })]
		job.Spec.Suspend = ptr.To(false)
		job.Status.StartTime = &metav1.Time{Time: now}
		run.released, run.warm = now, ms[run.member].ready(run.scheduled, now)
		run.podRunning = now
		if !run.warm {
			run.podRunning = now.Add(provisioning)
		}
	}
	return plan.Status
}

// current is member i's run of the hour, if created.
func current(runs []*run, i int, now time.Time) *run {
	for _, run := range slices.Backward(runs) {
		if run.member == i && !run.scheduled.After(now) {
			return run
		}
	}
	return nil
}

// warmUp makes the member's warm-up decision and carries it out: its
// placeholders get a node provisioning after they are created.
func (m *member) warmUp(opts v1alpha1.WarmUpSettings, cur *run, now time.Time, group *v1alpha1.ConcurrencyGroupStatus, predict bool) {
	for _, pod := range m.pods {
		if pod.Spec.NodeName == "" && !now.Before(pod.CreationTimestamp.Add(provisioning)) {
			pod.Spec.NodeName = "node"
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(pod.CreationTimestamp.Add(provisioning))}}
		}
	}
	in := warmup.Input{Owner: m.owner, Options: opts, Now: now, Next: now.Truncate(time.Hour).Add(time.Hour), Pods: m.pods, Previous: m.state}
	if !now.Before(first) {
		in.Current = now.Truncate(time.Hour)
		in.CurrentStarts = true
	}
	if cur != nil {
		in.CurrentJob = cur.job
	}
	if predict {
		a := warmup.PredictAdmission(warmup.Group{Status: group}, in.CurrentJob, m.owner.Namespace, v1alpha1.RunJobName(m.owner.Name, in.Next))
		in.NextAdmission, in.CurrentWaits, in.CurrentAdmission = a.Next, a.CurrentWaits, a.Current
	}
	d := warmup.Decide(in)
	m.state = d.State
	for _, pod := range d.DeletePods {
		m.pods = slices.DeleteFunc(m.pods, func(p *corev1.Pod) bool { return p.Name == pod.Name })
	}
	for _, pod := range d.CreatePods {
		pod.CreationTimestamp = metav1.NewTime(now)
		m.pods = append(m.pods, pod)
	}
}

// ready reports whether the member has a placeholder with a node for the
// run at scheduled.
func (m *member) ready(scheduled, now time.Time) bool {
	return slices.ContainsFunc(m.pods, func(p *corev1.Pod) bool {
		return p.Labels[v1alpha1.RunLabel] == v1alpha1.RunLabelValue(scheduled) && !now.Before(p.CreationTimestamp.Add(provisioning))
	})
}

// observe records one step's placeholders, by the run (its Job's name)
// they are for.
func observe(held map[string][]heldAt, ms []*member, now time.Time) {
	for _, m := range ms {
		byRun := map[string]int{}
		for _, pod := range m.pods {
			byRun[pod.Labels[v1alpha1.RunLabel]]++
		}
		for label, n := range byRun {
			name := m.owner.Name + "-" + label
			held[name] = append(held[name], heldAt{at: now, pods: n})
		}
	}
}

// attribute adds up a run's placeholders: all of them, those held more
// than the lead before it started, and all of them if it started cold.
func (r *result) attribute(run *run, steps []heldAt) {
	for _, s := range steps {
		pods := float64(s.pods) * step.Minutes()
		r.placeholderMinutes += pods
		if s.at.Before(run.released.Add(-lead)) {
			r.early += pods
		}
		if !run.warm {
			r.wasted += pods
		}
	}
}

// TestWarmUpBeforePredictedAdmission: with the group's predictions, warm-up
// holds far less capacity while runs wait, and no fewer runs start on a
// ready placeholder.
func TestWarmUpBeforePredictedAdmission(t *testing.T) {
	withoutRuns, withoutHeld := simulate(false)
	withRuns, withHeld := simulate(true)
	fmt.Println("| warm-up placed | runs of | runs | started on a ready placeholder | placeholder pod-minutes | held more than the lead before their run started | for runs that started without them | group wait p50 / max | pod running after the scheduled time p50 / max |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|")
	var before, after result // of the last hour printed
	for _, hour := range []time.Time{first, first.Add(time.Hour)} {
		when := "the first hour (no run finished yet)"
		if hour.After(first) {
			when = "the second hour"
		}
		before, after = summarize(withoutRuns, withoutHeld, hour), summarize(withRuns, withHeld, hour)
		printRow("before the scheduled time (without predictions)", when, before)
		printRow("before the predicted admission", when, after)
	}
	// The second hour: the group has learned how long runs take.
	if after.runs != members || before.runs != members {
		t.Fatalf("%d and %d runs in the second hour, want %d", before.runs, after.runs, members)
	}
	if after.early >= before.early/2 || after.wasted >= before.wasted/2 {
		t.Errorf("second hour: placeholders held more than the lead before their run: %.0f pod-minutes with predictions, %.0f without; for runs that started cold: %.0f and %.0f; want each under half",
			after.early, before.early, after.wasted, before.wasted)
	}
	if after.warm <= before.warm {
		t.Errorf("second hour: %d runs started warm with predictions, %d without; want more", after.warm, before.warm)
	}
}

func printRow(placed, when string, r result) {
	fmt.Printf("| %s | %s | %d | %d | %.0f | %.0f | %.0f | %s / %s | %s / %s |\n", placed, when, r.runs, r.warm, r.placeholderMinutes, r.early, r.wasted,
		r.waits[len(r.waits)/2], r.waits[len(r.waits)-1], r.starts[len(r.starts)/2], r.starts[len(r.starts)-1])
}
