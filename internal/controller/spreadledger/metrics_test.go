package spreadledger

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ontime-dev/ontime/internal/spread"
)

func TestStartsPerMinuteOfHour(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	entries := map[string]spread.LedgerEntry{
		// Placed at minute 7 and 37: 24 starts a day each.
		spread.LedgerKey("team", "a"): {Schedule: "H/30 * * * *", Weight: 1, Choices: []int{7}},
		// Weight 2, every other hour at minute 7: 12 starts of weight 2,
		// counted at their starts although the group is balanced by their
		// 20 minutes in flight.
		spread.LedgerKey("team", "b"): {Schedule: "H */2 * * *", Weight: 2, Span: 20, Choices: []int{7}},
		// Amsterdam at H=0 is UTC minute 0 (whole-hour offset).
		spread.LedgerKey("team", "c"): {Schedule: "H 3 * * *", TimeZone: "Europe/Amsterdam", Weight: 1, Choices: []int{0}},
	}
	ledger := &corev1.ConfigMap{}
	if err := spread.WriteLedger(ledger, entries, 1); err != nil {
		t.Fatal(err)
	}
	got, err := startsPerMinuteOfHour(ledger, now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int64{0: 1, 7: 24 + 24, 37: 24}
	for minute, starts := range got {
		if starts != want[minute] {
			t.Errorf("minute %d: %d starts a day, want %d", minute, starts, want[minute])
		}
	}
}

// TestStartsCollector: a scrape reads every ledger of the namespace, and
// only those, into one series per group and minute; a process registers
// its collector once, in a registry of its choosing.
func TestStartsCollector(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	ledger := func(namespace, group string, entries map[string]spread.LedgerEntry) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: spread.LedgerName(group), Labels: map[string]string{spread.GroupLabel: group}}}
		if err := spread.WriteLedger(cm, entries, 1); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	reader := fake.NewClientBuilder().WithObjects(
		ledger("ontime-system", "reports", map[string]spread.LedgerEntry{spread.LedgerKey("team", "a"): {Schedule: "H/30 * * * *", Weight: 1, Choices: []int{7}}}),
		ledger("ontime-system", "backups", map[string]spread.LedgerEntry{spread.LedgerKey("team", "b"): {Schedule: "H * * * *", Weight: 3, Choices: []int{59}}}),
		ledger("elsewhere", "reports", map[string]spread.LedgerEntry{spread.LedgerKey("team", "c"): {Schedule: "H * * * *", Weight: 1, Choices: []int{1}}}),
	).Build()
	registry := prometheus.NewRegistry()
	if err := registry.Register(NewStartsCollector(reader, "ontime-system", clocktesting.NewFakePassiveClock(now), logr.Discard())); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(registry, "ontime_spread_starts_per_day"); n != 2*60 {
		t.Errorf("%d series, want 60 minutes for each of the namespace's 2 groups", n)
	}
	want := `
# HELP ontime_spread_starts_per_day Weighted starts per day of a Balanced spread group's members in each minute of the hour (UTC), from the group's ledger.
# TYPE ontime_spread_starts_per_day gauge
ontime_spread_starts_per_day{group="backups",minute="59"} 72
ontime_spread_starts_per_day{group="reports",minute="37"} 24
ontime_spread_starts_per_day{group="reports",minute="7"} 24
`
	nonzero := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		families, err := registry.Gather()
		for _, family := range families {
			family.Metric = slices.DeleteFunc(family.Metric, func(m *dto.Metric) bool { return m.GetGauge().GetValue() == 0 })
		}
		return families, err
	})
	if err := testutil.GatherAndCompare(nonzero, strings.NewReader(want), "ontime_spread_starts_per_day"); err != nil {
		t.Error(err)
	}
}
