package planner

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Named instants of upstream's TestControllerV2SyncCronJob. 2016-05-19 is a
// Thursday.
var (
	justBeforeThePriorHour = mustTime("2016-05-19T08:59:00Z")
	justAfterThePriorHour  = mustTime("2016-05-19T09:01:00Z")
	justBeforeTheHour      = mustTime("2016-05-19T09:59:00Z")
	topOfTheHour           = mustTime("2016-05-19T10:00:00Z")
	justAfterTheHour       = mustTime("2016-05-19T10:01:00Z")
	weekAfterTheHour       = mustTime("2016-05-26T10:00:00Z")
)

const (
	onTheHour = "0 * * * ?"
	everyHour = "@every 1h"
)

func mustTime(value string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		panic(err)
	}
	return t
}

// scheduledJob is upstream's fixture: snazzycats/mycronjob.
func scheduledJob(schedule string, created time.Time) *v1alpha1.ScheduledJob {
	return &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{
			Name: "mycronjob", Namespace: "snazzycats", UID: "1a2b3c", Generation: 1,
			CreationTimestamp: metav1.NewTime(created),
		},
		Spec: v1alpha1.ScheduledJobSpec{
			Schedule:                   schedule,
			ConcurrencyPolicy:          v1alpha1.AllowConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](3),
			FailedJobsHistoryLimit:     ptr.To[int32](1),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"x": "y"}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
				}}},
			},
		},
	}
}

// childJob is upstream's "prev" Job, created for a run scheduled at
// `scheduled`.
func childJob(sj *v1alpha1.ScheduledJob, scheduled time.Time, uid string, done bool) *batchv1.Job {
	job := scheduling{sj: sj, loc: time.UTC}.newRun(sj.JobName(scheduled), scheduled).Job
	job.UID = types.UID(uid)
	job.CreationTimestamp = metav1.NewTime(scheduled)
	if done {
		job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		job.Status.CompletionTime = &metav1.Time{Time: scheduled.Add(10 * time.Second)}
	}
	return job
}

// want is what a test expects. Events include those of the actions
// (SuccessfulCreate, SuccessfulDelete), as upstream's tests count them.
type want struct {
	create       string // Job name, or "" for none
	deletes      []string
	events       []string // reasons, in order
	requeue      time.Duration
	noRequeue    bool
	lastSchedule time.Time
	lastMissed   time.Time
	lastSuccess  time.Time
	next         time.Time
	active       int
	ready        string // Ready reason
}

type plannerCase struct {
	// spec
	schedule string
	policy   v1alpha1.ConcurrencyPolicy
	deadline *int64
	suspend  bool
	timeZone string
	// status and environment
	created      time.Time
	lastSchedule time.Time
	prevJobAt    time.Time // a child Job scheduled at this time
	prevDone     bool
	prevActive   bool // the child Job is listed in status.active
	now          time.Time
	// differs says how and why ontime deliberately differs from upstream.
	differs string
	want    want
}

func (c plannerCase) input() Input {
	sj := scheduledJob(c.schedule, c.created)
	if c.policy != "" {
		sj.Spec.ConcurrencyPolicy = c.policy
	}
	sj.Spec.StartingDeadlineSeconds = c.deadline
	if c.suspend {
		sj.Spec.Suspend = ptr.To(true)
	}
	if c.timeZone != "" {
		sj.Spec.TimeZone = ptr.To(c.timeZone)
	}
	if !c.lastSchedule.IsZero() {
		sj.Status.LastScheduleTime = &metav1.Time{Time: c.lastSchedule}
	}
	var jobs []*batchv1.Job
	if !c.prevJobAt.IsZero() {
		job := childJob(sj, c.prevJobAt, "1234", c.prevDone)
		jobs = append(jobs, job)
		if c.prevActive {
			sj.Status.Active = []corev1.ObjectReference{refOf(job)}
		}
	}
	return Input{ScheduledJob: sj, Jobs: jobs, Now: c.now}
}

// TestUpstreamVectors runs the cases of upstream's TestControllerV2SyncCronJob
// (kubernetes/kubernetes pkg/controller/cronjob/cronjob_controllerv2_test.go),
// with where ontime differs and why.
func TestUpstreamVectors(t *testing.T) {
	short, medium, long := ptr.To[int64](10), ptr.To[int64](7200), ptr.To[int64](1000000)
	cases := map[string]plannerCase{
		"1 never ran, not valid schedule": {schedule: "obvious error schedule", created: justBeforeTheHour, now: justBeforeTheHour,
			differs: "Ready=False InvalidSchedule says why; upstream only emits the event",
			want:    want{events: []string{"UnparseableSchedule"}, noRequeue: true, ready: "InvalidSchedule"}},
		"2 never ran, not valid time zone": {schedule: onTheHour, timeZone: "bad timezone", created: justBeforeTheHour, now: justBeforeTheHour,
			differs: "Ready=False UnknownTimeZone says why",
			want:    want{events: []string{"UnknownTimeZone"}, noRequeue: true, ready: "UnknownTimeZone"}},
		"3 never ran, not time": {schedule: onTheHour, created: justBeforeTheHour, now: justBeforeTheHour,
			want: want{requeue: time.Minute + nextScheduleDelta, next: topOfTheHour}},
		"3 never ran, not time, in zone": {schedule: onTheHour, timeZone: "America/New_York", created: justBeforeTheHour, now: justBeforeTheHour,
			want: want{requeue: time.Minute + nextScheduleDelta, next: topOfTheHour}},
		"4 never ran, is time": {schedule: onTheHour, created: justBeforeTheHour, now: justAfterTheHour,
			want: want{create: "mycronjob-24394200", events: []string{"SuccessfulCreate"}, requeue: 59*time.Minute + nextScheduleDelta,
				lastSchedule: topOfTheHour, active: 1}},
		"4 never ran, is time, F": {schedule: onTheHour, policy: v1alpha1.ForbidConcurrent, created: justBeforeTheHour, now: justAfterTheHour,
			want: want{create: "mycronjob-24394200", events: []string{"SuccessfulCreate"}, requeue: 59*time.Minute + nextScheduleDelta, lastSchedule: topOfTheHour, active: 1}},
		"5 never ran, is time in zone": {schedule: onTheHour, timeZone: "America/New_York", created: justBeforeTheHour, now: justAfterTheHour,
			want: want{create: "mycronjob-24394200", events: []string{"SuccessfulCreate"}, requeue: 59*time.Minute + nextScheduleDelta, lastSchedule: topOfTheHour, active: 1}},
		"6 TZ in schedule wins over timeZone": {schedule: "TZ=UTC 0 * * * ?", timeZone: "America/New_York", created: justBeforeTheHour, now: justAfterTheHour,
			want: want{create: "mycronjob-24394200", events: []string{"UnsupportedSchedule", "SuccessfulCreate"}, requeue: 59*time.Minute + nextScheduleDelta, lastSchedule: topOfTheHour, active: 1}},
		"7 never ran, is time, suspended": {schedule: onTheHour, suspend: true, created: justBeforeTheHour, now: justAfterTheHour,
			differs: "Ready=False Suspended", want: want{noRequeue: true, ready: "Suspended"}},
		"8 never ran, is time, past deadline": {schedule: onTheHour, deadline: short, created: justBeforeTheHour, now: topOfTheHour.Add(12 * time.Minute),
			differs: "the miss is visible (Q1): MissSchedule and lastMissedTime; upstream's MissSchedule is dead code",
			want:    want{events: []string{"MissSchedule"}, requeue: 48*time.Minute + nextScheduleDelta, lastMissed: topOfTheHour}},
		"9 never ran, is time, not past deadline": {schedule: onTheHour, deadline: long, created: justBeforeTheHour, now: justAfterTheHour,
			want: want{create: "mycronjob-24394200", events: []string{"SuccessfulCreate"}, requeue: 59*time.Minute + nextScheduleDelta, lastSchedule: topOfTheHour, active: 1}},
		"10 prev ran but done, not time": {schedule: onTheHour, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevDone: true, now: justBeforeTheHour,
			want: want{requeue: time.Minute + nextScheduleDelta, lastSchedule: justAfterThePriorHour, lastSuccess: justAfterThePriorHour.Add(10 * time.Second)}},
		"11 prev ran but done, is time": {schedule: onTheHour, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevDone: true, now: justAfterTheHour,
			want: want{create: "mycronjob-24394200", events: []string{"SuccessfulCreate"}, requeue: 59*time.Minute + nextScheduleDelta,
				lastSchedule: topOfTheHour, lastSuccess: justAfterThePriorHour.Add(10 * time.Second), active: 1}},
		"13 prev ran but done, is time, past deadline": {schedule: onTheHour, deadline: short, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevDone: true, now: justAfterTheHour,
			differs: "MissSchedule and lastMissedTime (Q1)",
			want:    want{events: []string{"MissSchedule"}, requeue: 59*time.Minute + nextScheduleDelta, lastSchedule: justAfterThePriorHour, lastMissed: topOfTheHour, lastSuccess: justAfterThePriorHour.Add(10 * time.Second)}},
		"14 still active, not time": {schedule: onTheHour, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevActive: true, now: justBeforeTheHour,
			want: want{requeue: time.Minute + nextScheduleDelta, lastSchedule: justAfterThePriorHour, active: 1}},
		"15 still active, is time, A": {schedule: onTheHour, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevActive: true, now: justAfterTheHour,
			want: want{create: "mycronjob-24394200", events: []string{"SuccessfulCreate"}, requeue: 59*time.Minute + nextScheduleDelta, lastSchedule: topOfTheHour, active: 2}},
		"16 still active, is time, F": {schedule: onTheHour, policy: v1alpha1.ForbidConcurrent, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevActive: true, now: justAfterTheHour,
			differs: "nextScheduleTime shows the waiting run (10:00)",
			want:    want{events: []string{"JobAlreadyActive"}, requeue: 59*time.Minute + nextScheduleDelta, lastSchedule: justAfterThePriorHour, active: 1, next: topOfTheHour}},
		"17 still active, is time, R": {schedule: onTheHour, policy: v1alpha1.ReplaceConcurrent, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevActive: true, now: justAfterTheHour,
			want: want{deletes: []string{"mycronjob-24394141"}, create: "mycronjob-24394200", events: []string{"SuccessfulDelete", "SuccessfulCreate"},
				requeue: 59*time.Minute + nextScheduleDelta, lastSchedule: topOfTheHour, active: 1}},
		"19 still active, is time, past deadline": {schedule: onTheHour, deadline: short, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevActive: true, now: justAfterTheHour,
			differs: "MissSchedule and lastMissedTime (Q1)",
			want:    want{events: []string{"MissSchedule"}, requeue: 59*time.Minute + nextScheduleDelta, lastSchedule: justAfterThePriorHour, lastMissed: topOfTheHour, active: 1}},
		"20 prev ran but done, long overdue, no deadline": {schedule: onTheHour, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevDone: true, now: weekAfterTheHour,
			differs: "the 167 skipped runs are counted exactly and recorded in lastMissedTime (Q3/Q4); a MissSchedule event for the latest skipped run, recorded in lastMissedTime (Q1)",
			want: want{create: "mycronjob-24404280", events: []string{"MissSchedule", "TooManyMissedTimes", "SuccessfulCreate"}, requeue: time.Hour + nextScheduleDelta,
				lastSchedule: weekAfterTheHour, lastMissed: weekAfterTheHour.Add(-time.Hour), lastSuccess: justAfterThePriorHour.Add(10 * time.Second), active: 1}},
		"21 prev ran but done, long overdue, past medium deadline": {schedule: onTheHour, deadline: medium, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevDone: true, now: weekAfterTheHour,
			differs: "a MissSchedule event for the latest skipped run, recorded in lastMissedTime (Q1)",
			want: want{create: "mycronjob-24404280", events: []string{"MissSchedule", "SuccessfulCreate"}, requeue: time.Hour + nextScheduleDelta,
				lastSchedule: weekAfterTheHour, lastMissed: weekAfterTheHour.Add(-time.Hour), lastSuccess: justAfterThePriorHour.Add(10 * time.Second), active: 1}},
		"21 prev ran but done, long overdue, past short deadline": {schedule: onTheHour, deadline: short, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterThePriorHour, prevDone: true, now: weekAfterTheHour,
			differs: "a MissSchedule event for the latest skipped run, recorded in lastMissedTime (Q1)",
			want: want{create: "mycronjob-24404280", events: []string{"MissSchedule", "SuccessfulCreate"}, requeue: time.Hour + nextScheduleDelta,
				lastSchedule: weekAfterTheHour, lastMissed: weekAfterTheHour.Add(-time.Hour), lastSuccess: justAfterThePriorHour.Add(10 * time.Second), active: 1}},
		"22 this ran but done, time drifted back, F": {schedule: onTheHour, policy: v1alpha1.ForbidConcurrent, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: justAfterTheHour, prevDone: true, now: justBeforeTheHour,
			differs: "lastScheduleTime is rebuilt from the Job's scheduled-time annotation (10:01)",
			want:    want{requeue: time.Minute + nextScheduleDelta, lastSchedule: justAfterTheHour, lastSuccess: justAfterTheHour.Add(10 * time.Second)}},
		"23 this started but went missing from the cache, not past deadline": {schedule: onTheHour, deadline: long, created: justBeforeThePriorHour, lastSchedule: justAfterThePriorHour,
			prevJobAt: topOfTheHour, prevActive: true, now: justAfterTheHour.Add(100 * time.Millisecond),
			want: want{requeue: 59*time.Minute - 100*time.Millisecond + nextScheduleDelta, lastSchedule: topOfTheHour, active: 1}},
		"25 @every, never ran, is time": {schedule: everyHour, created: justBeforeThePriorHour, now: justBeforeTheHour,
			want: want{create: "mycronjob-24394199", events: []string{"SuccessfulCreate"}, requeue: time.Hour + nextScheduleDelta, lastSchedule: justBeforeTheHour, active: 1}},
		"26 @every, never ran, is time, past deadline": {schedule: everyHour, deadline: short, created: justBeforeThePriorHour, now: justBeforeTheHour.Add(11 * time.Second),
			differs: "MissSchedule and lastMissedTime (Q1)",
			want:    want{events: []string{"MissSchedule"}, requeue: 59*time.Minute + 49*time.Second + nextScheduleDelta, lastMissed: justBeforeTheHour}},
		"27 @every, never ran, is time, not past deadline": {schedule: everyHour, deadline: long, created: justBeforeThePriorHour, now: justBeforeTheHour.Add(9 * time.Second),
			want: want{create: "mycronjob-24394199", events: []string{"SuccessfulCreate"}, requeue: 59*time.Minute + 51*time.Second + nextScheduleDelta, lastSchedule: justBeforeTheHour, active: 1}},
		"S6 @every, prev ran but done, is time, not past deadline": {schedule: everyHour, deadline: short, created: justBeforeThePriorHour, lastSchedule: justBeforeTheHour,
			prevJobAt: justBeforeTheHour, prevDone: true, now: mustTime("2016-05-19T10:59:09Z"),
			differs: "upstream never starts it (Q2: the deadline moves the @every anchor); ontime does, 9 s late",
			want: want{create: "mycronjob-24394259", events: []string{"SuccessfulCreate"}, requeue: 59*time.Minute + 51*time.Second + nextScheduleDelta,
				lastSchedule: mustTime("2016-05-19T10:59:00Z"), lastSuccess: justBeforeTheHour.Add(10 * time.Second), active: 1}},
		"28 @every, prev ran but done, is time": {schedule: everyHour, created: justBeforeThePriorHour, lastSchedule: justBeforeTheHour,
			prevJobAt: justBeforeTheHour, prevDone: true, now: mustTime("2016-05-19T11:00:00Z"),
			want: want{create: "mycronjob-24394259", events: []string{"SuccessfulCreate"}, requeue: 59*time.Minute + nextScheduleDelta,
				lastSchedule: mustTime("2016-05-19T10:59:00Z"), lastSuccess: justBeforeTheHour.Add(10 * time.Second), active: 1}},
		"29 @every, still active, is time": {schedule: everyHour, created: justBeforeThePriorHour, lastSchedule: justBeforeThePriorHour,
			prevJobAt: justBeforeThePriorHour, prevActive: true, now: justAfterTheHour,
			want: want{create: "mycronjob-24394199", events: []string{"SuccessfulCreate"}, requeue: 58*time.Minute + nextScheduleDelta, lastSchedule: justBeforeTheHour, active: 2}},
		"30 @every, prev ran but done, long overdue": {schedule: everyHour, created: justAfterThePriorHour, lastSchedule: justAfterTheHour,
			prevJobAt: justAfterTheHour, prevDone: true, now: weekAfterTheHour,
			differs: "a MissSchedule event for the latest skipped run, recorded in lastMissedTime (Q1)",
			want: want{create: "mycronjob-24404221", events: []string{"MissSchedule", "TooManyMissedTimes", "SuccessfulCreate"}, requeue: time.Minute + nextScheduleDelta,
				lastSchedule: mustTime("2016-05-26T09:01:00Z"), lastMissed: mustTime("2016-05-26T08:01:00Z"), lastSuccess: justAfterTheHour.Add(10 * time.Second), active: 1}},
		"34 weekday hour list after a missed day": {schedule: "30 10,11,12 * * 1-5", created: mustTime("2016-05-19T10:00:00Z"), lastSchedule: mustTime("2016-05-19T10:30:00Z"),
			now:     mustTime("2016-05-20T16:30:00Z"),
			differs: "upstream's estimate finds no missed run and starts nothing (Q3); Prev finds Friday 12:30 and starts it; a MissSchedule event for the latest skipped run, recorded in lastMissedTime (Q1)",
			want: want{create: "mycronjob-24395790", events: []string{"MissSchedule", "SuccessfulCreate"}, requeue: 66*time.Hour + nextScheduleDelta,
				lastSchedule: mustTime("2016-05-20T12:30:00Z"), lastMissed: mustTime("2016-05-20T11:30:00Z"), active: 1}},
		"36 rogue schedule never fires": {schedule: "59 23 31 2 *", created: mustTime("2016-05-19T10:00:10Z"), now: mustTime("2016-05-19T11:00:00Z"),
			differs: "rejected at parse with Ready=False InvalidSchedule instead of failing to find an interval",
			want:    want{events: []string{"InvalidSchedule"}, noRequeue: true, ready: "InvalidSchedule"}},
		"38a once a week, missed two runs": {schedule: "0 12 * * 4", created: mustTime("2016-05-19T10:00:00Z"), lastSchedule: mustTime("2016-05-19T12:00:00Z"),
			now:     mustTime("2016-06-07T11:30:00Z"),
			differs: "a MissSchedule event for the latest skipped run, recorded in lastMissedTime (Q1)",
			want: want{create: "mycronjob-24414480", events: []string{"MissSchedule", "SuccessfulCreate"}, requeue: 48*time.Hour + 30*time.Minute + nextScheduleDelta,
				lastSchedule: mustTime("2016-06-02T12:00:00Z"), lastMissed: mustTime("2016-05-26T12:00:00Z"), active: 1}},
		"38b no previous run": {schedule: "0 12 * * 5", created: mustTime("2016-05-19T10:00:00Z"), now: mustTime("2016-05-19T16:00:00Z"),
			want: want{requeue: 20*time.Hour + nextScheduleDelta, next: mustTime("2016-05-20T12:00:00Z")}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { checkPlan(t, c) })
	}
}

// succeed is the outcome of a plan whose actions all succeed, reported in
// the order the reconciler carries them out: Replace deletions, the
// scheduled run, the triggered run, history deletions. Created Jobs get the
// UID "created-<name>".
func succeed(plan Plan) Outcome {
	var results []Result
	for _, d := range plan.Deletes {
		if d.Reason == DeleteForReplace {
			results = append(results, Deleted(d.Job))
		}
	}
	for _, run := range []*Run{plan.Create, plan.Trigger} {
		if run != nil {
			job := run.Job.DeepCopy()
			job.UID = types.UID("created-" + job.Name)
			results = append(results, Created(run, job))
		}
	}
	for _, d := range plan.Deletes {
		if d.Reason == DeleteForHistoryLimit {
			results = append(results, Deleted(d.Job))
		}
	}
	return plan.Finish(results...)
}

// checkPlan runs the planner, reports every action as succeeded, and
// compares with the expectations.
func checkPlan(t *testing.T, c plannerCase) {
	t.Helper()
	in := c.input()
	plan := Decide(in)
	out := succeed(plan)
	checkActions(t, plan, out, c.want)
	status := out.Status
	checkTime(t, "lastScheduleTime", status.LastScheduleTime, c.want.lastSchedule)
	checkTime(t, "lastMissedTime", status.LastMissedTime, c.want.lastMissed)
	checkTime(t, "lastSuccessfulTime", status.LastSuccessfulTime, c.want.lastSuccess)
	if !c.want.next.IsZero() {
		checkTime(t, "nextScheduleTime", status.NextScheduleTime, c.want.next)
	}
	if len(status.Active) != c.want.active {
		t.Errorf("active %d, want %d", len(status.Active), c.want.active)
	}
	if status.ActiveCount != int32(c.want.active) {
		t.Errorf("activeCount %d, want %d", status.ActiveCount, c.want.active)
	}
	checkReady(t, status, in.ScheduledJob.Generation, c.want.ready)
}

// checkActions compares the Job created and deleted, the events and the
// requeue.
func checkActions(t *testing.T, plan Plan, out Outcome, w want) {
	t.Helper()
	var deletes []string
	for _, d := range plan.Deletes {
		deletes = append(deletes, d.Job.Name)
	}
	create := ""
	if plan.Create != nil {
		create = plan.Create.Job.Name
	}
	if create != w.create {
		t.Errorf("create %q, want %q", create, w.create)
	}
	if !slices.Equal(deletes, w.deletes) {
		t.Errorf("deletes %v, want %v", deletes, w.deletes)
	}
	if events := reasons(out); !slices.Equal(events, w.events) {
		t.Errorf("events %v, want %v", events, w.events)
	}
	switch {
	case w.noRequeue && plan.RequeueAfter != 0:
		t.Errorf("requeue after %v, want none", plan.RequeueAfter)
	case !w.noRequeue && plan.RequeueAfter != w.requeue:
		t.Errorf("requeue after %v, want %v", plan.RequeueAfter, w.requeue)
	}
}

// checkReady compares the Ready condition's reason (Scheduled when
// wantReason is empty) and the generations status describes.
func checkReady(t *testing.T, status v1alpha1.ScheduledJobStatus, generation int64, wantReason string) {
	t.Helper()
	if wantReason == "" {
		wantReason = v1alpha1.ReasonScheduled
	}
	ready := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady)
	switch {
	case ready == nil:
		t.Errorf("no Ready condition, want reason %s", wantReason)
	case ready.Reason != wantReason:
		t.Errorf("Ready reason %s (%s), want %s", ready.Reason, ready.Message, wantReason)
	case ready.ObservedGeneration != generation:
		t.Errorf("Ready observedGeneration %d, want %d", ready.ObservedGeneration, generation)
	}
	if status.ObservedGeneration != generation {
		t.Errorf("observedGeneration %d, want %d", status.ObservedGeneration, generation)
	}
}

func checkTime(t *testing.T, name string, got *metav1.Time, want time.Time) {
	t.Helper()
	switch {
	case want.IsZero() && got != nil:
		t.Errorf("%s = %v, want unset", name, got.Time)
	case !want.IsZero() && (got == nil || !got.Time.Equal(want)):
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

// TestBuildJob is upstream's TestGetJobFromTemplate2 (S3).
func TestBuildJob(t *testing.T) {
	sj := scheduledJob(onTheHour, justBeforeTheHour)
	rome, _ := v1alpha1.LoadTimeZone("Europe/Rome")
	for _, c := range []struct {
		loc  *time.Location
		want string
	}{{time.UTC, "2016-05-19T10:00:00Z"}, {rome, "2016-05-19T12:00:00+02:00"}} {
		job := buildJob(sj, sj.JobName(topOfTheHour), topOfTheHour, c.loc)
		if job.Name != "mycronjob-24394200" {
			t.Errorf("name %q", job.Name)
		}
		if want := map[string]string{"a": "b", v1alpha1.ScheduledJobLabel: "mycronjob"}; !maps.Equal(job.Labels, want) {
			t.Errorf("labels %v, want the template's plus the ScheduledJob's name: %v", job.Labels, want)
		}
		if want := map[string]string{"x": "y", v1alpha1.ScheduledTimestampAnnotation: c.want}; !maps.Equal(job.Annotations, want) {
			t.Errorf("annotations %v, want the template's plus scheduled time: %v", job.Annotations, want)
		}
		want := metav1.OwnerReference{APIVersion: "ontime.dev/v1alpha1", Kind: "ScheduledJob", Name: sj.Name, UID: sj.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
		if owner := metav1.GetControllerOf(job); owner == nil || !reflect.DeepEqual(*owner, want) {
			t.Errorf("owner reference %+v, want %+v", owner, want)
		}
	}
	// The ScheduledJob's label wins over a template label of the same key,
	// so that a template cannot hide a Job from --job-cache=owned.
	sj.Spec.JobTemplate.Labels[v1alpha1.ScheduledJobLabel] = "someone-else"
	if got := buildJob(sj, "x", topOfTheHour, time.UTC).Labels[v1alpha1.ScheduledJobLabel]; got != "mycronjob" {
		t.Errorf("%s = %q, want the ScheduledJob's name", v1alpha1.ScheduledJobLabel, got)
	}
	delete(sj.Spec.JobTemplate.Labels, v1alpha1.ScheduledJobLabel)
	// The template is copied, not shared.
	job := buildJob(sj, "x", topOfTheHour, time.UTC)
	job.Labels["a"] = "changed"
	if sj.Spec.JobTemplate.Labels["a"] != "b" {
		t.Error("buildJob shares the template's labels map")
	}
}
