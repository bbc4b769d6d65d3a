// Package concurrency decides a concurrency group's next step, as a pure
// function of the group, its members' Jobs and now: which waiting runs it
// admits (and so releases), which it finds missed, and the status that
// records it. The controller (internal/controller/concurrencygroup) reads
// and writes.
//
// The invariants (docs/reliability.md, "Concurrency groups"):
//   - never over the limit: a run's Job is released (spec.suspend set to
//     false) only once a status that lists it in active, written
//     conditionally on the resourceVersion it was planned from, has
//     counted it within spec.maxActive; an entry leaves active only when
//     its Job is seen finished, or gone by a read from the API server;
//     every unfinished Job of the group running without an entry counts
//     as well (but for one in a namespace a cluster group does not
//     select: not a member's, it takes no member's slot), and while those
//     put the group over a limit nothing is released, not even a run
//     admitted before they appeared;
//   - a run is released or missed, never both: the miss is an update of
//     the suspended Job conditional on the resourceVersion that showed it
//     waiting, and a release is an update conditional on the Job not
//     being marked missed;
//   - a cluster group admits no run from a namespace its namespaceSelector
//     does not select (Input.Excluded): such a run is marked missed, as
//     one past its deadline is.
package concurrency

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Input is what a decision looks at.
type Input struct {
	Spec v1alpha1.ConcurrencyGroupSpec
	// Status is the group's, read from the API server.
	Status     v1alpha1.ConcurrencyGroupStatus
	Generation int64
	// Jobs are the group's Jobs: those with its label, and the running
	// Jobs without a group's label of the CronJobs whose annotation names
	// the group (created while the Job webhook was not served, or before
	// the CronJob joined). The Job of every entry of Status.Active is here
	// if it exists: the controller reads the ones its cache lacks from the
	// API server, so an entry whose Job is not here is gone.
	Jobs []*batchv1.Job
	// Upcoming are the members' next runs whose Jobs do not exist yet:
	// predicted (Status.Upcoming), never admitted.
	Upcoming []Upcoming
	// Excluded are the namespaces a ClusterConcurrencyGroup's
	// namespaceSelector does not select, among those of Jobs and Upcoming:
	// their waiting runs are refused, their next runs not predicted.
	Excluded map[string]bool
	Now      time.Time
}

// Upcoming is a member's next run, by the name its Job will have.
type Upcoming struct {
	Namespace, JobName string
	Scheduled          time.Time
	Priority           int32
}

// Dispatch is what the controller does: write Status (if it changed), then
// release, mark and delete.
type Dispatch struct {
	Status v1alpha1.ConcurrencyGroupStatus
	// Release are the admitted runs' Jobs still suspended: each is listed
	// in Status.Active.
	Release []*batchv1.Job
	// Admitted are the runs this plan admits, with how long they waited
	// (for the event on their owner and the wait histogram).
	Admitted []Admission
	// Miss are waiting runs past their start-by: marked missed.
	Miss []*batchv1.Job
	// Refuse are waiting runs from namespaces the group does not select
	// (Input.Excluded): marked missed too, with their own event.
	Refuse []*batchv1.Job
	// Delete are missed runs' Jobs whose owner is not a ScheduledJob
	// (a CronJob's, which the CronJob controller then drops from its
	// active list); a ScheduledJob records its missed run itself, then
	// deletes the Job.
	Delete []*batchv1.Job
	// OverLimit is set when more runs are active than spec.maxActive
	// allows: a member's Job started without the group's admission.
	OverLimit string
	// Wake is when to look again without an event: a second past the
	// earliest start-by of a run still waiting (zero: none), when it is
	// missed (start-by is a whole second, and a run is missed after it).
	Wake time.Time
}

// Admission is one run admitted.
type Admission struct {
	Job    *batchv1.Job
	Waited time.Duration
}

// Decide plans the group's next step.
func Decide(in Input) Dispatch {
	jobs := map[types.NamespacedName]*batchv1.Job{}
	for _, job := range in.Jobs {
		jobs[types.NamespacedName{Namespace: job.Namespace, Name: job.Name}] = job
	}
	plan := Dispatch{Status: *in.Status.DeepCopy()}
	entries, listed, unreleased := plan.keepActive(in.Spec, in.Status.Active, jobs)
	count := newCounter(in.Spec)
	for _, entry := range entries {
		count.add(entry.LabelValue)
	}
	waiting, unlisted := plan.sortOut(in, listed, count)
	plan.releaseAdmitted(in.Spec, unreleased, count)
	entries, stillWaiting := plan.admit(in, entries, waiting, count)
	if over := count.over(); over != "" {
		plan.OverLimit = overLimit(over, unlisted)
	}
	plan.record(in, entries, count.total, stillWaiting)
	plan.Status.Queue, plan.Status.NewRunAdmission, plan.Status.Upcoming = predictQueue(in.Spec, plan.Status.TypicalRunDuration, slotHolders(in.Spec, entries, unlisted), stillWaiting, selected(in.Upcoming, in.Excluded))
	return plan
}

// selected are the upcoming runs of members the group selects.
func selected(upcoming []Upcoming, excluded map[string]bool) []Upcoming {
	if len(excluded) == 0 {
		return upcoming
	}
	return slices.DeleteFunc(slices.Clone(upcoming), func(run Upcoming) bool { return excluded[run.Namespace] })
}

// sortOut goes through the Jobs not listed in active: the missed ones of
// CronJobs are deleted, the running ones counted (and returned: unlisted)
// unless from excluded namespaces, the waiting ones from excluded
// namespaces refused, and the other waiting ones returned in queue
// order.
func (p *Dispatch) sortOut(in Input, listed map[types.UID]bool, count *counter) (waiting, unlisted []*batchv1.Job) {
	for _, job := range in.Jobs {
		switch {
		case listed[job.UID] || job.DeletionTimestamp != nil:
		case isMissed(job):
			if suspended(job) && !OwnedByScheduledJob(job) {
				p.Delete = append(p.Delete, job)
			}
		case finished(job):
		case !suspended(job) && in.Excluded[job.Namespace]:
			// Running without an admission in a namespace the group
			// does not select (labeled by hand, or a CronJob's run past
			// the webhook): no member's run, so it takes no slot, or
			// anyone who can label a Job could fill a cluster group.
		case !suspended(job):
			// Started without an admission (by hand, created past the
			// Job webhook, or before the member joined): it runs, so it
			// counts.
			count.add(labelValue(in.Spec, job))
			unlisted = append(unlisted, job)
		case in.Excluded[job.Namespace]:
			p.Refuse = append(p.Refuse, job)
		default:
			waiting = append(waiting, job)
		}
	}
	slices.SortFunc(waiting, inQueueOrder)
	return waiting, unlisted
}

// admit goes down the queue: a run past its start-by is missed, one with
// room is admitted (listed, released), the others wait; Wake is when the
// first of those is missed.
func (p *Dispatch) admit(in Input, entries []v1alpha1.GroupRun, waiting []*batchv1.Job, count *counter) (admitted []v1alpha1.GroupRun, stillWaiting []*batchv1.Job) {
	for _, job := range waiting {
		value := labelValue(in.Spec, job)
		switch startBy, ok := startByOf(job); {
		case ok && in.Now.After(startBy):
			p.Miss = append(p.Miss, job)
		case count.hasRoom(value):
			count.add(value)
			entries = append(entries, v1alpha1.GroupRun{Namespace: job.Namespace, Name: job.Name, UID: job.UID, LabelValue: value, AdmittedAt: metav1.NewTime(in.Now)})
			p.Release = append(p.Release, job)
			p.Admitted = append(p.Admitted, Admission{Job: job, Waited: max(in.Now.Sub(waitingSince(job)), 0)})
			p.Status.Admitted++
		default:
			stillWaiting = append(stillWaiting, job)
			if missedAt := startBy.Add(time.Second); ok && (p.Wake.IsZero() || missedAt.Before(p.Wake)) {
				p.Wake = missedAt
			}
		}
	}
	return entries, stillWaiting
}

// keepActive keeps the entries whose run may still be running, and
// returns the Jobs of those still suspended: admitted, but not released
// yet (a controller that admitted them may have died before releasing).
// An entry goes when its Job finished, is gone (or is another Job of the
// same name), or was marked missed before it could be released. Its label
// value is read again from its Job, as the spec's key says now.
func (p *Dispatch) keepActive(spec v1alpha1.ConcurrencyGroupSpec, active []v1alpha1.GroupRun, jobs map[types.NamespacedName]*batchv1.Job) (kept []v1alpha1.GroupRun, listed map[types.UID]bool, unreleased []*batchv1.Job) {
	listed = map[types.UID]bool{}
	for _, entry := range active {
		job := jobs[types.NamespacedName{Namespace: entry.Namespace, Name: entry.Name}]
		if job == nil || job.UID != entry.UID || finished(job) || (isMissed(job) && suspended(job)) {
			if job != nil && job.UID == entry.UID {
				p.learnDuration(entry, job)
			}
			continue
		}
		entry.LabelValue = labelValue(spec, job)
		kept = append(kept, entry)
		listed[job.UID] = true
		if suspended(job) && job.DeletionTimestamp == nil {
			unreleased = append(unreleased, job)
		}
	}
	return kept, listed, unreleased
}

// releaseAdmitted releases the admitted runs not released yet, unless the
// group is over a limit: a run that started without an admission (a
// CronJob's Job created while the Job webhook was not served) may have
// appeared after they were admitted. They keep their slots, and are
// released once the runs over the limit have finished.
func (p *Dispatch) releaseAdmitted(spec v1alpha1.ConcurrencyGroupSpec, unreleased []*batchv1.Job, count *counter) {
	for _, job := range unreleased {
		if count.withinLimits(labelValue(spec, job)) {
			p.Release = append(p.Release, job)
		}
	}
}

// overLimit says which limit the active runs are over, and names the
// runs that started without the group's admission (at most three).
func overLimit(over string, unlisted []*batchv1.Job) string {
	var names []string
	for _, job := range unlisted {
		names = append(names, job.Namespace+"/"+job.Name)
	}
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("%d more", len(names)-3))
	}
	return fmt.Sprintf("%s: started without the group's admission: %s (by hand, or a CronJob's Job created while no replica of ontime served "+
		"the Job webhook); the group admits nothing until it is back within its limits", over, strings.Join(names, ", "))
}

// record writes the status: the entries sorted, the counts, the oldest
// wait and the Saturated condition.
func (p *Dispatch) record(in Input, entries []v1alpha1.GroupRun, active int, waiting []*batchv1.Job) {
	slices.SortFunc(entries, func(a, b v1alpha1.GroupRun) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	p.Status.Active = entries
	p.Status.ActiveCount = int32(active)
	p.Status.Waiting = int32(len(waiting))
	p.Status.OldestWaitingSince = nil
	for _, job := range waiting {
		since := waitingSince(job)
		if p.Status.OldestWaitingSince == nil || since.Before(p.Status.OldestWaitingSince.Time) {
			p.Status.OldestWaitingSince = &metav1.Time{Time: since}
		}
	}
	condition := metav1.Condition{Type: v1alpha1.GroupSaturated, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonHasRoom,
		Message: fmt.Sprintf("%d of %d active, none waiting", active, in.Spec.MaxActive), ObservedGeneration: in.Generation}
	if len(waiting) > 0 {
		condition.Status, condition.Reason = metav1.ConditionTrue, v1alpha1.ReasonRunsWaiting
		condition.Message = fmt.Sprintf("%d of %d active, %d waiting; the oldest since %s", active, in.Spec.MaxActive, len(waiting), p.Status.OldestWaitingSince.UTC().Format(time.RFC3339))
	}
	setCondition(&p.Status.Conditions, condition, in.Now)
}

// setCondition sets a condition, keeping its transition time while its
// status stays, and writing nothing new when nothing but the time would
// change.
func setCondition(conditions *[]metav1.Condition, c metav1.Condition, now time.Time) {
	if old := meta.FindStatusCondition(*conditions, c.Type); old != nil && old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	} else {
		c.LastTransitionTime = metav1.NewTime(now)
	}
	meta.SetStatusCondition(conditions, c)
}

// counter counts active runs, in all and per label value.
type counter struct {
	spec    v1alpha1.ConcurrencyGroupSpec
	total   int
	byValue map[string]int
}

func newCounter(spec v1alpha1.ConcurrencyGroupSpec) *counter {
	return &counter{spec: spec, byValue: map[string]int{}}
}

func (c *counter) add(value string) {
	c.total++
	c.byValue[value]++
}

// over says which limit the runs counted are over ("": none).
func (c *counter) over() string {
	if c.total > int(c.spec.MaxActive) {
		return fmt.Sprintf("%d runs active, more than maxActive %d", c.total, c.spec.MaxActive)
	}
	limit := c.spec.LimitPerLabelValue
	if limit == nil {
		return ""
	}
	for _, value := range slices.Sorted(maps.Keys(c.byValue)) {
		if n := c.byValue[value]; n > int(limit.MaxActive) {
			return fmt.Sprintf("%d runs of %s=%q active, more than limitPerLabelValue.maxActive %d", n, limit.Key, value, limit.MaxActive)
		}
	}
	return ""
}

// withinLimits reports whether the runs counted, one of them of value,
// are within the limits.
func (c *counter) withinLimits(value string) bool {
	if c.total > int(c.spec.MaxActive) {
		return false
	}
	limit := c.spec.LimitPerLabelValue
	return limit == nil || c.byValue[value] <= int(limit.MaxActive)
}

func (c *counter) hasRoom(value string) bool {
	if c.total >= int(c.spec.MaxActive) {
		return false
	}
	limit := c.spec.LimitPerLabelValue
	return limit == nil || c.byValue[value] < int(limit.MaxActive)
}

// labelValue is a Job's value of the per-value limit's label ("" without
// a limit).
func labelValue(spec v1alpha1.ConcurrencyGroupSpec, job *batchv1.Job) string {
	if spec.LimitPerLabelValue == nil {
		return ""
	}
	return job.Labels[spec.LimitPerLabelValue.Key]
}

// inQueueOrder: higher priority first, then the earlier scheduled time
// (the creation time for a run without one), then by namespace and name.
func inQueueOrder(a, b *batchv1.Job) int {
	return cmp.Or(cmp.Compare(priorityOf(b), priorityOf(a)), scheduledOf(a).Compare(scheduledOf(b)),
		a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

func priorityOf(job *batchv1.Job) int {
	priority, _ := strconv.Atoi(job.Annotations[v1alpha1.GroupPriorityAnnotation])
	return priority
}

func scheduledOf(job *batchv1.Job) time.Time {
	if t, ok := v1alpha1.ScheduledTime(job); ok {
		return t
	}
	return job.CreationTimestamp.Time
}

// waitingSince is when a run began to wait: its scheduled time, or its
// Job's creation if later (a backfill's or a triggered run's).
func waitingSince(job *batchv1.Job) time.Time {
	scheduled := scheduledOf(job)
	if job.CreationTimestamp.After(scheduled) {
		return job.CreationTimestamp.Time
	}
	return scheduled
}

func startByOf(job *batchv1.Job) (time.Time, bool) {
	value, ok := job.Annotations[v1alpha1.StartByAnnotation]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, value)
	return t, err == nil
}

func suspended(job *batchv1.Job) bool {
	return job.Spec.Suspend != nil && *job.Spec.Suspend
}

func finished(job *batchv1.Job) bool {
	_, done := v1alpha1.JobFinished(job)
	return done
}

func isMissed(job *batchv1.Job) bool {
	_, ok := job.Annotations[v1alpha1.MissedAnnotation]
	return ok
}

// OwnedByScheduledJob reports whether a ScheduledJob controls job: its
// missed run is then recorded, and its Job deleted, by the ScheduledJob's
// controller, not the group's.
func OwnedByScheduledJob(job *batchv1.Job) bool {
	ref := metav1.GetControllerOf(job)
	return ref != nil && ref.Kind == "ScheduledJob" && ref.APIVersion == v1alpha1.GroupVersion.String()
}

// Owner is the object a run's events go to: its controller (a ScheduledJob
// or a CronJob), else the Job itself.
func Owner(job *batchv1.Job) *corev1.ObjectReference {
	if ref := metav1.GetControllerOf(job); ref != nil {
		return &corev1.ObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID, Namespace: job.Namespace}
	}
	return &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Namespace: job.Namespace}
}
