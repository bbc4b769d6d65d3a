package concurrency

import (
	"cmp"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Predicted admissions: status.queue says when each waiting run is
// expected to start, so that warm-up brings capacity up before then
// rather than before a scheduled time the run will spend waiting. The
// prediction takes every run to last status.typicalRunDuration from its
// admission, and admits the queue in order into the slot that frees
// first (under spec.limitPerLabelValue, the first that frees both in the
// group and for the run's value). It is computed from the admission times
// recorded in status, not from now, so that it changes only when the runs
// do and costs no status write of its own.

// learnDuration moves status.typicalRunDuration a quarter of the way to
// the duration of the entry's run, whose Job is seen finished.
func (p *Dispatch) learnDuration(entry v1alpha1.GroupRun, job *batchv1.Job) {
	at, ok := finishedAt(job)
	if !ok {
		return
	}
	took := max(at.Sub(entry.AdmittedAt.Time), 0)
	if typical := p.Status.TypicalRunDuration; typical != nil {
		took = typical.Duration + (took-typical.Duration)/4
	}
	p.Status.TypicalRunDuration = &metav1.Duration{Duration: took.Round(time.Second)}
}

// finishedAt is when a finished Job finished: its completion time, or its
// Complete or Failed condition's.
func finishedAt(job *batchv1.Job) (time.Time, bool) {
	condition, done := v1alpha1.JobFinished(job)
	if !done {
		return time.Time{}, false
	}
	if job.Status.CompletionTime != nil {
		return job.Status.CompletionTime.Time, true
	}
	for _, c := range job.Status.Conditions {
		if c.Type == condition && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// holder is a run that holds a slot: when it began holding it, and its
// value of the per-value limit's label.
type holder struct {
	since time.Time
	value string
}

// slotHolders are the runs that hold a slot: the entries, from their
// admission, and the member Jobs started by someone else, from their
// start (or creation).
func slotHolders(spec v1alpha1.ConcurrencyGroupSpec, entries []v1alpha1.GroupRun, unlisted []*batchv1.Job) []holder {
	holders := make([]holder, 0, len(entries)+len(unlisted))
	for _, entry := range entries {
		holders = append(holders, holder{since: entry.AdmittedAt.Time, value: entry.LabelValue})
	}
	for _, job := range unlisted {
		since := job.CreationTimestamp.Time
		if job.Status.StartTime != nil {
			since = job.Status.StartTime.Time
		}
		holders = append(holders, holder{since: since, value: labelValue(spec, job)})
	}
	return holders
}

// predictQueue lists the first MaxQueueListed waiting runs, in queue
// order, with their predicted admissions when the typical run duration is
// known; predicts the admission of a run that would join behind them; and
// lists the members' upcoming runs, predicted behind the waiting ones in
// the order of their times.
func predictQueue(spec v1alpha1.ConcurrencyGroupSpec, typical *metav1.Duration, holders []holder, waiting []*batchv1.Job, upcoming []Upcoming) (queue []v1alpha1.QueuedRun, newRun *metav1.Time, next []v1alpha1.QueuedRun) {
	var slots *slotPool
	if typical != nil {
		slots = newSlotPool(spec, typical.Duration, holders)
	}
	for i, job := range waiting {
		var at time.Time
		if slots != nil {
			at = slots.take(labelValue(spec, job))
		}
		if i < v1alpha1.MaxQueueListed {
			queue = append(queue, queued(job.Namespace, job.Name, at))
		}
	}
	if slots != nil {
		if at := slots.group.earliest(); !at.IsZero() {
			newRun = &metav1.Time{Time: at}
		}
	}
	upcoming = slices.Clone(upcoming)
	slices.SortFunc(upcoming, func(a, b Upcoming) int {
		return cmp.Or(a.Scheduled.Compare(b.Scheduled), cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.JobName, b.JobName))
	})
	for _, run := range upcoming[:min(len(upcoming), v1alpha1.MaxQueueListed)] {
		var at time.Time
		if slots != nil {
			at = slots.takeFrom(run.Scheduled)
		}
		next = append(next, queued(run.Namespace, run.JobName, at))
	}
	return queue, newRun, next
}

// queued lists a run with its predicted admission (none if at is zero).
func queued(namespace, name string, at time.Time) v1alpha1.QueuedRun {
	run := v1alpha1.QueuedRun{Namespace: namespace, Name: name}
	if !at.IsZero() {
		run.PredictedAdmission = &metav1.Time{Time: at}
	}
	return run
}

// slotPool holds, for the group and for each label value under a limit,
// when each of its slots is next free (the zero time: free now).
type slotPool struct {
	took    time.Duration
	group   freeTimes
	byValue map[string]freeTimes
	// perValue is spec.limitPerLabelValue.maxActive (0: no limit).
	perValue int
	holders  []holder
}

func newSlotPool(spec v1alpha1.ConcurrencyGroupSpec, took time.Duration, holders []holder) *slotPool {
	pool := &slotPool{took: took, byValue: map[string]freeTimes{}, holders: holders}
	pool.group = pool.slots(int(spec.MaxActive), func(holder) bool { return true })
	if spec.LimitPerLabelValue != nil {
		pool.perValue = int(spec.LimitPerLabelValue.MaxActive)
	}
	return pool
}

// slots are n slots, those of the holders that match taken until they
// are expected to finish. With more holders than slots (over the limit),
// a slot frees only once enough of them have finished: the latest n
// finishes.
func (p *slotPool) slots(n int, match func(holder) bool) freeTimes {
	free := make(freeTimes, 0, n)
	for _, h := range p.holders {
		if match(h) {
			free = append(free, h.since.Add(p.took))
		}
	}
	slices.SortFunc(free, time.Time.Compare)
	if len(free) > n {
		free = free[len(free)-n:] // the earlier finishes free no slot
	}
	for len(free) < n {
		free = append(free, time.Time{})
	}
	return free
}

// take admits the next run of the queue, of this label value: when both
// a slot of the group and one of its value are free. It takes the group's
// slot that freed last by then, leaving the earlier ones to runs of other
// values that pass it (Decide admits those first), and holds both until
// it is expected to finish. The zero time: no prediction.
func (p *slotPool) take(value string) time.Time {
	at := p.group.earliest()
	var values freeTimes
	if p.perValue > 0 {
		values = p.byValue[value]
		if values == nil {
			values = p.slots(p.perValue, func(h holder) bool { return h.value == value })
			p.byValue[value] = values
		}
		if v := values.earliest(); v.After(at) {
			at = v
		}
	}
	if at.IsZero() {
		return at
	}
	p.group.hold(at, at.Add(p.took))
	if values != nil {
		values.hold(at, at.Add(p.took))
	}
	return at
}

// takeFrom admits an upcoming run, due at scheduled, into the group's
// slot that frees first (its label value is not known before its Job is
// created): not before it is due.
func (p *slotPool) takeFrom(scheduled time.Time) time.Time {
	at := p.group.earliest()
	if scheduled.After(at) {
		at = scheduled
	}
	p.group.hold(at, at.Add(p.took))
	return at
}

// freeTimes are when each slot of a pool is next free.
type freeTimes []time.Time

func (f freeTimes) earliest() time.Time { return slices.MinFunc(f, time.Time.Compare) }

// hold takes, until until, the slot that freed last at or before at.
func (f freeTimes) hold(at, until time.Time) {
	best := -1
	for i, free := range f {
		if !free.After(at) && (best < 0 || free.After(f[best])) {
			best = i
		}
	}
	f[best] = until
}
