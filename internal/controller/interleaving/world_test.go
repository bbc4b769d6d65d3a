package interleaving

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// The world runs one seed: two replicas, each with a cache and the
// controllers build gives it, the fake API server, the Job controller,
// leader election and the faults, all moved one step at a time by a
// seeded random choice. Only one goroutine runs at a time: a reconcile's
// goroutine runs until its next request and waits there for the scheduler.

// requestBound is how long after it is sent a request reaches the API
// server at the latest (the clock does not pass it while the request
// waits): the bound the standby's window and the history fence assume.
const requestBound = 15 * time.Second

// Leader election, as the controller's flags set it.
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
	restartDelay  = time.Second
)

// gate lets the goroutine that runs run its next request.
type gate struct {
	running *proc
	now     func() time.Time
}

// proc is one reconcile's goroutine.
type proc struct {
	ctrl     *ctrl
	key      types.NamespacedName
	calls    chan *call
	pending  *call // nil once it returned
	issuedAt time.Time
	killed   bool
	result   reconcile.Result
	err      error
}

type call struct {
	what   string
	run    func() error
	err    error
	resume chan bool
}

// caller is who makes a client's requests: the actor, for the request
// counts, and the gate its goroutine waits at.
type caller struct {
	gate  *gate
	actor string
}

// do runs one request as a step of the scheduler.
func (c caller) do(what string, run func() error) error {
	p := c.gate.running
	call := &call{what: what, run: run, resume: make(chan bool)}
	p.calls <- call
	if !<-call.resume {
		runtime.Goexit() // killed: the process is gone
	}
	return call.err
}

// ctrl is one controller of a replica, with its work queue.
type ctrl struct {
	name       string
	replica    *replica
	reconciler reconcile.Reconciler
	// leaderOnly controllers run only while their replica leads.
	leaderOnly bool
	ready      []types.NamespacedName
	timers     map[types.NamespacedName]time.Time
	busy       map[types.NamespacedName]bool
	fails      map[types.NamespacedName]int
	procs      []*proc
}

// workers is one per controller: the scheduler runs one goroutine at a
// time, and a controller's goroutines may share a lock across a request.
const workers = 1

// maxSteps ends a world that no longer moves its clock (a bug of the
// harness or a controller that spins).
const maxSteps = 200_000

func (c *ctrl) running() bool { return c.replica.alive && (!c.leaderOnly || c.replica.leading) }

func (c *ctrl) enqueue(key types.NamespacedName) {
	if !slices.Contains(c.ready, key) {
		c.ready = append(c.ready, key)
	}
}

func (c *ctrl) after(key types.NamespacedName, at time.Time) {
	if t, ok := c.timers[key]; !ok || at.Before(t) {
		c.timers[key] = at
	}
}

// replica is one process of the controller: its cache and controllers.
type replica struct {
	name      string
	alive     bool
	leading   bool
	stopping  bool // stopped gracefully: no new reconcile, then gone
	restartAt time.Time
	cache     *cache
	ctrls     []*ctrl
	// elected is closed when the replica starts to lead.
	elected      chan struct{}
	leaseChanged func(holder *string) bool
	incarnation  int
}

// Replica is what build gets to make a replica's controllers from: for
// each, a client that reads from the replica's cache and a reader of the
// API server, whose requests are counted as the controller's.
type Replica struct {
	Name                            string
	LeaderCached, StandbyCached     client.Client
	LeaderLive, StandbyLive         client.Reader
	Clock                           *clocktesting.FakePassiveClock
	LeaderRecorder, StandbyRecorder *recorder
	// Leading is closed when the replica starts to lead.
	Leading <-chan struct{}
}

// Controllers are a replica's controllers as build makes them.
type Controllers struct {
	Leader, Standby reconcile.Reconciler
	// LeaseChanged, when set, tells the standby the Lease's holder (nil:
	// released) and reports whether it wants every ScheduledJob queued.
	LeaseChanged func(holder *string) bool
	// JobCreated, when set, tells the standby its cache shows a Job
	// created.
	JobCreated func(job types.NamespacedName)
}

type builder func(r Replica) Controllers

// world is one seed's run.
type world struct {
	rng      *rand.Rand
	clock    *clocktesting.FakePassiveClock
	gate     *gate
	api      *api
	recorder *recorder
	build    builder
	replicas []*replica
	scenario scenario
	// lease is who leads (nil: nobody) and when the next replica may take
	// it (zero: never, while the leader lives).
	lease       *replica
	acquireAt   time.Time
	leadership  []interval // when some replica led with the API server up
	ledSince    time.Time
	downUntil   time.Time
	downFrom    time.Time
	faults      []fault
	jobDone     map[types.UID]time.Time // when the Job controller finishes each Job
	runEnds     []runEnd                // every Job's end, in order
	jobStarted  map[types.UID]bool
	steps       int
	violations  []string
	traceOn     bool
	trace       []string
	leaderKills int
}

type interval struct{ from, to time.Time }

func newWorld(seed uint64, sc scenario, build builder) *world {
	w := &world{rng: rand.New(rand.NewPCG(seed, 30)), scenario: sc, build: build,
		jobDone: map[types.UID]time.Time{}, jobStarted: map[types.UID]bool{}}
	w.clock = clocktesting.NewFakePassiveClock(sc.start)
	w.gate = &gate{now: w.clock.Now}
	w.api = newAPI(w.clock.Now)
	w.recorder = &recorder{now: w.clock.Now}
	for _, sj := range sc.scheduledJobs {
		created := sj.DeepCopy()
		if err := w.api.create("user", created); err != nil {
			panic(err)
		}
	}
	for _, name := range []string{"a", "b"} {
		r := &replica{name: name}
		w.replicas = append(w.replicas, r)
		w.startReplica(r)
	}
	w.faults = slices.Clone(sc.faults)
	// The first leader takes the Lease at once.
	w.acquireAt = sc.start
	return w
}

func (w *world) now() time.Time { return w.clock.Now() }

func (w *world) logf(format string, args ...any) {
	if w.traceOn {
		w.trace = append(w.trace, w.now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	}
}

// startReplica starts a replica's process: a new cache, new controllers,
// every ScheduledJob queued by the informers' first list.
func (w *world) startReplica(r *replica) {
	r.alive, r.leading, r.stopping = true, false, false
	r.incarnation++
	r.cache = newCache(w.api)
	name := fmt.Sprintf("%s%d", r.name, r.incarnation)
	leaderCaller, standbyCaller := caller{gate: w.gate, actor: "leader@" + name}, caller{gate: w.gate, actor: "standby@" + name}
	r.elected = make(chan struct{})
	built := w.build(Replica{Name: name,
		LeaderCached: &cachedClient{proc: leaderCaller, cache: r.cache}, LeaderLive: liveReader{proc: leaderCaller, api: w.api},
		StandbyCached: &cachedClient{proc: standbyCaller, cache: r.cache}, StandbyLive: liveReader{proc: standbyCaller, api: w.api},
		Clock: w.clock, LeaderRecorder: w.recorder.as(leaderCaller.actor), StandbyRecorder: w.recorder.as(standbyCaller.actor),
		Leading: r.elected})
	r.ctrls = []*ctrl{newCtrl("leader@"+name, r, built.Leader, true)}
	if built.Standby != nil {
		r.ctrls = append(r.ctrls, newCtrl("standby@"+name, r, built.Standby, false))
	}
	r.leaseChanged = built.LeaseChanged
	if r.leaseChanged != nil && w.lease == nil && !w.acquireAt.IsZero() {
		r.leaseChanged(nil)
	}
	r.cache.onChange = func(k kind, old, updated client.Object) {
		if k == kindJob && old == nil && updated != nil && built.JobCreated != nil {
			built.JobCreated(client.ObjectKeyFromObject(updated))
		}
		for _, c := range r.ctrls {
			for _, key := range scheduledJobWatches(k, old, updated) {
				c.enqueue(key)
			}
		}
	}
	for _, c := range r.ctrls {
		if !c.leaderOnly {
			w.queueAll(c)
		}
	}
	w.logf("replica %s started", name)
}

func newCtrl(name string, r *replica, rec reconcile.Reconciler, leaderOnly bool) *ctrl {
	return &ctrl{name: name, replica: r, reconciler: rec, leaderOnly: leaderOnly,
		timers: map[types.NamespacedName]time.Time{}, busy: map[types.NamespacedName]bool{}, fails: map[types.NamespacedName]int{}}
}

// queueAll queues every ScheduledJob the controller's cache holds, as a
// controller's first list does.
func (w *world) queueAll(c *ctrl) {
	for key := range c.replica.cache.objects {
		if key.kind == kindScheduledJob {
			c.enqueue(types.NamespacedName{Namespace: key.namespace, Name: key.name})
		}
	}
	slices.SortFunc(c.ready, func(a, b types.NamespacedName) int { return compareStrings(a.String(), b.String()) })
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// scheduledJobWatches are the ScheduledJob controller's watches: its
// ScheduledJobs' creation, deletion, and changes of generation or
// annotations; any change of a Job it controls.
func scheduledJobWatches(k kind, old, updated client.Object) []types.NamespacedName {
	switch k {
	case kindScheduledJob:
		obj := updated
		if obj == nil {
			obj = old
		}
		if old != nil && updated != nil && old.GetGeneration() == updated.GetGeneration() && equalMaps(old.GetAnnotations(), updated.GetAnnotations()) {
			return nil
		}
		return []types.NamespacedName{{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
	case kindJob:
		obj := updated
		if obj == nil {
			obj = old
		}
		if owner := metav1.GetControllerOf(obj); owner != nil && owner.Kind == "ScheduledJob" {
			return []types.NamespacedName{{Namespace: obj.GetNamespace(), Name: owner.Name}}
		}
	}
	return nil
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// move is one thing the scheduler may do next.
type move struct {
	weight float64
	do     func()
}

// run moves the world until the scenario's end.
func (w *world) run() {
	end := w.scenario.start.Add(w.scenario.chaos + w.scenario.quiet)
	for w.now().Before(end) {
		w.due()
		moves := w.moves()
		total := 0.0
		for _, m := range moves {
			total += m.weight
		}
		pick := w.rng.Float64() * total
		for _, m := range moves {
			if pick -= m.weight; pick <= 0 {
				m.do()
				break
			}
		}
		w.steps++
		if w.steps > maxSteps {
			w.violate("stuck: %d steps and the clock at %s", w.steps, w.now().Format(time.TimeOnly))
			break
		}
	}
	// The processes still waiting are abandoned with the world.
	for _, r := range w.replicas {
		w.killProcs(r, false)
	}
}

// quiet reports whether the faults are over: caches catch up fast.
func (w *world) quiet() bool { return !w.now().Before(w.scenario.start.Add(w.scenario.chaos)) }

func (w *world) moves() []move {
	var moves []move
	for _, r := range w.replicas {
		if !r.alive {
			continue
		}
		for _, c := range r.ctrls {
			for _, p := range c.procs {
				moves = append(moves, move{weight: 4, do: func() { w.step(p) }})
			}
			if c.running() && !r.stopping && len(c.procs) < workers && len(c.ready) > 0 {
				moves = append(moves, move{weight: 2, do: func() { w.startReconcile(c) }})
			}
		}
		if w.api.down {
			continue // watches are broken
		}
		for _, k := range []kind{kindScheduledJob, kindJob} {
			if r.cache.behind(k) {
				weight := w.scenario.cacheSpeed[r.name+string(k)]
				if w.quiet() || w.cacheTooFarBehind(r.cache, k) {
					weight = 8
				}
				moves = append(moves, move{weight: weight, do: func() { r.cache.advance(k) }})
			}
		}
	}
	if next, ok := w.nextTime(); ok {
		moves = append(moves, move{weight: 1.5, do: func() { w.advance(next) }})
	}
	return moves
}

// A cache is at most a scenario's cacheLag behind the API server, in
// time, outside outages (after one, watches catch up from then): a few
// seconds in most scenarios, more than a minute in some, as client-go's
// reflector lags when it lists again after a failed watch.

func (w *world) cacheTooFarBehind(c *cache, k kind) bool {
	ch := c.api.log[c.api.byKind[k][c.next[k]]]
	since := ch.at
	if w.downUntil.After(since) {
		since = w.downUntil
	}
	return w.now().Sub(since) > w.scenario.cacheLag/2
}

// nextTime is how far the clock may move now: to the next thing due, but
// never past a request's bound or a cache's lag bound.
func (w *world) nextTime() (time.Time, bool) {
	now := w.now()
	next := now.Add(time.Duration(1+w.rng.IntN(400)) * time.Millisecond)
	if t, ok := w.nextEvent(); ok && t.Before(next) {
		next = t
	}
	for _, r := range w.replicas {
		if !r.alive {
			continue
		}
		for _, c := range r.ctrls {
			for _, p := range c.procs {
				if bound := p.issuedAt.Add(requestBound); bound.Before(next) {
					next = bound
				}
			}
		}
		if w.api.down {
			continue
		}
		for _, k := range []kind{kindScheduledJob, kindJob} {
			if r.cache.behind(k) {
				ch := r.cache.api.log[r.cache.api.byKind[k][r.cache.next[k]]]
				since := ch.at
				if w.downUntil.After(since) {
					since = w.downUntil
				}
				if bound := since.Add(w.scenario.cacheLag); bound.Before(next) {
					next = bound
				}
			}
		}
	}
	if !next.After(now) {
		return next, false
	}
	return next, true
}

// nextEvent is the earliest time something is due: a requeue, a Job's end,
// a fault, a lease change, a restart.
func (w *world) nextEvent() (time.Time, bool) {
	var next time.Time
	now := w.now()
	consider := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, r := range w.replicas {
		if !r.alive {
			consider(r.restartAt)
			continue
		}
		for _, c := range r.ctrls {
			if !c.running() {
				continue
			}
			for _, t := range c.timers {
				consider(t)
			}
		}
	}
	for _, t := range w.jobDone {
		consider(t)
	}
	for _, f := range w.faults {
		consider(f.at)
	}
	if w.lease == nil {
		consider(w.acquireAt)
	}
	consider(w.downUntil)
	return next, !next.IsZero()
}

func (w *world) advance(to time.Time) {
	if to.After(w.now()) {
		w.clock.SetTime(to)
	}
}

// due does what is due at the current time: the API server's return,
// faults, restarts, timers, the Job controller and the Lease.
func (w *world) due() {
	now := w.now()
	if w.api.down && !now.Before(w.downUntil) {
		w.outageOver(now)
	}
	for len(w.faults) > 0 && !w.faults[0].at.After(now) {
		f := w.faults[0]
		w.faults = w.faults[1:]
		w.inject(f)
	}
	for _, r := range w.replicas {
		w.replicaDue(r, now)
	}
	w.jobController(now)
	if w.lease == nil && !w.acquireAt.IsZero() && !now.Before(w.acquireAt) && !w.api.down {
		w.acquire()
	}
	if w.lease != nil && w.api.down && now.Sub(w.downFrom) >= renewDeadline {
		// The leader could not renew: it stops leading and exits.
		w.logf("leader %s could not renew its Lease and exits", w.lease.name)
		w.crash(w.lease, false)
	}
}

// outageOver: the API server answers again. Reconciles that failed for
// want of it are retried now (the controller's recovery.Retrier).
func (w *world) outageOver(now time.Time) {
	w.api.down, w.api.ambiguous = false, false
	w.logf("the API server answers again")
	w.leaseMayMove()
	for _, r := range w.replicas {
		for _, c := range r.ctrls {
			for key, t := range c.timers {
				if t.After(now) && c.fails[key] > 0 {
					c.timers[key] = now
				}
			}
		}
	}
}

// replicaDue restarts a replica, ends a graceful stop, and queues what its
// controllers' timers say.
func (w *world) replicaDue(r *replica, now time.Time) {
	if !r.alive && !r.restartAt.IsZero() && !now.Before(r.restartAt) && !w.api.down {
		w.startReplica(r)
	}
	if r.stopping && r.alive && w.idle(r) {
		w.stopped(r)
	}
	for _, c := range r.ctrls {
		if !c.running() {
			continue
		}
		var due []types.NamespacedName
		for key, t := range c.timers {
			if !t.After(now) {
				due = append(due, key)
			}
		}
		slices.SortFunc(due, func(a, b types.NamespacedName) int { return compareStrings(a.String(), b.String()) })
		for _, key := range due {
			delete(c.timers, key)
			c.enqueue(key)
		}
	}
}

func (w *world) idle(r *replica) bool {
	for _, c := range r.ctrls {
		if len(c.procs) > 0 {
			return false
		}
	}
	return true
}

// acquire gives the Lease to a live replica.
func (w *world) acquire() {
	var candidates []*replica
	for _, r := range w.replicas {
		if r.alive && !r.stopping {
			candidates = append(candidates, r)
		}
	}
	if len(candidates) == 0 {
		w.acquireAt = w.now().Add(retryPeriod)
		return
	}
	r := candidates[w.rng.IntN(len(candidates))]
	w.lease, r.leading, w.ledSince = r, true, w.now()
	w.logf("replica %s%d leads", r.name, r.incarnation)
	for _, c := range r.ctrls {
		if c.leaderOnly {
			w.queueAll(c)
		}
	}
	close(r.elected)
	w.leaseMoved(&r.name)
}

// leaseMoved tells every replica's standby who holds the Lease now.
func (w *world) leaseMoved(holder *string) {
	for _, r := range w.replicas {
		if r.alive && r.leaseChanged != nil && r.leaseChanged(holder) {
			for _, c := range r.ctrls {
				if !c.leaderOnly {
					w.queueAll(c)
				}
			}
		}
	}
}

// leaseMayMove: after an outage a dead leader's Lease has expired: the
// next candidate takes it at its next try.
func (w *world) leaseMayMove() {
	if w.lease == nil {
		w.acquireAt = w.now().Add(time.Duration(w.rng.IntN(int(retryPeriod/time.Millisecond))) * time.Millisecond)
	}
}

// crash kills a replica's process (SIGKILL): its requests in flight either
// reached the API server or did not; nothing more happens in it. A leader
// killed keeps its Lease until it expires.
func (w *world) crash(r *replica, landed bool) {
	w.killProcs(r, landed)
	if w.lease == r {
		w.endLeadership()
		lastRenewal := w.now().Add(-time.Duration(w.rng.IntN(int(retryPeriod/time.Millisecond))) * time.Millisecond)
		w.acquireAt = lastRenewal.Add(leaseDuration + time.Duration(w.rng.IntN(int(retryPeriod/time.Millisecond)))*time.Millisecond)
		if w.api.down {
			w.acquireAt = time.Time{} // set when the API server answers
		}
	}
	r.alive, r.leading = false, false
	r.restartAt = w.now().Add(restartDelay)
}

func (w *world) endLeadership() {
	if !w.ledSince.IsZero() && w.now().After(w.ledSince) {
		w.leadership = append(w.leadership, interval{w.ledSince, w.now()})
	}
	w.lease, w.ledSince = nil, time.Time{}
}

// stopped: a replica stopped gracefully has finished its reconciles and
// releases the Lease.
func (w *world) stopped(r *replica) {
	r.alive, r.leading, r.stopping = false, false, false
	if w.lease == r {
		w.endLeadership()
		w.acquireAt = w.now().Add(time.Duration(w.rng.IntN(int(retryPeriod/time.Millisecond))) * time.Millisecond)
		w.leaseMoved(nil)
	}
	r.restartAt = w.now().Add(restartDelay)
	w.logf("replica %s stopped and released the Lease", r.name)
}

func (w *world) killProcs(r *replica, landed bool) {
	for _, c := range r.ctrls {
		for _, p := range c.procs {
			if landed && p.pending != nil {
				p.pending.err = p.pending.run()
			}
			p.killed = true
			p.pending.resume <- false
		}
		c.procs = nil
	}
}

// startReconcile starts a reconcile of the controller's next ready key.
func (w *world) startReconcile(c *ctrl) {
	i := slices.IndexFunc(c.ready, func(k types.NamespacedName) bool { return !c.busy[k] })
	if i < 0 {
		return
	}
	key := c.ready[i]
	c.ready = slices.Delete(c.ready, i, i+1)
	c.busy[key] = true
	p := &proc{ctrl: c, key: key, calls: make(chan *call)}
	c.procs = append(c.procs, p)
	w.gate.running = p
	go func() {
		defer func() {
			if !p.killed {
				p.calls <- nil
			}
		}()
		p.result, p.err = c.reconciler.Reconcile(context.Background(), reconcile.Request{NamespacedName: key})
	}()
	w.wait(p)
}

// step runs a process's pending request.
func (w *world) step(p *proc) {
	call := p.pending
	call.err = call.run()
	w.logf("%s %s: %s -> %v", p.ctrl.name, p.key.Name, call.what, call.err)
	w.checkNow()
	w.gate.running = p
	call.resume <- true
	w.wait(p)
}

// wait waits for the process's next request, or its end.
func (w *world) wait(p *proc) {
	p.pending = <-p.calls
	p.issuedAt = w.now()
	if p.pending == nil {
		w.finished(p)
	}
}

// finished requeues after a reconcile as controller-runtime does: after a
// failure with a backoff (at once when the API server answers again),
// after RequeueAfter, or not.
func (w *world) finished(p *proc) {
	c := p.ctrl
	c.procs = slices.DeleteFunc(c.procs, func(q *proc) bool { return q == p })
	delete(c.busy, p.key)
	now := w.now()
	switch {
	case p.err != nil:
		c.fails[p.key]++
		backoff := min(10*time.Millisecond<<min(c.fails[p.key], 12), 30*time.Second)
		c.after(p.key, now.Add(backoff))
		w.logf("%s %s failed: %v", c.name, p.key.Name, p.err)
	case p.result.RequeueAfter > 0:
		delete(c.fails, p.key)
		c.after(p.key, now.Add(p.result.RequeueAfter))
	default:
		delete(c.fails, p.key)
	}
}

// jobController starts and finishes Jobs as kube-controller-manager's Job
// controller does (while the API server answers): a Job starts at once
// and ends after its run's duration; a suspended Job does neither.
func (w *world) jobController(now time.Time) {
	if w.api.down {
		return
	}
	for _, key := range w.api.sortedKeys(kindJob) {
		job := w.api.objects[key].(*batchv1.Job)
		if job.Spec.Suspend != nil && *job.Spec.Suspend {
			continue
		}
		if _, done := v1alpha1.JobFinished(job); done {
			delete(w.jobDone, job.UID)
			continue
		}
		if !w.jobStarted[job.UID] {
			w.jobStarted[job.UID] = true
			w.jobDone[job.UID] = now.Add(w.scenario.runFor(job))
			w.api.mutate(key, "job-controller", func(o client.Object) {
				j := o.(*batchv1.Job)
				j.Status.StartTime = ptrTime(now)
				j.Status.Active = 1
			})
			continue
		}
		if done := w.jobDone[job.UID]; !done.After(now) {
			delete(w.jobDone, job.UID)
			failed := w.scenario.fails(job)
			w.runEnds = append(w.runEnds, runEnd{sj: metav1.GetControllerOf(job).Name, job: job.Name, at: now, failed: failed})
			if failed {
				w.api.mutate(key, "job-controller", func(o client.Object) {
					j := o.(*batchv1.Job)
					j.Status.Active, j.Status.Failed = 0, 1
					j.Status.Conditions = append(j.Status.Conditions,
						batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)},
						batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)})
				})
				continue
			}
			w.api.mutate(key, "job-controller", func(o client.Object) {
				j := o.(*batchv1.Job)
				j.Status.Active, j.Status.Succeeded = 0, 1
				j.Status.CompletionTime = ptrTime(now)
				j.Status.Conditions = append(j.Status.Conditions,
					batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)},
					batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)})
			})
		}
	}
	w.checkNow()
}

func ptrTime(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// fault is one thing that goes wrong, at a time.
type fault struct {
	at   time.Time
	what faultKind
	// down is how long an outage lasts; value a trigger's value; name the
	// ScheduledJob a trigger or a deletion is for.
	down  time.Duration
	value string
	name  string
	// landed: a killed process's request in flight reached the API server.
	landed bool
}

type faultKind string

const (
	killLeader  faultKind = "kill the leader"
	killStandby faultKind = "kill the replica that does not lead"
	stopLeader  faultKind = "stop the leader gracefully"
	outage      faultKind = "API outage"
	triggerRun  faultKind = "trigger a run"
)

func (w *world) inject(f fault) {
	w.logf("fault: %s %s %s", f.what, f.name, f.down)
	switch f.what {
	case killLeader:
		if w.lease != nil {
			w.leaderKills++
			w.crash(w.lease, f.landed)
		}
	case killStandby:
		for _, r := range w.replicas {
			if r.alive && !r.leading {
				w.crash(r, f.landed)
				break
			}
		}
	case stopLeader:
		if w.lease != nil {
			w.lease.stopping = true
		}
	case outage:
		w.api.down, w.api.ambiguous = true, w.rng.IntN(2) == 0
		w.downFrom, w.downUntil = w.now(), w.now().Add(f.down)
		if w.lease != nil {
			if w.now().After(w.ledSince) {
				w.leadership = append(w.leadership, interval{w.ledSince, w.now()})
			}
			w.ledSince = w.downUntil
		}
	case triggerRun:
		w.trigger(f.name, f.value)
	}
}

// trigger asks for a run by hand, as ontime trigger does.
func (w *world) trigger(name, value string) {
	key := objectKey{kind: kindScheduledJob, namespace: namespace, name: name}
	if _, ok := w.api.objects[key]; !ok {
		return
	}
	w.api.mutate(key, "user", func(o client.Object) {
		annotations := o.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[v1alpha1.TriggerAnnotation] = value
		o.SetAnnotations(annotations)
	})
}

// recorder records the events every actor emits.
type recorder struct {
	now    func() time.Time
	actor  string
	events *[]event
}

type event struct {
	at                     time.Time
	actor, object          string
	eventType, reason, msg string
}

func (r *recorder) as(actor string) *recorder {
	if r.events == nil {
		r.events = &[]event{}
	}
	return &recorder{now: r.now, actor: actor, events: r.events}
}

func (r *recorder) Event(obj k8sruntime.Object, eventType, reason, message string) {
	name := ""
	if o, ok := obj.(client.Object); ok {
		name = o.GetName()
	}
	*r.events = append(*r.events, event{at: r.now(), actor: r.actor, object: name, eventType: eventType, reason: reason, msg: message})
}

func (r *recorder) Eventf(obj k8sruntime.Object, eventType, reason, format string, args ...any) {
	r.Event(obj, eventType, reason, fmt.Sprintf(format, args...))
}

func (r *recorder) AnnotatedEventf(obj k8sruntime.Object, _ map[string]string, eventType, reason, format string, args ...any) {
	r.Eventf(obj, eventType, reason, format, args...)
}

// runEnd is how and when the Job controller finished one Job.
type runEnd struct {
	sj, job string
	at      time.Time
	failed  bool
}
