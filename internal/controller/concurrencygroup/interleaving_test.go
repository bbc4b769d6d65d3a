package concurrencygroup

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

var (
	groupSeeds = flag.Int("group-seeds", 0, "explore this many seeds (default: 300 with -short, 2000 without)")
	groupSeed  = flag.Uint64("group-seed", 0, "run only this seed, with its trace")
)

// TestGroupInterleavings runs two group controllers, as they ship (every
// replica runs one), against a fake API server, seed after seed. They
// reconcile at once: each request of either is a point where the other,
// or the world, may go first. The world creates members' runs (Jobs,
// suspended, some with a starting deadline, a priority, a tenant label),
// finishes running ones, deletes finished ones (history), moves the clock,
// and lets each controller's cache lag behind on its own; a controller may
// die at any request, the request refused or carried out with its answer
// lost. The world also starts runs of the member CronJob past the Job
// webhook (running at once, without the group's label), as the API
// server does while no replica serves it. Every seed checks what
// docs/reliability.md states for groups: never more runs admitted and
// running than maxActive (nor, per label value, than its limit), at any
// moment; no release that brings the runs active, counting those started
// past the webhook that every replica's cache has seen, over a limit; no
// run both released and missed; a run marked
// missed only after its start-by; and, once quiet, every run ran or was
// missed. In a third of the seeds the group is a ClusterConcurrencyGroup
// whose namespaceSelector selects the labeled of two namespaces, and the
// world also labels and unlabels them: a run is released only from a
// namespace that has been selected (a cache behind may still admit a run
// in the moments after its namespace is deselected, as any watch-based
// check would), and refused (marked missed before its start-by) only if
// its namespace was not selected at some time while it waited: never on a
// stale cache's word alone.
func TestGroupInterleavings(t *testing.T) {
	seeds := testenv.SeedCount(300, 2000)
	if *groupSeeds > 0 {
		seeds = *groupSeeds
	}
	first := uint64(1)
	if *groupSeed != 0 {
		first, seeds = *groupSeed, 1
	}
	testenv.ExploreSeeds(t, first, seeds, func(seed uint64) (string, bool) {
		w := newGroupWorld(seed)
		w.run()
		return fmt.Sprintf("%s\n  %s\n  trace:\n    %s\nrun it alone: go test ./internal/controller/concurrencygroup/ -run TestGroupInterleavings -group-seed %d",
			w.scenario, strings.Join(w.violations, "\n  "), strings.Join(w.trace, "\n    "), seed), len(w.violations) > 0
	})
}

// groupWorld is one seed's world.
type groupWorld struct {
	rng   *rand.Rand
	api   client.WithWatch
	clock *clocktesting.FakeClock
	kind  string
	key   types.NamespacedName
	spec  v1alpha1.ConcurrencyGroupSpec
	// selective: the group is a ClusterConcurrencyGroup selecting the
	// namespaces labeled selectedLabel; everSelected are the namespaces
	// it has selected; unselectedWhileWaiting the runs whose namespace it
	// did not select at some time while they waited.
	selective              bool
	everSelected           map[string]bool
	unselectedWhileWaiting map[types.UID]bool
	// unselectedWhileRunning are the runs started past the webhook whose
	// namespace the group did not select at some time while they ran:
	// not a member's then, the group may stop counting them.
	unselectedWhileRunning map[types.UID]bool
	actors                 []*actor
	jobs                   int
	uids                   int
	released               map[types.UID]bool
	// pastTheWebhook are the runs the member CronJob started without
	// the webhook: running from their creation, never admitted.
	pastTheWebhook map[types.UID]bool
	scenario       string
	trace          []string
	violation      map[string]bool
	violations     []string
	quiet          bool
}

// actor is one replica's controller, running its reconciles in a goroutine
// that stops at each of its requests until the world lets it go on.
type actor struct {
	name     string
	snapshot client.Client
	// namespaces are the namespaces as its cache last saw them.
	namespaces []client.Object
	controller *Controller
	// seen are the runs started past the webhook that its cache has
	// shown it: those its decisions count.
	seen map[types.UID]bool
	// running is set while a reconcile is under way; parked receives
	// when it stops at a request (true) or returns (false); resume lets
	// it go on (false: it dies there).
	running bool
	parked  chan bool
	resume  chan step
	dying   bool
}

// step is what the world lets a parked request do.
type step struct{ proceed, landing bool }

// The runs' namespaces: a selective group selects those labeled
// selectedLabel, at first namespace's and not otherNamespace's.
const (
	namespace      = "team"
	otherNamespace = "tenant"
	selectedLabel  = "member"
)

func newGroupWorld(seed uint64) *groupWorld {
	rng := rand.New(rand.NewPCG(seed, 11))
	w := &groupWorld{rng: rng, released: map[types.UID]bool{}, pastTheWebhook: map[types.UID]bool{}, violation: map[string]bool{},
		everSelected: map[string]bool{namespace: true}, unselectedWhileWaiting: map[types.UID]bool{}, unselectedWhileRunning: map[types.UID]bool{},
		clock: clocktesting.NewFakeClock(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))}
	w.spec = v1alpha1.ConcurrencyGroupSpec{MaxActive: int32(1 + rng.IntN(4))}
	if rng.IntN(3) == 0 {
		w.spec.LimitPerLabelValue = &v1alpha1.LabelValueLimit{Key: "tenant", MaxActive: int32(1 + rng.IntN(2))}
	}
	w.selective = rng.IntN(3) == 0
	meta := metav1.ObjectMeta{Name: "db", UID: "group-uid", Generation: 1}
	var group client.Object
	if w.selective {
		w.kind = v1alpha1.KindClusterConcurrencyGroup
		group = &v1alpha1.ClusterConcurrencyGroup{ObjectMeta: meta, Spec: v1alpha1.ClusterConcurrencyGroupSpec{ConcurrencyGroupSpec: w.spec,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{selectedLabel: "yes"}}}}
	} else {
		meta.Namespace = namespace
		w.kind, group = v1alpha1.KindConcurrencyGroup, &v1alpha1.ConcurrencyGroup{ObjectMeta: meta, Spec: w.spec}
	}
	w.key = client.ObjectKeyFromObject(group)
	w.scenario = fmt.Sprintf("%s, maxActive %d, per tenant %v", w.kind, w.spec.MaxActive, w.spec.LimitPerLabelValue)
	namespaces := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{selectedLabel: "yes"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: otherNamespace}}}
	// The member CronJob: its runs the world creates are made members by
	// the webhook, or started past it.
	label := v1alpha1.GroupLabel
	if w.selective {
		label = v1alpha1.ClusterGroupLabel
	}
	cronJob := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: namespace, UID: "cj-uid", Annotations: map[string]string{label: "db"}},
		Spec: batchv1.CronJobSpec{Schedule: "@hourly"}}
	w.api = newFakeClient().WithStatusSubresource(&v1alpha1.ConcurrencyGroup{}, &v1alpha1.ClusterConcurrencyGroup{}, &batchv1.Job{}).
		WithObjects(append(namespaces, group, cronJob)...).Build()
	for i := range 2 {
		w.actors = append(w.actors, w.newActor(fmt.Sprint("replica-", i)))
	}
	return w
}

func (w *groupWorld) newActor(name string) *actor {
	a := &actor{name: name, parked: make(chan bool), resume: make(chan step), seen: map[types.UID]bool{}}
	w.sync(a)
	live := interceptor.NewClient(w.api, w.faults(a))
	cached := testenv.Lagging{Client: live, Snapshot: func() client.Reader { return seeing{Reader: a.snapshot, world: w, actor: a} }}
	a.controller = New(w.kind, cached, live, w.clock, record.NewFakeRecorder(1000), nil)
	return a
}

func (w *groupWorld) logf(format string, args ...any) {
	w.trace = append(w.trace, fmt.Sprintf(format, args...))
}

func (w *groupWorld) violate(format string, args ...any) {
	message := fmt.Sprintf(format, args...)
	if !w.violation[message] {
		w.violation[message] = true
		w.violations = append(w.violations, message)
	}
}

// run draws steps, then a quiet end in which every run must be settled.
func (w *groupWorld) run() {
	defer w.stopActors()
	for range 400 {
		switch roll := w.rng.IntN(20); {
		case roll < 9:
			w.stepActor(w.actors[w.rng.IntN(len(w.actors))])
		case roll < 12 && w.jobs < 40:
			if w.rng.IntN(6) == 0 {
				w.startPastTheWebhook()
			} else {
				w.createRun()
			}
		case roll < 15:
			w.finishOne()
		case roll < 16:
			w.deleteFinished()
		case roll < 18:
			w.sync(w.actors[w.rng.IntN(len(w.actors))])
		case w.selective && w.rng.IntN(3) == 0:
			w.relabel()
		default:
			w.clock.Step(time.Duration(1+w.rng.IntN(20)) * time.Second)
		}
	}
	w.quiet = true
	for range 60 {
		w.stopActors()
		for _, a := range w.actors {
			w.sync(a)
			w.reconcileFully(a)
		}
		w.finishAll()
		w.clock.Step(5 * time.Second)
		if w.settled() {
			for _, a := range w.actors {
				w.sync(a)
				w.reconcileFully(a)
			}
			w.checkEnd()
			return
		}
	}
	w.violate("not settled after the quiet end: %v", w.waitingNames())
}

// createRun is a member's controller creating a run's Job, suspended, as
// v1alpha1.JoinGroup makes it.
func (w *groupWorld) createRun() {
	w.jobs++
	scheduled := w.clock.Now().Truncate(time.Second).Add(-time.Duration(w.rng.IntN(5)) * time.Second)
	ns := namespace
	if w.selective && w.rng.IntN(2) == 0 {
		ns = otherNamespace
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("run-%02d", w.jobs), Namespace: ns,
		CreationTimestamp: metav1.NewTime(w.clock.Now().Truncate(time.Second)),
		Annotations:       map[string]string{v1alpha1.ScheduledTimestampAnnotation: scheduled.Format(time.RFC3339)},
		Labels:            map[string]string{"tenant": fmt.Sprint("t", w.rng.IntN(3))}}}
	if w.rng.IntN(2) == 0 {
		job.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ScheduledJob", Name: "sj", UID: "sj-uid", Controller: ptr.To(true)}}
	} else {
		job.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "cj", UID: "cj-uid", Controller: ptr.To(true)}}
	}
	var startBy *time.Time
	if w.rng.IntN(3) > 0 {
		startBy = ptr.To(scheduled.Add(time.Duration(3+w.rng.IntN(30)) * time.Second))
	}
	v1alpha1.JoinGroup(job, v1alpha1.ConcurrencyGroupRef{Kind: w.kind, Name: "db", Priority: int32(w.rng.IntN(3) - 1)}, startBy)
	w.uids++
	job.UID = types.UID(fmt.Sprint("uid-", w.uids))
	if err := w.api.Create(context.Background(), job); err != nil {
		panic(err)
	}
	w.unselectedWhileWaiting[job.UID] = !w.selected(ns)
	w.logf("created %s in %s (tenant %s, start-by %s)", job.Name, ns, job.Labels["tenant"], job.Annotations[v1alpha1.StartByAnnotation])
}

// startPastTheWebhook is the API server creating a member CronJob's Job
// while no replica serves the Job webhook: running at once, without the
// group's label.
func (w *groupWorld) startPastTheWebhook() {
	w.jobs++
	w.uids++
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("run-%02d", w.jobs), Namespace: namespace, UID: types.UID(fmt.Sprint("uid-", w.uids)),
		CreationTimestamp: metav1.NewTime(w.clock.Now().Truncate(time.Second)),
		Annotations:       map[string]string{v1alpha1.ScheduledTimestampAnnotation: w.clock.Now().Truncate(time.Second).Format(time.RFC3339)},
		Labels:            map[string]string{"tenant": fmt.Sprint("t", w.rng.IntN(3))},
		OwnerReferences:   []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "cj", UID: "cj-uid", Controller: ptr.To(true)}}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(false)}}
	if err := w.api.Create(context.Background(), job); err != nil {
		panic(err)
	}
	w.pastTheWebhook[job.UID] = true
	w.unselectedWhileRunning[job.UID] = !w.selected(namespace)
	w.logf("created %s past the webhook, running (tenant %s)", job.Name, job.Labels["tenant"])
}

// seeing is a replica's cache: the runs started past the webhook that a
// list of Jobs returns it are noted as seen.
type seeing struct {
	client.Reader
	world *groupWorld
	actor *actor
}

func (s seeing) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := s.Reader.List(ctx, list, opts...); err != nil {
		return err
	}
	if jobs, ok := list.(*batchv1.JobList); ok {
		for _, job := range jobs.Items {
			if s.world.pastTheWebhook[job.UID] {
				s.actor.seen[job.UID] = true
			}
		}
	}
	return nil
}

// selected reports whether the group selects the namespace now, by the
// API server's labels.
func (w *groupWorld) selected(name string) bool {
	ns := &corev1.Namespace{}
	_ = w.api.Get(context.Background(), types.NamespacedName{Name: name}, ns)
	return !w.selective || ns.Labels[selectedLabel] == "yes"
}

// relabel labels or unlabels one of the namespaces, and notes it for the
// runs waiting in it.
func (w *groupWorld) relabel() {
	ns := &corev1.Namespace{}
	name := []string{namespace, otherNamespace}[w.rng.IntN(2)]
	if err := w.api.Get(context.Background(), types.NamespacedName{Name: name}, ns); err != nil {
		panic(err)
	}
	if ns.Labels[selectedLabel] == "yes" {
		ns.Labels = nil
	} else {
		ns.Labels = map[string]string{selectedLabel: "yes"}
	}
	if err := w.api.Update(context.Background(), ns); err != nil {
		panic(err)
	}
	selected := w.selected(name)
	w.everSelected[name] = w.everSelected[name] || selected
	for _, job := range w.listJobs() {
		if job.Namespace == name && suspended(job) && !selected {
			w.unselectedWhileWaiting[job.UID] = true
		}
		if job.Namespace == name && w.pastTheWebhook[job.UID] && !selected {
			w.unselectedWhileRunning[job.UID] = true
		}
	}
	w.logf("namespace %s selected: %v", name, selected)
}

// stepActor lets a replica go on: start a reconcile, or carry its parked
// request out (or kill it there).
func (w *groupWorld) stepActor(a *actor) {
	if !a.running {
		a.running, a.dying = true, false
		go func() {
			_, err := a.controller.Reconcile(context.Background(), reconcile.Request{NamespacedName: w.key})
			w.logf("%s: reconcile returned %v", a.name, err)
			a.parked <- false
		}()
		a.running = <-a.parked
		return
	}
	s := step{proceed: true}
	if !w.quiet && w.rng.IntN(12) == 0 {
		s = step{proceed: false, landing: w.rng.IntN(2) == 0}
		a.dying = true
		w.logf("%s dies at its next request (landing %v)", a.name, s.landing)
	}
	a.resume <- s
	a.running = <-a.parked
}

// reconcileFully runs one reconcile of a to its end.
func (w *groupWorld) reconcileFully(a *actor) {
	w.stepActor(a)
	for a.running {
		w.stepActor(a)
	}
}

// stopActors lets every parked reconcile finish (dying: the rest of its
// requests fail).
func (w *groupWorld) stopActors() {
	for _, a := range w.actors {
		for a.running {
			a.dying = true
			a.resume <- step{}
			a.running = <-a.parked
		}
	}
}

// errKilled is what a request of a dead replica gets.
var errKilled = errors.New("the replica died")

// faults park each request of the actor until the world lets it go on.
func (w *groupWorld) faults(a *actor) interceptor.Funcs {
	gate := func(what string, do func() error) error {
		if a.dying {
			return errKilled
		}
		a.parked <- true
		s := <-a.resume
		switch {
		case s.proceed:
			return do()
		case s.landing:
			err := do()
			w.logf("  %s: %s landed, its answer lost (%v)", a.name, what, err)
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
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return gate("update "+obj.GetName(), func() error { return w.updateJob(ctx, a, c, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return gate("delete "+obj.GetName(), func() error { return w.deleteJob(ctx, a, c, obj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, _ string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return gate("status update", func() error {
				err := c.Status().Update(ctx, obj, opts...)
				if _, isJob := obj.(*batchv1.Job); !isJob && err == nil {
					_, status := parts(obj)
					w.logf("  %s: status: active %v, waiting %d", a.name, entryNames(status.Active), status.Waiting)
				}
				return err
			})
		},
	}
}

// updateJob is the API server's update of a Job, watching for releases
// and missed marks.
func (w *groupWorld) updateJob(ctx context.Context, a *actor, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return c.Update(ctx, obj, opts...)
	}
	before := &batchv1.Job{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), before); err != nil {
		return err
	}
	err := c.Update(ctx, job, opts...)
	if err != nil {
		return err
	}
	// Only an update starts a run, or marks one missed: the limits
	// are checked after each.
	release := suspended(before) && !suspended(job)
	if release {
		defer w.check(job)
	} else {
		defer w.check(nil)
	}
	if release {
		w.released[job.UID] = true
		w.logf("  %s: released %s", a.name, job.Name)
		if w.selective && !w.everSelected[job.Namespace] {
			w.violate("%s released, though its namespace %s was never selected", job.Name, job.Namespace)
		}
	}
	if _, marked := job.Annotations[v1alpha1.MissedAnnotation]; marked {
		if _, was := before.Annotations[v1alpha1.MissedAnnotation]; !was {
			w.logf("  %s: marked %s missed", a.name, job.Name)
			w.checkMissed(job)
		}
	}
	return nil
}

// checkMissed: a run is marked missed after its start-by, or refused
// before it only if its namespace was unselected at some time it waited.
func (w *groupWorld) checkMissed(job *batchv1.Job) {
	value, hasStartBy := job.Annotations[v1alpha1.StartByAnnotation]
	startBy, _ := time.Parse(time.RFC3339, value)
	if hasStartBy && w.clock.Now().After(startBy) {
		return
	}
	if w.unselectedWhileWaiting[job.UID] {
		return
	}
	w.violate("%s marked missed at %s, before its start-by %q, its namespace %s selected all along", job.Name, w.clock.Now().Format(time.TimeOnly), value, job.Namespace)
}

// deleteJob is the API server's delete, with its UID precondition (which
// the fake client does not check); the group deletes only missed Jobs.
func (w *groupWorld) deleteJob(ctx context.Context, a *actor, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
	current := &batchv1.Job{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
		return err
	}
	o := (&client.DeleteOptions{}).ApplyOptions(opts)
	if o.Preconditions != nil && o.Preconditions.UID != nil && current.UID != *o.Preconditions.UID {
		return apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, obj.GetName(), errors.New("UID precondition"))
	}
	if _, missed := current.Annotations[v1alpha1.MissedAnnotation]; !missed || !suspended(current) {
		w.violate("%s deleted by the group, not a missed run", current.Name)
	}
	w.logf("  %s: deleted %s", a.name, current.Name)
	return c.Delete(ctx, obj, opts...)
}

// check: a missed run never released; the runs the group released never
// over the limits; and after the release of a run (runs go from waiting
// to running only by a Job update, after which it is called), not the
// runs active either, in all and of the released run's label value,
// counting those started past the webhook that every replica has seen:
// one a replica has not seen yet may have been started after its
// decision, and is counted from its next; one whose namespace the group
// did not select at some time while it ran is not a member's, and may
// not be counted. (Runs past the webhook may put
// another value over its limit: that holds back only that value's runs.)
func (w *groupWorld) check(released *batchv1.Job) {
	admitted := newTally()
	active := newTally()
	for _, job := range w.listJobs() {
		_, missed := job.Annotations[v1alpha1.MissedAnnotation]
		if missed && w.released[job.UID] {
			w.violate("%s both released and missed", job.Name)
		}
		if suspended(job) || finished(job) {
			continue
		}
		if !w.pastTheWebhook[job.UID] {
			admitted.add(job)
			active.add(job)
		} else if w.seenByAll(job.UID) && !w.unselectedWhileRunning[job.UID] {
			active.add(job)
		}
	}
	w.checkTally("runs admitted and running", admitted)
	if released != nil {
		value := released.Labels["tenant"]
		active.byValue = map[string]int{value: active.byValue[value]}
		w.checkTally(fmt.Sprintf("after %s's release, runs active (counting those started past the webhook that every replica has seen)", released.Name), active)
	}
}

// tally counts running Jobs, in all and per tenant.
type tally struct {
	total   int
	byValue map[string]int
}

func newTally() *tally { return &tally{byValue: map[string]int{}} }

func (t *tally) add(job *batchv1.Job) {
	t.total++
	t.byValue[job.Labels["tenant"]]++
}

func (w *groupWorld) checkTally(what string, t *tally) {
	if t.total > int(w.spec.MaxActive) {
		w.violate("over the limit: %d %s, maxActive %d", t.total, what, w.spec.MaxActive)
	}
	if limit := w.spec.LimitPerLabelValue; limit != nil {
		for value, n := range t.byValue {
			if n > int(limit.MaxActive) {
				w.violate("over the per-tenant limit: %d %s of %s, limit %d", n, what, value, limit.MaxActive)
			}
		}
	}
}

// seenByAll reports whether every replica's cache has shown it the run.
func (w *groupWorld) seenByAll(uid types.UID) bool {
	for _, a := range w.actors {
		if !a.seen[uid] {
			return false
		}
	}
	return true
}

// settled: no run running or waiting (all ran, or were missed).
func (w *groupWorld) settled() bool {
	for _, job := range w.listJobs() {
		if _, missed := job.Annotations[v1alpha1.MissedAnnotation]; !missed && !finished(job) {
			return false
		}
	}
	return true
}

// checkEnd: every run created ran once or was missed; the status lists
// nothing active.
func (w *groupWorld) checkEnd() {
	_, status := parts(w.readGroup())
	if len(status.Active) > 0 || status.Waiting > 0 {
		w.violate("settled, but the status lists active %v, waiting %d", entryNames(status.Active), status.Waiting)
	}
	for _, job := range w.listJobs() {
		if _, missed := job.Annotations[v1alpha1.MissedAnnotation]; !missed && !w.released[job.UID] && !w.pastTheWebhook[job.UID] {
			w.violate("%s finished without being released", job.Name)
		}
	}
}

func (w *groupWorld) waitingNames() []string {
	var names []string
	for _, job := range w.listJobs() {
		if _, missed := job.Annotations[v1alpha1.MissedAnnotation]; !missed && !finished(job) {
			names = append(names, job.Name)
		}
	}
	return names
}

func (w *groupWorld) listJobs() []*batchv1.Job {
	var list batchv1.JobList
	_ = w.api.List(context.Background(), &list)
	jobs := make([]*batchv1.Job, len(list.Items))
	for i := range list.Items {
		jobs[i] = &list.Items[i]
	}
	return jobs
}

// finishOne is the Job controller finishing one running Job.
func (w *groupWorld) finishOne() {
	var running []*batchv1.Job
	for _, job := range w.listJobs() {
		if !suspended(job) && !finished(job) {
			running = append(running, job)
		}
	}
	if len(running) > 0 {
		w.finish(running[w.rng.IntN(len(running))])
	}
}

func (w *groupWorld) finishAll() {
	for _, job := range w.listJobs() {
		if !suspended(job) && !finished(job) {
			w.finish(job)
		}
	}
}

func (w *groupWorld) finish(job *batchv1.Job) {
	condition := batchv1.JobComplete
	if w.rng.IntN(5) == 0 {
		condition = batchv1.JobFailed
	}
	job.Status.Conditions = []batchv1.JobCondition{{Type: condition, Status: corev1.ConditionTrue}}
	if err := w.api.Status().Update(context.Background(), job); err == nil {
		w.logf("%s finished: %s", job.Name, condition)
	}
}

// deleteFinished is a member's history limit deleting a finished Job.
func (w *groupWorld) deleteFinished() {
	for _, job := range w.listJobs() {
		if finished(job) && w.rng.IntN(2) == 0 {
			if err := w.api.Delete(context.Background(), job); err == nil {
				w.logf("history deleted %s", job.Name)
			}
			return
		}
	}
}

// sync has a replica's cache catch up with the API server.
// Each kind has its own informer: while the world runs, a selective
// group's replica may see the Jobs and the group of now with namespaces
// of before (a run created in a namespace labeled since).
func (w *groupWorld) sync(a *actor) {
	// The snapshot keeps the API server's resourceVersions: the
	// controller's Job updates are conditional on them.
	var objects []client.Object
	for _, job := range w.listJobs() {
		objects = append(objects, job)
	}
	if a.namespaces == nil || w.quiet || !w.selective || w.rng.IntN(2) == 0 {
		a.namespaces = nil
		for _, name := range []string{namespace, otherNamespace} {
			ns := &corev1.Namespace{}
			_ = w.api.Get(context.Background(), types.NamespacedName{Name: name}, ns)
			a.namespaces = append(a.namespaces, ns)
		}
	}
	for _, ns := range a.namespaces {
		objects = append(objects, ns.DeepCopyObject().(client.Object))
	}
	var cronJobs batchv1.CronJobList
	_ = w.api.List(context.Background(), &cronJobs)
	for i := range cronJobs.Items {
		objects = append(objects, &cronJobs.Items[i])
	}
	a.snapshot = newFakeClient().WithObjects(append(objects, w.readGroup())...).Build()
}

// readGroup is the group as the API server has it.
func (w *groupWorld) readGroup() client.Object {
	var group client.Object = &v1alpha1.ConcurrencyGroup{}
	if w.kind == v1alpha1.KindClusterConcurrencyGroup {
		group = &v1alpha1.ClusterConcurrencyGroup{}
	}
	_ = w.api.Get(context.Background(), w.key, group)
	return group
}

// worldScheme is built once: building it is most of a fake client's cost.
var worldScheme = scheme.New()

// newFakeClient is the fake API server, with the indexes the group lists
// its member ScheduledJobs and CronJobs, and the CronJobs' Jobs, by.
func newFakeClient() *fake.ClientBuilder {
	return testenv.FakeAPI(worldScheme).WithIndex(&v1alpha1.ScheduledJob{}, jobcontrol.ScheduledJobGroupKey, jobcontrol.IndexScheduledJobGroup).
		WithIndex(&batchv1.CronJob{}, jobcontrol.CronJobGroupKey, jobcontrol.IndexCronJobGroup).
		WithIndex(&batchv1.Job{}, jobcontrol.CronJobOwnerKey, jobcontrol.IndexCronJobOwner)
}

func entryNames(entries []v1alpha1.GroupRun) []string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names
}

func suspended(job *batchv1.Job) bool { return job.Spec.Suspend != nil && *job.Spec.Suspend }

func finished(job *batchv1.Job) bool {
	_, done := v1alpha1.JobFinished(job)
	return done
}
