package concurrency

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

var now = time.Date(2026, 11, 27, 10, 0, 30, 0, time.UTC)

// run is a member's Job: waiting (suspended) unless changed by the options.
func run(name string, scheduled time.Duration, opts ...func(*batchv1.Job)) *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team", UID: types.UID(name + "-uid"),
		CreationTimestamp: metav1.NewTime(now.Add(scheduled)),
		OwnerReferences:   []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ScheduledJob", Name: "sj", Controller: ptr.To(true)}},
		Annotations:       map[string]string{v1alpha1.ScheduledTimestampAnnotation: now.Add(scheduled).Format(time.RFC3339)}}}
	v1alpha1.JoinGroup(job, v1alpha1.ConcurrencyGroupRef{Name: "db"}, nil)
	for _, opt := range opts {
		opt(job)
	}
	return job
}

func running(job *batchv1.Job) { job.Spec.Suspend = ptr.To(false) }
func done(job *batchv1.Job) {
	running(job)
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
}
func missed(job *batchv1.Job) { job.Annotations[v1alpha1.MissedAnnotation] = now.Format(time.RFC3339) }
func ofCronJob(job *batchv1.Job) {
	job.OwnerReferences[0].APIVersion, job.OwnerReferences[0].Kind = "batch/v1", "CronJob"
}

// pastTheWebhook is a CronJob's Job created while the Job webhook was not
// served: running from its creation, without the group's label.
func pastTheWebhook(job *batchv1.Job) {
	ofCronJob(job)
	running(job)
	delete(job.Labels, v1alpha1.GroupLabel)
}
func priority(p int) func(*batchv1.Job) {
	return func(job *batchv1.Job) { job.Annotations[v1alpha1.GroupPriorityAnnotation] = strconv.Itoa(p) }
}
func tenant(v string) func(*batchv1.Job) { return func(job *batchv1.Job) { job.Labels["tenant"] = v } }
func inNamespace(namespace string) func(*batchv1.Job) {
	return func(job *batchv1.Job) { job.Namespace = namespace }
}
func startBy(d time.Duration) func(*batchv1.Job) {
	return func(job *batchv1.Job) { job.Annotations[v1alpha1.StartByAnnotation] = now.Add(d).Format(time.RFC3339) }
}

func entry(job *batchv1.Job) v1alpha1.GroupRun {
	return v1alpha1.GroupRun{Namespace: job.Namespace, Name: job.Name, UID: job.UID, AdmittedAt: metav1.NewTime(now.Add(-time.Minute))}
}

func names(jobs []*batchv1.Job) []string {
	var out []string
	for _, job := range jobs {
		out = append(out, job.Name)
	}
	return out
}

func TestDecide(t *testing.T) {
	perTenant := &v1alpha1.LabelValueLimit{Key: "tenant", MaxActive: 1}
	for _, tc := range []struct {
		name      string
		max       int32
		perValue  *v1alpha1.LabelValueLimit
		excluded  []string       // namespaces the group does not select
		active    []*batchv1.Job // listed in status.active
		jobs      []*batchv1.Job // not listed
		release   []string
		miss      []string
		refuse    []string
		delete    []string
		waiting   int32
		count     int32
		overLimit bool
		wake      time.Time
	}{
		{name: "room for two of three: the earliest scheduled first", max: 2,
			jobs:    []*batchv1.Job{run("c", -10*time.Second), run("a", -30*time.Second), run("b", -20*time.Second)},
			release: []string{"a", "b"}, waiting: 1, count: 2},
		{name: "a higher priority goes before an earlier time", max: 1,
			jobs:    []*batchv1.Job{run("early", -30*time.Second), run("urgent", -time.Second, priority(5))},
			release: []string{"urgent"}, waiting: 1, count: 1},
		{name: "full: nothing starts", max: 1,
			active: []*batchv1.Job{run("r", -time.Minute, running)}, jobs: []*batchv1.Job{run("w", 0)},
			waiting: 1, count: 1},
		{name: "a finished run frees its slot", max: 1,
			active: []*batchv1.Job{run("r", -time.Minute, done)}, jobs: []*batchv1.Job{run("w", 0)},
			release: []string{"w"}, count: 1},
		{name: "a gone run frees its slot", max: 1,
			active: []*batchv1.Job{run("gone", -time.Minute)}, jobs: []*batchv1.Job{run("w", 0)},
			release: []string{"w"}, count: 1},
		{name: "an admitted run still suspended is released again (its admitter died)", max: 1,
			active: []*batchv1.Job{run("admitted", -time.Minute)}, jobs: []*batchv1.Job{run("w", 0)},
			release: []string{"admitted"}, waiting: 1, count: 1},
		{name: "an admitted run marked missed before its release frees its slot", max: 1,
			active: []*batchv1.Job{run("marked", -time.Minute, missed)}, jobs: []*batchv1.Job{run("w", 0)},
			release: []string{"w"}, count: 1},
		{name: "a member's Job started by someone else counts", max: 2,
			jobs:    []*batchv1.Job{run("by-hand", -time.Minute, running), run("w1", -2*time.Second), run("w2", -time.Second)},
			release: []string{"w1"}, waiting: 1, count: 2},
		{name: "more running than allowed: said, nothing starts", max: 1,
			jobs:    []*batchv1.Job{run("x", -time.Minute, running), run("y", -time.Minute, running), run("w", 0)},
			waiting: 1, count: 2, overLimit: true},
		{name: "a CronJob's run created past the webhook (running, never admitted) holds the slot: the waiting run waits", max: 1,
			jobs:    []*batchv1.Job{run("cj", -time.Second, pastTheWebhook), run("sj", 0)},
			waiting: 1, count: 1},
		{name: "a run admitted before one started past the webhook is not released while the group is over", max: 1,
			active:  []*batchv1.Job{run("admitted", -time.Minute)},
			jobs:    []*batchv1.Job{run("cj", -time.Second, pastTheWebhook), run("w", 0)},
			waiting: 1, count: 2, overLimit: true},
		{name: "per tenant: an admitted run over its tenant's limit is not released, another tenant's starts", max: 3, perValue: perTenant,
			active:  []*batchv1.Job{run("a1", -time.Minute, tenant("a"))},
			jobs:    []*batchv1.Job{run("cj", -time.Second, pastTheWebhook, tenant("a")), run("b1", 0, tenant("b"))},
			release: []string{"b1"}, count: 3, overLimit: true},
		{name: "past its start-by a waiting run is missed, and does not take the slot", max: 1,
			jobs: []*batchv1.Job{run("late", -time.Minute, startBy(-time.Second)), run("w", 0)},
			miss: []string{"late"}, release: []string{"w"}, count: 1},
		{name: "a waiting run wakes the group a second past its start-by, when it is missed", max: 1,
			active: []*batchv1.Job{run("r", -time.Minute, running)}, jobs: []*batchv1.Job{run("w", 0, startBy(20*time.Second))},
			waiting: 1, count: 1, wake: now.Add(21 * time.Second)},
		{name: "a missed CronJob's Job is deleted; a ScheduledJob's is left to it", max: 1,
			jobs:   []*batchv1.Job{run("cj", -time.Minute, missed, ofCronJob), run("sj", -time.Minute, missed)},
			delete: []string{"cj"}},
		{name: "per tenant: a run held by its tenant's limit does not hold up another tenant's", max: 3, perValue: perTenant,
			active:  []*batchv1.Job{run("a1", -time.Minute, running, tenant("a"))},
			jobs:    []*batchv1.Job{run("a2", -3*time.Second, tenant("a")), run("b1", -2*time.Second, tenant("b")), run("b2", -time.Second, tenant("b"))},
			release: []string{"b1"}, waiting: 2, count: 2},
		{name: "a waiting run from a namespace the group does not select is refused, and takes no slot", max: 1, excluded: []string{"tenant"},
			jobs:   []*batchv1.Job{run("tenant-early", -time.Minute, inNamespace("tenant"), startBy(time.Hour)), run("team", 0)},
			refuse: []string{"tenant-early"}, release: []string{"team"}, count: 1},
		{name: "a run admitted from a namespace excluded since counts, and goes on; one started by hand there takes no slot", max: 2, excluded: []string{"tenant"},
			active:  []*batchv1.Job{run("admitted", -time.Minute, running, inNamespace("tenant"))},
			jobs:    []*batchv1.Job{run("by-hand", -time.Minute, running, inNamespace("tenant")), run("w1", 0), run("w2", time.Second)},
			release: []string{"w1"}, waiting: 1, count: 2},
		{name: "Jobs labeled by hand in a namespace the group does not select cannot fill it", max: 1, excluded: []string{"outsider"},
			jobs:    []*batchv1.Job{run("x", -time.Minute, running, inNamespace("outsider")), run("y", -time.Minute, running, inNamespace("outsider")), run("w", 0)},
			release: []string{"w"}, count: 1},
		{name: "an admitted run from an excluded namespace still suspended is released (admitted before the selector changed)", max: 1, excluded: []string{"tenant"},
			active:  []*batchv1.Job{run("admitted", -time.Minute, inNamespace("tenant"))},
			release: []string{"admitted"}, count: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := v1alpha1.ConcurrencyGroupSpec{MaxActive: tc.max, LimitPerLabelValue: tc.perValue}
			in := Input{Spec: spec, Now: now, Excluded: map[string]bool{}}
			for _, namespace := range tc.excluded {
				in.Excluded[namespace] = true
			}
			for _, job := range tc.active {
				in.Status.Active = append(in.Status.Active, entry(job))
				if job.Name != "gone" {
					in.Jobs = append(in.Jobs, job)
				}
			}
			in.Jobs = append(in.Jobs, tc.jobs...)
			plan := Decide(in)
			check := func(what string, got []*batchv1.Job, want []string) {
				t.Helper()
				if g := names(got); !slices.Equal(g, want) {
					t.Errorf("%s: %v, want %v", what, g, want)
				}
			}
			check("release", plan.Release, tc.release)
			check("miss", plan.Miss, tc.miss)
			check("refuse", plan.Refuse, tc.refuse)
			check("delete", plan.Delete, tc.delete)
			if plan.Status.Waiting != tc.waiting || plan.Status.ActiveCount != tc.count {
				t.Errorf("waiting %d, active %d; want %d, %d", plan.Status.Waiting, plan.Status.ActiveCount, tc.waiting, tc.count)
			}
			checkOverLimit(t, plan, tc.overLimit, tc.jobs)
			if !plan.Wake.Equal(tc.wake) {
				t.Errorf("wake %v, want %v", plan.Wake, tc.wake)
			}
			checkReleasesListed(t, plan, tc.max)
		})
	}
}

// checkOverLimit: OverLimit is said when want, and names every run of
// unlisted that started without an admission.
func checkOverLimit(t *testing.T, plan Dispatch, want bool, unlisted []*batchv1.Job) {
	t.Helper()
	if (plan.OverLimit != "") != want {
		t.Errorf("over limit %q, want %v", plan.OverLimit, want)
	}
	for _, job := range unlisted {
		if want && !suspended(job) && !finished(job) && !strings.Contains(plan.OverLimit, job.Namespace+"/"+job.Name) {
			t.Errorf("over limit %q does not name %s", plan.OverLimit, job.Name)
		}
	}
}

// checkReleasesListed: every release is listed in active, and active never
// holds more than maxActive.
func checkReleasesListed(t *testing.T, plan Dispatch, maxActive int32) {
	t.Helper()
	listed := map[types.UID]bool{}
	for _, e := range plan.Status.Active {
		listed[e.UID] = true
	}
	for _, job := range plan.Release {
		if !listed[job.UID] {
			t.Errorf("%s released without an entry in status.active", job.Name)
		}
	}
	if len(plan.Status.Active) > int(maxActive) {
		t.Errorf("%d entries, maxActive %d", len(plan.Status.Active), maxActive)
	}
}

// TestSaturatedCondition: True with the waits while runs wait, False once
// none does; its transition time moves only with its status.
func TestSaturatedCondition(t *testing.T) {
	in := Input{Spec: v1alpha1.ConcurrencyGroupSpec{MaxActive: 1}, Now: now,
		Jobs: []*batchv1.Job{run("r", -time.Minute, running), run("w", -10*time.Second)}}
	plan := Decide(in)
	c := plan.Status.Conditions[0]
	if c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonRunsWaiting || !plan.Status.OldestWaitingSince.Equal(&metav1.Time{Time: now.Add(-10 * time.Second)}) {
		t.Fatalf("condition %+v, oldest %v", c, plan.Status.OldestWaitingSince)
	}
	in.Status, in.Now = plan.Status, now.Add(time.Minute)
	if again := Decide(in); !again.Status.Conditions[0].LastTransitionTime.Equal(&c.LastTransitionTime) {
		t.Errorf("the transition time moved with nothing changed")
	}
	in.Jobs = []*batchv1.Job{run("r", -time.Minute, done)}
	plan = Decide(in)
	if c := plan.Status.Conditions[0]; c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonHasRoom || plan.Status.OldestWaitingSince != nil {
		t.Errorf("condition %+v, oldest %v", c, plan.Status.OldestWaitingSince)
	}
}
