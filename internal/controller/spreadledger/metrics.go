package spreadledger

import (
	"context"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/spread"
)

// startsDesc: how a Balanced group's starts fall on the minutes of the
// hour, from its ledger, so a dashboard shows whether spreading keeps
// minute 0 quiet.
var startsDesc = prometheus.NewDesc("ontime_spread_starts_per_day",
	"Weighted starts per day of a Balanced spread group's members in each minute of the hour (UTC), from the group's ledger.",
	[]string{"group", "minute"}, nil)

// StartsCollector reads the ledgers from a cache when Prometheus scrapes,
// so the figures cost nothing between scrapes. A process registers one
// (internal/controller.Register).
type StartsCollector struct {
	reader    client.Reader
	namespace string
	clock     clock.PassiveClock
	log       logr.Logger
}

// NewStartsCollector collects the ledgers in namespace, read through
// reader (the manager's cache).
func NewStartsCollector(reader client.Reader, namespace string, clk clock.PassiveClock, log logr.Logger) *StartsCollector {
	return &StartsCollector{reader: reader, namespace: namespace, clock: clk, log: log}
}

// Describe sends the one metric's description.
func (c *StartsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- startsDesc }

// Collect sends each group's starts per minute of the hour, from the
// ledgers as the cache holds them now.
func (c *StartsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ledgers := &corev1.ConfigMapList{}
	if err := c.reader.List(ctx, ledgers, client.InNamespace(c.namespace), client.HasLabels{spread.GroupLabel}); err != nil {
		c.log.Info("listing spread ledgers", "error", err.Error())
		return
	}
	for i := range ledgers.Items {
		group := ledgers.Items[i].Labels[spread.GroupLabel]
		perMinute, err := startsPerMinuteOfHour(&ledgers.Items[i], c.clock.Now())
		if err != nil {
			c.log.Info("reading a spread ledger", "group", group, "error", err.Error())
			continue
		}
		for minute, starts := range perMinute {
			ch <- prometheus.MustNewConstMetric(startsDesc, prometheus.GaugeValue, float64(starts), group, strconv.Itoa(minute))
		}
	}
}

// startsPerMinuteOfHour folds a ledger's daily starts onto the hour: the
// metric counts starts even for members balanced by runs in flight
// (spec.spread.runDuration).
func startsPerMinuteOfHour(ledger *corev1.ConfigMap, now time.Time) ([60]int64, error) {
	var perMinute [60]int64
	entries, _, err := spread.ReadLedger(ledger)
	if err != nil {
		return perMinute, err
	}
	for key, entry := range entries {
		entry.Span = 0 // starts, whatever the group is balanced by
		entries[key] = entry
	}
	load, err := spread.LedgerLoad(entries, now, v1alpha1.ScheduleParser)
	if err != nil {
		return perMinute, err
	}
	for minuteOfDay, starts := range load {
		perMinute[minuteOfDay%60] += starts
	}
	return perMinute, nil
}
