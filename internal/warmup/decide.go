package warmup

import (
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Input is what Decide looks at: the owner's runs around Now and its
// warm-up pods.
type Input struct {
	Owner   Owner
	Options Options
	Now     time.Time
	// Next is the next run, strictly after Now, that warm-up prepares for;
	// zero when none is coming (suspended, invalid, being deleted, a runAt
	// that has run).
	Next time.Time
	// NextJob is the next run's Job when it exists already (EarlyStart) or
	// is being created now (NextJobCreating).
	NextJob         *batchv1.Job
	NextJobCreating bool
	// Current is the latest run at or before Now (zero if none).
	// CurrentStarts says whether its Job exists or is being created now;
	// false when the run will not start (concurrencyPolicy Forbid holds it
	// back, it missed its deadline).
	Current       time.Time
	CurrentStarts bool
	// CurrentJob is the current run's Job, when it exists.
	CurrentJob *batchv1.Job
	// For a member of a concurrency group, whose runs may wait for room
	// (docs/concurrency-groups.md): NextAdmission is when the group
	// predicts a run joining its queue now would start, if after Next
	// (zero: at Next); CurrentWaits says the current run's Job waits in
	// the group, and CurrentAdmission is when the group predicts it
	// starts (zero: no prediction) or, once it started late, when it did.
	// Warm-up is placed Options.Lead before a run's start, predicted or
	// scheduled, and held until Options.Hold after it.
	NextAdmission    time.Time
	CurrentWaits     bool
	CurrentAdmission time.Time
	// GroupRefuses says the owner's concurrency group refuses its runs
	// (Group.Refuses): no next run is warmed, nor a current run that
	// waits in the group; one the group admitted before goes on as any
	// run.
	GroupRefuses bool
	// Pods are the owner's warm-up pods (placeholders and EarlyStart pods).
	Pods []*corev1.Pod
	// Previous is the warm-up last reported, if any.
	Previous *v1alpha1.WarmUpStatus
	// Buffers are the owner's CapacityBuffers, and BufferAPI what the
	// cluster serves of their API: read for the CapacityBuffer strategy,
	// and while the last warm-up used it.
	Buffers   []Buffer
	BufferAPI BufferAPI
	// Lead is how Options.Lead was chosen (ChooseLead), recorded in the
	// state of a warm-up that begins; nil records nothing.
	Lead *v1alpha1.LeadStatus
}

// Decision is what to do about warm-up now.
type Decision struct {
	// Changes are the placeholder pods and CapacityBuffers to create and
	// delete.
	Changes
	// BufferProblem says why the next run's CapacityBuffer cannot bring
	// capacity: the API is not served (BufferUnavailable), or the
	// autoscaler cannot use the buffer.
	BufferProblem     string
	BufferUnavailable bool
	// State is the warm-up to report; nil while none has begun.
	State *v1alpha1.WarmUpStatus
	// NextStart is when warm-up for the next run begins; zero if none.
	NextStart time.Time
	// WaitingStart is, while the current run waits in its concurrency
	// group, when warm-up for it begins: Options.Lead before its predicted
	// start, WaitingAdmission (zero: none predicted, or it began).
	WaitingStart, WaitingAdmission time.Time
	// Waiting says the current run waits in its concurrency group.
	Waiting bool
	// Wake lists the times to look again without an event.
	Wake   []time.Time
	Events []Event
	// ReadyAfter is set when the capacity became ready in this decision:
	// how long after warm-up began. Late is set when the run started
	// before its capacity was ready.
	ReadyAfter *time.Duration
	Late       bool
}

// Decide decides about warm-up at in.Now.
func Decide(in Input) Decision {
	if in.GroupRefuses {
		in = in.refused()
	}
	d := Decision{State: in.Previous.DeepCopy(), Changes: Changes{BufferAPI: in.BufferAPI}}
	byRun := groupByRun(in.Pods)
	keep := map[string]bool{} // runs whose placeholders stay
	warming := ""             // the run warm-up prepares now, if any
	if d.Waiting = in.CurrentWaits; d.Waiting {
		// The next run joins the group's queue behind this one.
		if warming = d.warmWaiting(in, byRun[v1alpha1.RunLabelValue(in.Current)]); warming != "" {
			keep[warming] = true
		}
	} else if next := in.Next; !next.IsZero() {
		d.NextStart = later(next, in.NextAdmission).Add(-in.Options.Lead)
		if in.Now.Before(d.NextStart) {
			d.Wake = append(d.Wake, d.NextStart)
		} else {
			warming = v1alpha1.RunLabelValue(next)
			keep[warming] = true
			d.warm(in, byRun[v1alpha1.RunLabelValue(next)])
		}
	}
	if current := in.Current; !current.IsZero() && !in.CurrentWaits && d.State != nil && d.State.ScheduledTime.Time.Equal(current) {
		d.judge(in, byRun[v1alpha1.RunLabelValue(current)])
	}
	if in.keepsCurrent() {
		keep[v1alpha1.RunLabelValue(in.Current)] = true
		d.Wake = append(d.Wake, in.currentStart().Add(in.Options.Hold))
	}
	d.deleteUnkept(in, byRun, keep)
	d.deleteUnkeptBuffers(in, warming)
	if in.GroupRefuses && d.State != nil && (!d.State.ScheduledTime.Time.Equal(in.Current) || !in.CurrentStarts) {
		// The warm-up of a run the group refuses: it measures nothing.
		d.State = nil
	}
	return d
}

// refused is the input without the runs a group that refuses them will
// never start: the next run, and the current one while it waits.
func (in Input) refused() Input {
	in.Next, in.NextJob, in.NextJobCreating, in.NextAdmission = time.Time{}, nil, false, time.Time{}
	if in.CurrentWaits {
		in.CurrentWaits, in.CurrentStarts, in.CurrentAdmission = false, false, time.Time{}
	}
	return in
}

// keepsCurrent reports whether the current run's placeholders stay: the run
// is starting, its pods are not all placed yet, and the hold has not run
// out. (A run waiting in its concurrency group keeps them by warmWaiting.)
func (in Input) keepsCurrent() bool {
	return !in.Current.IsZero() && in.CurrentStarts && !in.CurrentWaits && in.Now.Before(in.currentStart().Add(in.Options.Hold)) &&
		!handedOff(in.CurrentJob, PodsPerRun(&in.Owner.Template.Spec))
}

// currentStart is when the current run started: at its time, or later
// when it waited in its concurrency group.
func (in Input) currentStart() time.Time { return later(in.Current, in.CurrentAdmission) }

// warmWaiting warms the current run while it waits in its concurrency
// group as a next run is warmed: from Options.Lead before its predicted
// start until Options.Hold after it (a prediction already past: the runs
// ahead take longer than typical, and the hold bounds what it keeps
// waiting). Without a prediction, as any run: until Options.Hold after
// its scheduled time. It returns the run's label while it warms ("" otherwise).
func (d *Decision) warmWaiting(in Input, pods []*corev1.Pod) string {
	if in.Options.Strategy == v1alpha1.WarmUpEarlyStart {
		return ""
	}
	admission := in.currentStart()
	start, until := admission.Add(-in.Options.Lead), admission.Add(in.Options.Hold)
	ownState := d.State != nil && d.State.ScheduledTime.Time.Equal(in.Current)
	switch {
	case in.Now.Before(start):
		// Capacity warmed before the run's time goes until then; the
		// warm-up that begins then is measured afresh.
		if ownState {
			d.State = nil
		}
		d.WaitingStart, d.WaitingAdmission = start, admission
		d.Wake = append(d.Wake, start)
		return ""
	case !in.Now.Before(until):
		// The capacity goes: once the run starts, it is late.
		if ownState {
			d.State.ReadyTime, d.State.ScheduledPods = nil, 0
		}
		return ""
	}
	waiting := in
	waiting.Next, waiting.NextJob, waiting.NextJobCreating = in.Current, nil, false
	d.warm(waiting, pods)
	d.Wake = append(d.Wake, until)
	return v1alpha1.RunLabelValue(in.Current)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// handedOff reports whether the run's pods have the capacity: every pod it
// places at once is ready or finished, or the Job is done.
func handedOff(job *batchv1.Job, pods int32) bool {
	if job == nil {
		return false
	}
	if _, finished := v1alpha1.JobFinished(job); finished {
		return true
	}
	ready := int32(0)
	if job.Status.Ready != nil {
		ready = *job.Status.Ready
	}
	return ready+job.Status.Succeeded+job.Status.Failed >= pods
}

// warm brings capacity up for the next run: it creates the missing
// placeholders (Placeholder) and follows how many warm-up pods have a node.
func (d *Decision) warm(in Input, pods []*corev1.Pod) {
	next, n := in.Next, PodsPerRun(&in.Owner.Template.Spec)
	switch in.Options.Strategy {
	case v1alpha1.WarmUpCapacityBuffer:
		d.warmWithBuffer(in, n)
		return
	case v1alpha1.WarmUpEarlyStart:
		if in.NextJob == nil && !in.NextJobCreating {
			return // not created yet (Forbid waits for the active run)
		}
		pods = ofKind(pods, v1alpha1.WarmUpEarlyStartPod)
	default:
		pods = ofKind(pods, v1alpha1.WarmUpPlaceholderPod)
		d.createMissing(in, pods)
	}
	if d.State == nil || !d.State.ScheduledTime.Time.Equal(next) {
		d.State = &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(next), Strategy: in.Options.Strategy, StartTime: metav1.NewTime(startOf(pods, in.Now)), Pods: n,
			Lead: in.Lead.DeepCopy()}
		if len(pods) == 0 {
			d.Events = append(d.Events, warmUpStartedEvent(in, n))
		}
	}
	d.follow(pods, n)
}

// createMissing adds the placeholders of the next run that do not exist,
// and deletes those the run no longer has (its parallelism went down). One
// that is being deleted is created again once it is gone.
func (d *Decision) createMissing(in Input, existing []*corev1.Pod) {
	jobName := v1alpha1.RunJobName(in.Owner.Name, in.Next)
	wanted := map[string]bool{}
	for _, pod := range Placeholders(in.Owner, jobName, in.Next, in.Options) {
		wanted[pod.Name] = true
		if !slices.ContainsFunc(existing, func(p *corev1.Pod) bool { return p.Name == pod.Name }) {
			d.CreatePods = append(d.CreatePods, pod)
		}
	}
	for _, pod := range existing {
		if !wanted[pod.Name] && pod.DeletionTimestamp == nil {
			d.DeletePods = append(d.DeletePods, pod)
		}
	}
}

// follow counts the warm-up pods with a node and records when all of them
// first had one. A run's state stops changing once it has started.
func (d *Decision) follow(pods []*corev1.Pod, n int32) {
	placed, last := placedPods(pods)
	d.State.ScheduledPods = placed
	if placed < n || d.State.ReadyTime != nil {
		return
	}
	d.State.ReadyTime = &metav1.Time{Time: last}
	after := last.Sub(d.State.StartTime.Time)
	d.ReadyAfter = &after
	d.Events = append(d.Events, warmUpReadyEvent(d.State))
}

// judge decides, once the run's time has come, whether its capacity was
// ready in time. Pods are the run's warm-up pods.
func (d *Decision) judge(in Input, pods []*corev1.Pod) {
	if d.State.Late || (d.State.ReadyTime != nil && !d.State.ReadyTime.After(in.currentStart())) || !in.CurrentStarts {
		return
	}
	if d.State.ReadyTime == nil {
		// Not seen ready before the run: perhaps it was and the controller
		// was away. The pods' (or the buffer's) own timestamps say when.
		if d.State.Strategy == v1alpha1.WarmUpCapacityBuffer {
			buffer, exists := bufferOf(in.Buffers, v1alpha1.RunLabelValue(in.Current))
			d.followBuffer(buffer, exists)
		} else {
			d.follow(ofKind(pods, kindFor(in.Options.Strategy)), d.State.Pods)
		}
	}
	if d.State.ReadyTime == nil || d.State.ReadyTime.After(later(d.State.ScheduledTime.Time, in.CurrentAdmission)) {
		d.State.Late = true
		d.Late = true
		d.Events = append(d.Events, warmUpLateEvent(d.State))
	}
}

// deleteUnkept deletes the placeholders of runs that no longer need them.
// Deleting those of a run that has not started is a cancellation.
func (d *Decision) deleteUnkept(in Input, byRun map[string][]*corev1.Pod, keep map[string]bool) {
	for run, pods := range byRun {
		if keep[run] {
			continue
		}
		deleted := 0
		for _, pod := range ofKind(pods, v1alpha1.WarmUpPlaceholderPod) {
			if pod.DeletionTimestamp == nil {
				d.DeletePods = append(d.DeletePods, pod)
				deleted++
			}
		}
		if at, canceled := in.cancels(run); canceled && deleted > 0 {
			d.Events = append(d.Events, warmUpCanceledEvent(at, deleted))
		}
	}
	slices.SortFunc(d.DeletePods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
}

// cancels reports whether deleting the placeholders of the run with this
// RunLabel value abandons a run that has not started: a future run, or the
// current one when it is not starting. It returns the run's time.
func (in Input) cancels(run string) (time.Time, bool) {
	minutes, err := strconv.ParseInt(run, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	at := time.Unix(minutes*60, 0)
	return at, at.After(in.Now) || (at.Equal(in.Current) && !in.CurrentStarts)
}

// groupByRun groups warm-up pods by their run.
func groupByRun(pods []*corev1.Pod) map[string][]*corev1.Pod {
	byRun := map[string][]*corev1.Pod{}
	for _, pod := range pods {
		run := pod.Labels[v1alpha1.RunLabel]
		byRun[run] = append(byRun[run], pod)
	}
	return byRun
}

func ofKind(pods []*corev1.Pod, kind string) []*corev1.Pod {
	var kept []*corev1.Pod
	for _, pod := range pods {
		if pod.Labels[v1alpha1.WarmUpLabel] == kind {
			kept = append(kept, pod)
		}
	}
	return kept
}

func kindFor(strategy v1alpha1.WarmUpStrategy) string {
	if strategy == v1alpha1.WarmUpEarlyStart {
		return v1alpha1.WarmUpEarlyStartPod
	}
	return v1alpha1.WarmUpPlaceholderPod
}

// placedPods counts the pods, not being deleted, that have a node, and
// returns when the last of them got it.
func placedPods(pods []*corev1.Pod) (int32, time.Time) {
	var n int32
	var last time.Time
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Spec.NodeName == "" {
			continue
		}
		n++
		if at := scheduledAt(pod); at.After(last) {
			last = at
		}
	}
	return n, last
}

// scheduledAt is when the pod was bound to its node: its PodScheduled
// condition's transition (whole seconds), else its creation.
func scheduledAt(pod *corev1.Pod) time.Time {
	if at, ok := conditionTrueAt(pod.Status.Conditions, corev1.PodScheduled); ok {
		return at
	}
	return pod.CreationTimestamp.Time
}

// startOf is when warm-up for a run began: its oldest warm-up pod's
// creation, or now for a warm-up that begins now.
func startOf(pods []*corev1.Pod, now time.Time) time.Time {
	start := now
	for _, pod := range pods {
		if created := pod.CreationTimestamp.Time; !created.IsZero() && created.Before(start) {
			start = created
		}
	}
	return start
}
