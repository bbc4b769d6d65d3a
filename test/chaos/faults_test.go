//go:build chaos

package chaos

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ontime-dev/ontime/test/framework"
)

// components are the kwokctl cluster's processes, which a kubelet would
// restart when they exit: kube-controller-manager and kube-scheduler exit
// when they cannot renew their leases while the API server is down.
var components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller"}

// component is a control-plane process and whether it is deliberately
// stopped.
type component struct {
	*framework.Component
	// down is set while the component is deliberately stopped.
	down bool
}

// faults kills the leader on a period, and kube-apiserver and etcd once,
// and restarts control-plane processes that exit.
type faults struct {
	obs        *observer
	clusterDir string

	mu         sync.Mutex
	components map[string]*component
	restarts   map[string]int // unplanned restarts, by component

	kills                           []time.Time
	apiserverRestarts, etcdRestarts int
	// longOutage is when kube-apiserver was down for cfg.longDown, across
	// a minute (zero: it was not).
	longOutage struct{ from, until time.Time }
}

func newFaults(t *testing.T, obs *observer, clusterDir string) *faults {
	f := &faults{obs: obs, clusterDir: clusterDir, components: map[string]*component{}, restarts: map[string]int{}}
	for _, name := range components {
		c, err := framework.LoadComponent(clusterDir, name)
		if err != nil {
			t.Fatal(err)
		}
		f.components[name] = &component{Component: c}
	}
	return f
}

// superviseComponents restarts, a second after it exits, any component
// not deliberately down, until ctx ends. It checks ctx after each wait, not
// only before: once the run is over the cluster is deleted, and a
// supervisor that woke up then took its stopped processes for crashes and
// failed the test trying to restart them.
func (f *faults) superviseComponents(ctx context.Context, t *testing.T) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		f.restartExited(t)
	}
}

// restartExited starts again every component that exited unasked.
func (f *faults) restartExited(t *testing.T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range components {
		if c := f.components[name]; !c.down && !c.Alive() {
			framework.Progress("%s exited; starting it again", name)
			if err := c.Start(); err != nil {
				t.Error(err)
			}
			f.restarts[name]++
		}
	}
}

// inject runs until start + cfg.duration: the leader is killed every
// cfg.killEvery, kube-apiserver at 40% of the duration and etcd at 70%
// (or as soon after as a replica leads), and, with cfg.longDown,
// kube-apiserver again for that long from the first :50 after 85%.
func (f *faults) inject(ctx context.Context, t *testing.T, cfg config, start time.Time) {
	end := start.Add(cfg.duration)
	if cfg.terminateBefore > 0 {
		f.terminateBeforeEachMinute(ctx, cfg, end)
		return
	}
	p := &faultPlan{apiserverAt: start.Add(cfg.duration * 4 / 10), etcdAt: start.Add(cfg.duration * 7 / 10), nextKill: start.Add(cfg.killEvery)}
	if cfg.longDown > 0 {
		p.longAt = start.Add(cfg.duration * 85 / 100)
	}
	for ctx.Err() == nil && (time.Now().Before(end) || !p.longAt.IsZero()) {
		f.step(t, cfg, p, time.Now(), end)
		time.Sleep(100 * time.Millisecond)
	}
}

// faultPlan is when each fault is next due (zero: done).
type faultPlan struct{ apiserverAt, etcdAt, longAt, nextKill time.Time }

// due reports whether a fault planned at is due at now.
func due(at, now time.Time) bool { return !at.IsZero() && !now.Before(at) }

// step injects the fault due at now, if any. kube-apiserver and etcd go
// down while a replica leads, so that the leader lives through the outage
// (it cannot renew its lease).
func (f *faults) step(t *testing.T, cfg config, p *faultPlan, now, end time.Time) {
	leading := f.obs.leader() != nil
	switch {
	case due(p.apiserverAt, now) && leading:
		f.bounce(t, "kube-apiserver", cfg.down)
		f.apiserverRestarts++
		p.apiserverAt = time.Time{}
	case due(p.etcdAt, now) && leading:
		f.bounce(t, "etcd", cfg.down)
		f.etcdRestarts++
		p.etcdAt = time.Time{}
	case due(p.longAt, now):
		// No more kills: a replica must lead when the outage begins, so
		// that it lives through it (its Lease expires meanwhile), and one
		// killed at :49 would leave no leader until after the minute.
		f.longOutageStep(t, cfg, p, now, end, leading)
	case !now.Before(p.nextKill):
		if leader := f.obs.leader(); leader != nil {
			framework.Progress("killing the leader, replica %s", leader.Name)
			leader.Kill()
			f.kills = append(f.kills, time.Now())
		}
		p.nextKill = p.nextKill.Add(cfg.killEvery)
	}
}

// longOutageStep starts the long outage at :50 to :55 of a minute while a
// replica leads: kube-apiserver is down from 10 s before the minute until
// cfg.longDown − 10 s after it, longer than the 30 s starting deadline of
// a quarter of the ScheduledJobs, whose runs of that minute are missed. It
// gives up two minutes after the other faults' end.
func (f *faults) longOutageStep(t *testing.T, cfg config, p *faultPlan, now, end time.Time, leading bool) {
	switch {
	case now.After(end.Add(2 * time.Minute)):
		framework.Progress("no replica led at :50 of any minute since %s: no long outage", p.longAt.Format(time.TimeOnly))
		p.longAt = time.Time{}
	case leading && now.Second() >= 50 && now.Second() < 55:
		f.longOutage.from = time.Now()
		f.bounce(t, "kube-apiserver", cfg.longDown)
		f.longOutage.until = time.Now()
		f.apiserverRestarts++
		p.longAt = time.Time{}
	}
}

// duringLongOutage reports whether a run at t was due while kube-apiserver
// was down for the long outage.
func (f *faults) duringLongOutage(t time.Time) bool {
	return !f.longOutage.from.IsZero() && t.After(f.longOutage.from) && t.Before(f.longOutage.until)
}

// bounce kills a component with SIGKILL and starts it again after down.
func (f *faults) bounce(t *testing.T, name string, down time.Duration) {
	f.mu.Lock()
	c := f.components[name]
	c.down = true
	pid, err := c.Pid()
	f.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	framework.Progress("killing %s (pid %d); it comes back in %s", name, pid, down)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(down) // the outage
	f.mu.Lock()
	err = c.Start()
	c.down = false
	f.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	framework.Progress("%s started again", name)
}

// terminateBeforeEachMinute stops the leader gracefully (SIGTERM: it
// releases its Lease) cfg.terminateBefore before every other minute
// (stoppedBefore) until end,
// the worst instant for a rolling update or a drain to stop it: its
// successor has not taken the Lease when the minute's runs come due.
func (f *faults) terminateBeforeEachMinute(ctx context.Context, cfg config, end time.Time) {
	for ctx.Err() == nil {
		at := time.Now().Truncate(time.Minute).Add(time.Minute - cfg.terminateBefore)
		if at.Before(time.Now()) {
			at = at.Add(time.Minute)
		}
		if at.After(end) {
			return
		}
		time.Sleep(time.Until(at))
		if !stoppedBefore(at.Add(cfg.terminateBefore)) {
			continue
		}
		if leader := f.obs.leader(); leader != nil {
			framework.Progress("stopping the leader, replica %s, with SIGTERM", leader.Name)
			leader.Terminate()
			f.kills = append(f.kills, time.Now())
		}
	}
}
