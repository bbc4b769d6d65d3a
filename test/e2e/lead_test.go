//go:build e2e && lead

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

// leadScenario is one test of lead Auto against Karpenter: its provisioning
// delays, how many runs each lasts, and the runs' spacing and leads.
type leadScenario struct {
	phases []leadPhase
	// interval is the time between runs (@every): longer than maxLead
	// plus a late run's lateness and the release of its nodes, so that
	// each warm-up needs new nodes.
	interval         time.Duration
	minLead, maxLead time.Duration
	// fixedLead is the shortest fixed lead that covers the worst delay
	// with the few seconds placeholders take to be created and bound.
	fixedLead time.Duration
}

// leadPhase is a provisioning delay and how many runs it lasts.
type leadPhase struct {
	delay time.Duration
	runs  int
}

// fullLeadScenario is the issue's: 60 s → 120 s → 30 s, three runs each.
// make e2e-lead LEAD=full, about 50 minutes.
var fullLeadScenario = leadScenario{
	phases:   []leadPhase{{60 * time.Second, 3}, {120 * time.Second, 3}, {30 * time.Second, 3}},
	interval: 5 * time.Minute, minLead: 30 * time.Second, maxLead: 3 * time.Minute, fixedLead: 130 * time.Second,
}

// quickLeadScenario has the same shape at half the delays, but 25 s
// rather than 15 s for the last (placeholders' own few seconds would be a
// fifth of 15 s, and minLead cannot be below 30 s), and four runs of the
// last delay: make e2e-lead, about 24 minutes. At half the delays,
// what Auto saves on a run below the worst delay is half as much, while what it spends (the first run's maxLead,
// and 1.2× the provisioning time where a fixed lead adds a few seconds
// to it) shrinks less: with three runs of 25 s, Auto's node time was only
// 27 s below the fixed lead's of 8m40s, and a few seconds more of
// provisioning per run on a loaded machine would have reversed it.
var quickLeadScenario = leadScenario{
	phases:   []leadPhase{{30 * time.Second, 2}, {60 * time.Second, 3}, {25 * time.Second, 4}},
	interval: 150 * time.Second, minLead: 30 * time.Second, maxLead: 90 * time.Second, fixedLead: 65 * time.Second,
}

// delays is the provisioning delay of each run.
func (s leadScenario) delays() []time.Duration {
	var delays []time.Duration
	for _, p := range s.phases {
		for range p.runs {
			delays = append(delays, p.delay)
		}
	}
	return delays
}

// leadRun is one run of a ScheduledJob, as its status recorded it:
// provisioning is its warm-up's start to its capacity's ready (for a run
// that started before that, to the run's start: at least that long).
type leadRun struct {
	delay, lead, late, held, provisioning time.Duration
	reason                                string
	warmUpStart                           time.Time
}

// TestAutoLeadAgainstKarpenter runs the full scenario (make e2e-lead).
func TestAutoLeadAgainstKarpenter(t *testing.T) { testAutoLead(t, fullLeadScenario) }

// TestAutoLeadAgainstKarpenterQuick runs the quick scenario (make e2e-lead).
func TestAutoLeadAgainstKarpenterQuick(t *testing.T) { testAutoLead(t, quickLeadScenario) }

// testAutoLead runs a ScheduledJob with lead Auto and one with a fixed
// lead that covers the worst delay, side by side on NodePools of their
// own, while Karpenter's provisioning delay goes through the scenario's
// phases. After at most 3 runs of each delay the Auto lead is at most
// 1.5× the delay and its runs are on time (from the third run of each
// delay: p99 ≤ 2 s); the node time spent before its runs (warm-up start
// to run start, nodes launched at warm-up start) is below the fixed
// lead's. After each run, once its pods are done, the test deletes the
// run's nodes (Karpenter's consolidation would, 30 s later), so that the
// next warm-up finds none.
func testAutoLead(t *testing.T, scenario leadScenario) {
	binary := framework.SharedOntime(t)
	cluster := framework.StartCluster(t, "ontime-e2e-lead", framework.ClusterOptions{Nodes: 1})
	cluster.Kubectl(t, "apply", "--server-side", "-k", "config/dev")
	cluster.StartKarpenter(t, scenario.phases[0].delay)
	c := framework.NewClient(t, cluster.Kubeconfig)
	ctx := context.Background()
	waitForCRD(t, c)
	framework.StartController(t, framework.ControllerOptions{Name: "lead", Binary: binary, Kubeconfig: cluster.Kubeconfig, Work: cluster.Work, LeaderElect: true, Webhook: true})
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: warmNamespace}}); err != nil {
		t.Fatal(err)
	}
	pools := []string{"auto", "fixed"}
	for _, pool := range pools {
		createNodePoolLike(t, c, "batch", pool)
	}
	schedule := fmt.Sprintf("@every %s", scenario.interval)
	auto := leadScheduledJob("auto", schedule, &v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true},
		MinLead: &metav1.Duration{Duration: scenario.minLead}, MaxLead: &metav1.Duration{Duration: scenario.maxLead}})
	fixed := leadScheduledJob("fixed", schedule, &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(scenario.fixedLead)})
	for _, sj := range []*v1alpha1.ScheduledJob{auto, fixed} {
		if err := c.Create(ctx, sj); err != nil {
			t.Fatal(err)
		}
	}
	// @every counts from the creation: each ScheduledJob has its own
	// first run, a second or so apart.
	autoFirst, fixedFirst := firstRunOf(t, c, "auto"), firstRunOf(t, c, "fixed")
	delays := scenario.delays()
	framework.Progress("runs %s from %s (auto) and %s (fixed); provisioning delays %v", schedule,
		autoFirst.Format(time.TimeOnly), fixedFirst.Format(time.TimeOnly), delays)

	var autoRuns, fixedRuns []leadRun
	for i, delay := range delays {
		autoRun, fixedRun := autoFirst.Add(time.Duration(i)*scenario.interval), fixedFirst.Add(time.Duration(i)*scenario.interval)
		// The run's warm-up, read before the next one replaces it.
		sleepUntil(latest(autoRun, fixedRun).Add(5 * time.Second))
		a, f := warmUpOf(t, c, "auto", autoRun, delay), warmUpOf(t, c, "fixed", fixedRun, delay)
		if i+1 < len(delays) && delays[i+1] != delay {
			// This run's nodes are launched: the next warm-up's get
			// the next delay.
			setProvisioningDelay(t, c, delays[i+1])
		}
		startOf(t, c, "auto", autoRun, &a)
		startOf(t, c, "fixed", fixedRun, &f)
		autoRuns, fixedRuns = append(autoRuns, a), append(fixedRuns, f)
		framework.Progress("run %d at %s, delay %s: Auto lead %s (%s) provisioned in %s, late %s, held %s; fixed lead %s provisioned in %s, late %s, held %s",
			i+1, autoRun.Format(time.TimeOnly), delay, a.lead, a.reason, a.provisioning, a.late, a.held, f.lead, f.provisioning, f.late, f.held)
		releaseNodes(t, c, pools)
	}
	checkAutoLead(t, scenario, autoRuns, fixedRuns)
}

// leadScheduledJob is a warmed ScheduledJob on the NodePool of its name,
// whose run's pod takes a node for 5 s.
func leadScheduledJob(name, schedule string, warmUp *v1alpha1.WarmUp) *v1alpha1.ScheduledJob {
	sj := warmScheduledJob(name, schedule, warmUp)
	sj.Spec.JobTemplate = framework.NodePoolRun(5 * time.Second)
	sj.Spec.JobTemplate.Spec.Template.Spec.NodeSelector = map[string]string{"karpenter.sh/nodepool": name}
	return sj
}

// firstRunOf reads a ScheduledJob's first run time.
func firstRunOf(t *testing.T, c client.Client, name string) time.Time {
	t.Helper()
	var first time.Time
	framework.Eventually(t, time.Minute, name+"'s next run time", func() bool {
		sj := &v1alpha1.ScheduledJob{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: warmNamespace, Name: name}, sj); err != nil || sj.Status.NextScheduleTime == nil {
			return false
		}
		first = sj.Status.NextScheduleTime.Time
		return true
	})
	return first
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// releaseNodes waits for the runs' pods to be done and deletes the
// pools' NodeClaims, then waits for their nodes to go.
func releaseNodes(t *testing.T, c client.Client, pools []string) {
	t.Helper()
	ctx := context.Background()
	framework.Eventually(t, 2*time.Minute, "the runs' pods to be done", func() bool {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(warmNamespace)); err != nil {
			return false
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				return false
			}
		}
		return true
	})
	inPools, err := labels.Parse("karpenter.sh/nodepool in (" + strings.Join(pools, ",") + ")")
	if err != nil {
		t.Fatal(err)
	}
	claim := &unstructured.Unstructured{}
	claim.SetGroupVersionKind(schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1", Kind: "NodeClaim"})
	if err := c.DeleteAllOf(ctx, claim, client.MatchingLabelsSelector{Selector: inPools}); err != nil {
		t.Fatalf("deleting the runs' NodeClaims: %v", err)
	}
	framework.Eventually(t, 2*time.Minute, "the runs' nodes to go", func() bool {
		var nodes corev1.NodeList
		return c.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: inPools}) == nil && len(nodes.Items) == 0
	})
}

// setProvisioningDelay changes the KWOKNodeClass's nodeRegistrationDelay:
// nodes Karpenter launches from now on register that long after launch.
func setProvisioningDelay(t *testing.T, c client.Client, delay time.Duration) {
	t.Helper()
	class := &unstructured.Unstructured{}
	class.SetGroupVersionKind(schema.GroupVersionKind{Group: "karpenter.kwok.sh", Version: "v1alpha1", Kind: "KWOKNodeClass"})
	class.SetName("default")
	patch := fmt.Sprintf(`{"spec":{"nodeRegistrationDelay":%q}}`, delay.String())
	if err := c.Patch(context.Background(), class, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("setting the provisioning delay to %s: %v", delay, err)
	}
	framework.Progress("Karpenter's provisioning delay is now %s", delay)
}

// warmUpOf reads the lead a ScheduledJob's warm-up for run began with,
// and when it began.
func warmUpOf(t *testing.T, c client.Client, name string, run time.Time, delay time.Duration) leadRun {
	t.Helper()
	sj := &v1alpha1.ScheduledJob{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: warmNamespace, Name: name}, sj); err != nil {
		t.Fatal(err)
	}
	w := sj.Status.WarmUp
	if w == nil || !w.ScheduledTime.Time.Equal(run) || w.Lead == nil {
		t.Fatalf("%s: status.warmUp %+v, want the warm-up of the run at %s", name, w, run.Format(time.TimeOnly))
	}
	r := leadRun{delay: delay, lead: w.Lead.Lead.Duration, reason: w.Lead.Reason, warmUpStart: w.StartTime.Time}
	if w.ReadyTime != nil {
		r.provisioning = w.ReadyTime.Sub(w.StartTime.Time)
	}
	return r
}

// startOf reads how late the run started (status.lastRunStart), and the
// node time held before it: from the warm-up's start, when its nodes were
// launched, to the run's start.
func startOf(t *testing.T, c client.Client, name string, run time.Time, r *leadRun) {
	t.Helper()
	framework.Eventually(t, 3*time.Minute, name+"'s run start to be measured", func() bool {
		sj := &v1alpha1.ScheduledJob{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: warmNamespace, Name: name}, sj); err != nil {
			return false
		}
		s := sj.Status.LastRunStart
		if s == nil || !s.ScheduledTime.Time.Equal(run) {
			return false
		}
		r.late, r.held = s.Lateness.Duration, s.StartTime.Sub(r.warmUpStart)
		if r.provisioning == 0 {
			r.provisioning = r.held
		}
		return true
	})
}

// checkAutoLead: from the third run of each delay on (after at most 3
// runs), the Auto lead is at most 1.5× the delay and its runs are on time,
// p99 ≤ 2 s; over the whole test its node time is below the fixed
// lead's. The delay a lead must cover is the provisioning time: Karpenter's
// registration delay, plus its batching and launch and the placeholders'
// binding, which on a loaded machine add seconds (a lead learned as 1.2×
// that is above 1.5× a delay of 25 s once they pass 6 s). The bound is
// 1.5× the delay, or 1.5× the provisioning time the fixed lead's warm-up
// of the same run measured, on the same cluster at the same moment,
// whichever is longer.
func checkAutoLead(t *testing.T, scenario leadScenario, autoRuns, fixedRuns []leadRun) {
	t.Helper()
	var adapted []time.Duration
	var autoHeld, fixedHeld time.Duration
	i := 0
	for _, p := range scenario.phases {
		for k := range p.runs {
			a := autoRuns[i]
			if k >= 2 {
				adapted = append(adapted, a.late)
			}
			if bound := max(p.delay, fixedRuns[i].provisioning) * 3 / 2; k >= 2 && a.lead > bound {
				t.Errorf("run %d, the %d. of delay %s (provisioned in %s beside it): lead %s; want at most %s", i+1, k+1, p.delay, fixedRuns[i].provisioning, a.lead, bound)
			}
			autoHeld += a.held
			fixedHeld += fixedRuns[i].held
			i++
		}
	}
	slices.Sort(adapted)
	t.Logf("Auto: lateness after adapting (from the 3rd run of each delay) p99 %s; node time before runs %s, fixed %s lead %s",
		framework.Percentile(adapted, 99), autoHeld, scenario.fixedLead, fixedHeld)
	if p99 := framework.PercentileValue(adapted, 99); p99 > 2*time.Second {
		t.Errorf("lateness p99 %s after adapting, want ≤ 2s", p99)
	}
	if autoHeld >= fixedHeld {
		t.Errorf("node time before runs %s with lead Auto, %s with the fixed lead %s: want Auto below", autoHeld, fixedHeld, scenario.fixedLead)
	}
}
