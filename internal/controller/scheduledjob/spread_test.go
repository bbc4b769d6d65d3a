//go:build integration

package scheduledjob

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/spread"
	"github.com/ontime-dev/ontime/internal/testenv"
)

var spreadNow = time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)

func balancedJob(namespace, name, schedule, group string) *v1alpha1.ScheduledJob {
	sj := newScheduledJob(namespace, name, schedule)
	sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, Group: group}
	return sj
}

// ledgerOf reads a group's ledger from the API server.
func ledgerOf(t *testing.T, group string) (map[string]spread.LedgerEntry, *corev1.ConfigMap) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := env.Live.Get(env.Ctx, types.NamespacedName{Namespace: testSpreadNamespace, Name: spread.LedgerName(group)}, cm); err != nil {
		t.Fatalf("ledger of group %s: %v", group, err)
	}
	entries, _, err := spread.ReadLedger(cm)
	if err != nil {
		t.Fatal(err)
	}
	return entries, cm
}

// placedGroup creates n Balanced ScheduledJobs of a group in a new
// namespace and places them one after the other.
func placedGroup(t *testing.T, n int, schedule, group string) []*v1alpha1.ScheduledJob {
	t.Helper()
	ns := newNamespace(t)
	var sjs []*v1alpha1.ScheduledJob
	for i := range n {
		sj := balancedJob(ns, fmt.Sprintf("job-%d", i), schedule, group)
		create(t, sj)
		reconcileAt(t, sj, spreadNow)
		sjs = append(sjs, sj)
	}
	return sjs
}

// reconcileUntilDone reconciles as the work queue would: again after an
// error, a few times.
func reconcileUntilDone(t *testing.T, c *Controller, sj *v1alpha1.ScheduledJob) {
	t.Helper()
	var err error
	for range 5 {
		if _, err = c.Reconcile(env.Ctx, requestFor(sj)); err == nil {
			return
		}
	}
	t.Errorf("reconciling %s: %v", sj.Name, err)
}

func minuteOf(t *testing.T, sj *v1alpha1.ScheduledJob) int {
	t.Helper()
	status := get(t, sj).Status
	if status.Spread == nil || len(status.Spread.Choices) != 1 {
		t.Fatalf("%s: status.spread %+v", sj.Name, status.Spread)
	}
	minute := status.Spread.Choices[0]
	if want := strconv.Itoa(minute) + " * * * *"; status.EffectiveSchedule != want {
		t.Errorf("%s: effectiveSchedule %q, want %q", sj.Name, status.EffectiveSchedule, want)
	}
	return minute
}

// TestBalancedConcurrentPlacement: sixty "H * * * *" ScheduledJobs
// created at the same instant and placed concurrently, by two controllers
// that share nothing but the API server (two replicas, or a leader and a
// deposed one), get sixty different minutes: the ledger's resourceVersion
// lets no two decisions be made from the same state.
func TestBalancedConcurrentPlacement(t *testing.T) {
	ns := newNamespace(t)
	other := newSuiteController(env.Cached)
	env.Clock.SetTime(spreadNow)
	var sjs []*v1alpha1.ScheduledJob
	for i := range 60 {
		sj := balancedJob(ns, fmt.Sprintf("hourly-%d", i), "H * * * *", "concurrent")
		create(t, sj)
		sjs = append(sjs, sj)
	}
	for _, sj := range sjs {
		waitForCache(t, sj)
	}
	var wg sync.WaitGroup
	for i, sj := range sjs {
		c := env.ctrl
		if i%2 == 1 {
			c = other
		}
		wg.Go(func() { reconcileUntilDone(t, c, sj) })
	}
	wg.Wait()

	entries, _ := ledgerOf(t, "concurrent")
	if len(entries) != 60 {
		t.Fatalf("ledger holds %d entries, want 60", len(entries))
	}
	seen := map[int]string{}
	for _, sj := range sjs {
		minute := minuteOf(t, sj)
		if first, taken := seen[minute]; taken {
			t.Errorf("%s and %s both start at minute %d", first, sj.Name, minute)
		}
		seen[minute] = sj.Name
		if entry := entries[spread.LedgerKey(ns, sj.Name)]; !slices.Equal(entry.Choices, []int{minute}) {
			t.Errorf("%s: ledger says %v, status %d", sj.Name, entry.Choices, minute)
		}
	}
}

// TestBalancedSurvivesRestartAndLostLedger: a restarted controller reads
// placements from the ledger; if the ledger itself is deleted, each
// ScheduledJob puts back the placement its status recorded. Nobody moves.
func TestBalancedSurvivesRestartAndLostLedger(t *testing.T) {
	sjs := placedGroup(t, 5, "H/10 * * * *", "restart")
	before, cm := ledgerOf(t, "restart")

	restarted := newSuiteController(env.Cached)
	for _, sj := range sjs {
		reconcileUntilDone(t, restarted, sj)
	}
	if err := env.Live.Delete(env.Ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitForLedgerGone(t, "restart")
	for _, sj := range sjs {
		reconcileUntilDone(t, restarted, sj)
	}
	after, _ := ledgerOf(t, "restart")
	for key, entry := range before {
		if !slices.Equal(after[key].Choices, entry.Choices) {
			t.Errorf("%s moved from %v to %v", key, entry.Choices, after[key].Choices)
		}
	}
	if len(after) != len(before) {
		t.Errorf("ledger restored with %d entries, had %d", len(after), len(before))
	}
}

func waitForLedgerGone(t *testing.T, group string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, "the cache to drop the deleted ledger", func() bool {
		err := env.Cached.Get(env.Ctx, types.NamespacedName{Namespace: testSpreadNamespace, Name: spread.LedgerName(group)}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err)
	})
}

// TestBalancedLeaveEditDelete: a deleted ScheduledJob leaves the ledger; an
// edited schedule is placed anew; one switched to Hash leaves the group;
// none of it moves the others.
func TestBalancedLeaveEditDelete(t *testing.T) {
	ns := newNamespace(t)
	a, b, c, d := balancedJob(ns, "a", "H * * * *", "edits"), balancedJob(ns, "b", "H * * * *", "edits"),
		balancedJob(ns, "c", "H * * * *", "edits"), balancedJob(ns, "d", "H * * * *", "edits")
	for _, sj := range []*v1alpha1.ScheduledJob{a, b, c, d} {
		create(t, sj)
		reconcileAt(t, sj, spreadNow)
	}
	aMinute := minuteOf(t, a)

	if err := env.Live.Delete(env.Ctx, b); err != nil {
		t.Fatal(err)
	}
	waitForGone(t, b)
	reconcileAt(t, b, spreadNow)

	edited := get(t, c)
	edited.Spec.Schedule = "H/30 * * * *"
	if err := env.Live.Update(env.Ctx, edited); err != nil {
		t.Fatal(err)
	}
	reconcileAt(t, edited, spreadNow)

	hashed := get(t, d)
	hashed.Spec.Spread = nil
	if err := env.Live.Update(env.Ctx, hashed); err != nil {
		t.Fatal(err)
	}
	reconcileAt(t, hashed, spreadNow)

	entries, _ := ledgerOf(t, "edits")
	if _, ok := entries[spread.LedgerKey(ns, "b")]; ok {
		t.Error("the deleted b is still in the ledger")
	}
	if _, ok := entries[spread.LedgerKey(ns, "d")]; ok {
		t.Error("d, switched to Hash, is still in the ledger")
	}
	if got := entries[spread.LedgerKey(ns, "c")]; got.Schedule != "H/30 * * * *" {
		t.Errorf("c's entry is for %q, want the edited schedule", got.Schedule)
	}
	if got := minuteOf(t, a); got != aMinute {
		t.Errorf("a moved from minute %d to %d", aMinute, got)
	}
	status := get(t, d).Status
	if status.Spread != nil || status.EffectiveSchedule == "" {
		t.Errorf("d under Hash: spread %+v, effectiveSchedule %q", status.Spread, status.EffectiveSchedule)
	}
}

// TestBalancedRunsInFlight: with spec.spread.runDuration the ledger
// records each member's span and the next member is placed where the runs
// in flight are fewest: two hourly runs of 30 minutes are placed 30
// minutes apart, never overlapping. Changing runDuration updates the span
// others are placed against, and does not move the member.
func TestBalancedRunsInFlight(t *testing.T) {
	ns := newNamespace(t)
	halfHour := &metav1.Duration{Duration: 30 * time.Minute}
	a, b := balancedJob(ns, "a", "H * * * *", "inflight"), balancedJob(ns, "b", "H * * * *", "inflight")
	for _, sj := range []*v1alpha1.ScheduledJob{a, b} {
		sj.Spec.Spread.RunDuration = halfHour
		create(t, sj)
		reconcileAt(t, sj, spreadNow)
	}
	aMinute, bMinute := minuteOf(t, a), minuteOf(t, b)
	if apart := (bMinute - aMinute + 60) % 60; apart != 30 {
		t.Errorf("a at :%02d and b at :%02d: runs of 30 minutes overlap", aMinute, bMinute)
	}
	if entries, _ := ledgerOf(t, "inflight"); entries[spread.LedgerKey(ns, "a")].Span != 30 {
		t.Errorf("a's ledger entry %+v, want span 30", entries[spread.LedgerKey(ns, "a")])
	}

	edited := get(t, a)
	edited.Spec.Spread.RunDuration = &metav1.Duration{Duration: 90 * time.Second}
	if err := env.Live.Update(env.Ctx, edited); err != nil {
		t.Fatal(err)
	}
	reconcileAt(t, edited, spreadNow)
	if entries, _ := ledgerOf(t, "inflight"); entries[spread.LedgerKey(ns, "a")].Span != 2 {
		t.Errorf("after runDuration 90s, a's ledger entry %+v, want span 2 (whole minutes, rounded up)", entries[spread.LedgerKey(ns, "a")])
	}
	if got := minuteOf(t, a); got != aMinute {
		t.Errorf("a moved from :%02d to :%02d when its runDuration changed", aMinute, got)
	}
}

func waitForGone(t *testing.T, obj client.Object) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, "the cache to drop "+obj.GetName(), func() bool {
		err := env.Cached.Get(env.Ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		return apierrors.IsNotFound(err)
	})
}

// TestRebalanceIsTakenUp: after a rebalance rewrites the ledger (as ontime
// spread rebalance does), each member runs at its new minute.
func TestRebalanceIsTakenUp(t *testing.T) {
	sjs := placedGroup(t, 4, "H * * * *", "rebalance")
	entries, cm := ledgerOf(t, "rebalance")
	// Crowd them into one minute, as arrivals and departures might have
	// left them, then rebalance.
	for key, entry := range entries {
		entry.Choices = []int{7}
		entries[key] = entry
	}
	rebalanced, epoch, err := spread.RebalanceLedger(entries, 0, spreadNow, v1alpha1.ScheduleParser)
	if err != nil {
		t.Fatal(err)
	}
	if err := spread.WriteLedger(cm, rebalanced, epoch); err != nil {
		t.Fatal(err)
	}
	if err := env.Live.Update(env.Ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitForLedgerEpoch(t, "rebalance", epoch)
	seen := map[int]bool{}
	for _, sj := range sjs {
		reconcileAt(t, sj, spreadNow)
		minute := minuteOf(t, sj)
		if seen[minute] {
			t.Errorf("minute %d is shared after the rebalance", minute)
		}
		seen[minute] = true
		if got := get(t, sj).Status.Spread.Epoch; got != epoch {
			t.Errorf("%s: status.spread.epoch %d, want %d", sj.Name, got, epoch)
		}
	}
}

func waitForLedgerEpoch(t *testing.T, group string, epoch int64) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, fmt.Sprintf("the cache to see epoch %d of group %s", epoch, group), func() bool {
		cm := &corev1.ConfigMap{}
		if err := env.Cached.Get(env.Ctx, types.NamespacedName{Namespace: testSpreadNamespace, Name: spread.LedgerName(group)}, cm); err != nil {
			return false
		}
		_, got, _ := spread.ReadLedger(cm)
		return got == epoch
	})
}

// TestHashedScheduledJobRuns: an H schedule without spread settings runs
// at its hashed minute, and its Job is named by that time.
func TestHashedScheduledJobRuns(t *testing.T) {
	ns := newNamespace(t)
	sj := newScheduledJob(ns, "hashed", "H * * * *")
	create(t, sj)
	now := get(t, sj).CreationTimestamp.Add(time.Second)
	reconcileAt(t, sj, now)
	status := get(t, sj).Status
	var minute int
	if _, err := fmt.Sscanf(status.EffectiveSchedule, "%d * * * *", &minute); err != nil {
		t.Fatalf("effectiveSchedule %q: %v", status.EffectiveSchedule, err)
	}
	due := now.Truncate(time.Hour).Add(time.Duration(minute) * time.Minute)
	if !due.After(now) {
		due = due.Add(time.Hour)
	}
	if status.NextScheduleTime == nil || !status.NextScheduleTime.Time.Equal(due) {
		t.Fatalf("nextScheduleTime %v, want %v", status.NextScheduleTime, due)
	}
	reconcileAt(t, sj, due.Add(time.Second))
	var names []string
	for _, job := range jobs(t, ns) {
		names = append(names, job.Name)
	}
	if !slices.Equal(names, []string{sj.JobName(due)}) {
		t.Fatalf("jobs %v, want one named %s", names, sj.JobName(due))
	}
}
