package backfill

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

var (
	backfillSeeds = flag.Int("backfill-seeds", 0, "explore this many seeds (default: 300 with -short, 1500 without)")
	backfillSeed  = flag.Uint64("backfill-seed", 0, "run only this seed, with its trace")
)

// TestBackfillInterleavings runs the Backfill controller, as it ships,
// against a fake API server, seed after seed, with what goes on around it
// drawn at random between any two of its requests: the Job controller
// finishing runs (some failed), the cache catching up (it lags), and the
// leader dying mid-reconcile, its last request refused or carried out with
// the answer lost, a successor taking over. Every seed checks what
// docs/reliability.md states for backfills: each time's Job is created by
// the backfill at most once; never more than maxActive of its runs are
// active; once it settles, every time was run or skipped for a Job it had,
// and the counts add up.
//
// It has teeth: a controller that deletes its history before writing the
// status that counts it, with a plan that does not keep a claimed Job out
// of history, duplicates runs in about a quarter of the seeds.
func TestBackfillInterleavings(t *testing.T) {
	seeds := testenv.SeedCount(300, 1500)
	if *backfillSeeds > 0 {
		seeds = *backfillSeeds
	}
	first := uint64(1)
	if *backfillSeed != 0 {
		first, seeds = *backfillSeed, 1
	}
	testenv.ExploreSeeds(t, first, seeds, func(seed uint64) (string, bool) {
		w := newBackfillWorld(seed)
		w.run()
		return fmt.Sprintf("%s\n  %s\n  trace:\n    %s\nrun it alone: go test ./internal/controller/backfill/ -run TestBackfillInterleavings -backfill-seed %d",
			w.scenario, strings.Join(w.violations, "\n  "), strings.Join(w.trace, "\n    "), seed), len(w.violations) > 0
	})
}

// backfillWorld is one seed's world.
type backfillWorld struct {
	rng        *rand.Rand
	api        client.WithWatch
	snapshot   client.Client
	sj         *v1alpha1.ScheduledJob
	bf         *v1alpha1.Backfill
	times      []time.Time
	hadJob     map[string]bool // times whose Job existed before the backfill
	created    map[string]int  // the backfill's creations, by Job name
	scenario   string
	trace      []string
	violation  map[string]bool
	violations []string
	uids       int
	// calls counts the requests of the reconcile under way; killAt is the
	// one the leader dies at (0: it does not), landing says whether that
	// request is carried out all the same.
	calls, killAt int
	landing       bool
	quiet         bool
}

func newBackfillWorld(seed uint64) *backfillWorld {
	rng := rand.New(rand.NewPCG(seed, 7))
	w := &backfillWorld{rng: rng, hadJob: map[string]bool{}, created: map[string]int{}, violation: map[string]bool{}}
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	n := 10 + rng.IntN(30)
	for i := range n {
		w.times = append(w.times, start.Add(time.Duration(i)*time.Minute))
	}
	w.sj = &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: "team", UID: "sj-uid"},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "* * * * *", ConcurrencyPolicy: v1alpha1.AllowConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To(int32(rng.IntN(2))), FailedJobsHistoryLimit: ptr.To(int32(rng.IntN(2)))}}
	redo := []v1alpha1.BackfillRedo{v1alpha1.RedoMissing, v1alpha1.RedoFailed, v1alpha1.RedoAll}[rng.IntN(3)]
	w.bf = &v1alpha1.Backfill{ObjectMeta: metav1.ObjectMeta{Name: "bf", Namespace: "team", UID: "bf-uid"},
		Spec: v1alpha1.BackfillSpec{ScheduledJobName: "report", From: metav1.Time{Time: start}, To: metav1.Time{Time: w.times[n-1]},
			MaxActive: int32(1 + rng.IntN(5)), Redo: redo}}
	objects := []client.Object{w.sj.DeepCopy(), w.bf.DeepCopy()}
	for _, t := range w.times {
		if rng.IntN(4) == 0 {
			objects = append(objects, w.liveJob(t))
			w.hadJob[w.sj.JobName(t)] = true
		}
	}
	w.scenario = fmt.Sprintf("%d times, maxActive %d, redo %s, history %d/%d, %d had a Job", n, w.bf.Spec.MaxActive, redo,
		*w.sj.Spec.SuccessfulJobsHistoryLimit, *w.sj.Spec.FailedJobsHistoryLimit, len(w.hadJob))
	w.api = newFakeClient().WithStatusSubresource(&v1alpha1.Backfill{}).WithObjects(objects...).Build()
	w.sync()
	return w
}

// liveJob is a Job the live schedule ran for t: finished (some failed) or
// still active.
func (w *backfillWorld) liveJob(t time.Time) *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: w.sj.JobName(t), Namespace: "team", UID: types.UID("live-" + w.sj.JobName(t)),
		Labels:          map[string]string{v1alpha1.ScheduledJobLabel: "report"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(w.sj, v1alpha1.GroupVersion.WithKind("ScheduledJob"))}}}
	switch w.rng.IntN(3) {
	case 0:
		job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	case 1:
		job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	}
	return job
}

func (w *backfillWorld) logf(format string, args ...any) {
	w.trace = append(w.trace, fmt.Sprintf(format, args...))
}

func (w *backfillWorld) violate(format string, args ...any) {
	message := fmt.Sprintf(format, args...)
	if !w.violation[message] {
		w.violation[message] = true
		w.violations = append(w.violations, message)
	}
}

// run draws steps until the backfill completes after a quiet end.
func (w *backfillWorld) run() {
	for step := range 600 {
		w.quiet = step >= 300
		switch roll := w.rng.IntN(10); {
		case roll < 5 || w.quiet:
			w.reconcile()
		case roll < 8:
			w.finishOne()
		default:
			w.sync()
		}
		w.checkActive()
		if w.quiet {
			w.sync()
			w.finishAll()
		}
		if w.complete() {
			w.checkEnd()
			return
		}
	}
	w.violate("not complete after 600 steps")
}

// reconcile is one Reconcile by the leader, which may die at one of its
// requests; between any two, the world goes on.
func (w *backfillWorld) reconcile() {
	w.calls, w.killAt, w.landing = 0, 0, false
	if !w.quiet && w.rng.IntN(3) == 0 {
		w.killAt, w.landing = 1+w.rng.IntN(8), w.rng.IntN(2) == 0
	}
	live := interceptor.NewClient(w.api, w.faults())
	snapshot := w.snapshot
	cached := testenv.Lagging{Client: live, Snapshot: func() client.Reader { return snapshot }}
	c := NewController(cached, live, clocktesting.NewFakePassiveClock(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)), record.NewFakeRecorder(100))
	_, err := c.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team", Name: "bf"}})
	w.logf("reconcile (kill at request %d, landing %v): %v", w.killAt, w.landing, err)
}

// worldScheme is built once: building it is most of a fake client's cost.
var worldScheme = scheme.New()

func newFakeClient() *fake.ClientBuilder { return testenv.FakeAPI(worldScheme) }

// errKilled is what a request of a dead leader gets.
var errKilled = errors.New("the leader died")

// faults are the interceptor's: before each request the world may move
// on, and the request at killAt, and every one after, fails.
func (w *backfillWorld) faults() interceptor.Funcs {
	gate := func(what string, do func() error) error {
		w.calls++
		if !w.quiet && w.rng.IntN(4) == 0 {
			if w.rng.IntN(2) == 0 {
				w.finishOne()
			} else {
				w.sync()
			}
		}
		switch {
		case w.killAt == 0 || w.calls < w.killAt:
			return do()
		case w.calls == w.killAt && w.landing:
			err := do()
			w.logf("  %s landed, its answer lost (%v)", what, err)
			return errKilled
		}
		return errKilled
	}
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			return gate("get "+key.Name, func() error { return c.Get(ctx, key, obj, opts...) })
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return gate("list", func() error { return c.List(ctx, list, opts...) })
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return gate("create "+obj.GetName(), func() error { return w.create(ctx, c, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return gate("delete "+obj.GetName(), func() error { return w.delete(ctx, c, obj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, _ string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return gate("status update", func() error {
				err := c.Status().Update(ctx, obj, opts...)
				if bf, ok := obj.(*v1alpha1.Backfill); ok && err == nil {
					w.logf("  status: next %v, active %v, done %s", bf.Status.Next, refNames(bf.Status.Active), bf.Status.Done)
				}
				return err
			})
		},
	}
}

// create is the API server's create, with a UID, counting the backfill's.
func (w *backfillWorld) create(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	w.uids++
	obj.SetUID(types.UID(fmt.Sprint("uid-", w.uids)))
	err := c.Create(ctx, obj, opts...)
	if job, ok := obj.(*batchv1.Job); ok && err == nil && job.Labels[v1alpha1.BackfillLabel] != "" {
		w.created[job.Name]++
		w.logf("  created %s", job.Name)
		if w.created[job.Name] > 1 {
			w.violate("duplicate: %s created %d times", job.Name, w.created[job.Name])
		}
	}
	return err
}

// delete is the API server's delete, with its UID precondition (which the
// fake client does not check).
func (w *backfillWorld) delete(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
	o := (&client.DeleteOptions{}).ApplyOptions(opts)
	if o.Preconditions != nil && o.Preconditions.UID != nil {
		current := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
			return err
		}
		if current.UID != *o.Preconditions.UID {
			return apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, obj.GetName(), fmt.Errorf("UID precondition"))
		}
	}
	err := c.Delete(ctx, obj, opts...)
	if err == nil {
		w.logf("  deleted %s", obj.GetName())
	}
	return err
}

// sync has the cache catch up with the API server.
func (w *backfillWorld) sync() {
	var objects []client.Object
	for _, job := range w.jobs() {
		job.ResourceVersion = ""
		objects = append(objects, job)
	}
	sj := &v1alpha1.ScheduledJob{}
	_ = w.api.Get(context.Background(), types.NamespacedName{Namespace: "team", Name: "report"}, sj)
	sj.ResourceVersion = ""
	bf := w.backfill()
	bf.ResourceVersion = ""
	w.snapshot = newFakeClient().WithObjects(append(objects, sj, bf)...).Build()
}

func (w *backfillWorld) jobs() []*batchv1.Job {
	var list batchv1.JobList
	_ = w.api.List(context.Background(), &list)
	jobs := make([]*batchv1.Job, len(list.Items))
	for i := range list.Items {
		jobs[i] = &list.Items[i]
	}
	return jobs
}

// active are the backfill's Jobs still running.
func (w *backfillWorld) active() []*batchv1.Job {
	var active []*batchv1.Job
	for _, job := range w.jobs() {
		if _, done := v1alpha1.JobFinished(job); !done && job.Labels[v1alpha1.BackfillLabel] != "" {
			active = append(active, job)
		}
	}
	return active
}

// finishOne is the Job controller finishing one run, one in five failed;
// the live schedule's active Jobs finish too.
func (w *backfillWorld) finishOne() {
	var running []*batchv1.Job
	for _, job := range w.jobs() {
		if _, done := v1alpha1.JobFinished(job); !done {
			running = append(running, job)
		}
	}
	if len(running) > 0 {
		w.finish(running[w.rng.IntN(len(running))])
	}
}

func (w *backfillWorld) finishAll() {
	for _, job := range w.jobs() {
		if _, done := v1alpha1.JobFinished(job); !done {
			w.finish(job)
		}
	}
}

func (w *backfillWorld) finish(job *batchv1.Job) {
	condition := batchv1.JobComplete
	if w.rng.IntN(5) == 0 {
		condition = batchv1.JobFailed
	}
	job.Status.Conditions = []batchv1.JobCondition{{Type: condition, Status: corev1.ConditionTrue}}
	if err := w.api.Status().Update(context.Background(), job); err == nil {
		w.logf("  %s finished: %s", job.Name, condition)
	}
}

// checkActive: never more than maxActive of the backfill's runs at once.
func (w *backfillWorld) checkActive() {
	if active := w.active(); len(active) > int(w.bf.Spec.MaxActive) {
		names := make([]string, len(active))
		for i, job := range active {
			names[i] = job.Name
		}
		w.violate("over maxActive: %d backfill runs active at once (maxActive %d): %v", len(active), w.bf.Spec.MaxActive, names)
	}
}

func (w *backfillWorld) backfill() *v1alpha1.Backfill {
	bf := &v1alpha1.Backfill{}
	_ = w.api.Get(context.Background(), types.NamespacedName{Namespace: "team", Name: "bf"}, bf)
	return bf
}

func (w *backfillWorld) complete() bool {
	return meta.IsStatusConditionTrue(w.backfill().Status.Conditions, v1alpha1.BackfillComplete)
}

// checkEnd: every time was run by the backfill, or skipped because it had
// a Job that redo did not ask to rerun; the counts add up.
func (w *backfillWorld) checkEnd() {
	s := w.backfill().Status
	ran := 0
	for _, t := range w.times {
		name := w.sj.JobName(t)
		switch {
		case w.created[name] == 1:
			ran++
		case !w.hadJob[name]:
			w.violate("lost: %s had no Job and was not run", name)
		case w.bf.Spec.Redo == v1alpha1.RedoAll:
			w.violate("lost: %s was not rerun under redo All", name)
		}
	}
	if int(s.Started) != ran || int(s.Started+s.Skipped) != len(w.times) || s.Succeeded+s.Failed != s.Started || int(s.Total) != len(w.times) {
		w.violate("counts: total %d, started %d, skipped %d, succeeded %d, failed %d; %d times, %d run", s.Total, s.Started, s.Skipped, s.Succeeded, s.Failed, len(w.times), ran)
	}
	if len(s.Active) > 0 || s.Next != nil {
		w.violate("complete with active %v, next %v", refNames(s.Active), s.Next)
	}
}

func refNames(refs []corev1.ObjectReference) []string {
	names := make([]string, len(refs))
	for i, ref := range refs {
		names[i] = ref.Name
		if ref.UID == "" {
			names[i] += " (claim)"
		}
	}
	return slices.Clip(names)
}
