package scheduledjob

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ontime-dev/ontime/internal/spread"
)

// spreadStartsDesc: how a Balanced group's starts fall on the minutes of
// the hour, from its ledger, so a dashboard shows whether spreading keeps
// minute 0 quiet.
var spreadStartsDesc = prometheus.NewDesc("ontime_spread_starts_per_day",
	"Weighted starts per day of a Balanced spread group's members in each minute of the hour (UTC), from the group's ledger.",
	[]string{"group", "minute"}, nil)

// ledgerCollector reads the ledgers from the controller's cache when
// Prometheus scrapes, so the figures cost nothing between scrapes.
type ledgerCollector struct {
	source atomic.Pointer[ledgerSource]
}

type ledgerSource struct {
	reader    client.Reader
	namespace string
	clock     clock.PassiveClock
}

var spreadStarts = &ledgerCollector{}

func init() { metrics.Registry.MustRegister(spreadStarts) }

// watch points the collector at a controller's cache (the last registered
// controller's, in a process that runs several in tests).
func (c *ledgerCollector) watch(reader client.Reader, namespace string, clk clock.PassiveClock) {
	c.source.Store(&ledgerSource{reader: reader, namespace: namespace, clock: clk})
}

func (c *ledgerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- spreadStartsDesc }

func (c *ledgerCollector) Collect(ch chan<- prometheus.Metric) {
	source := c.source.Load()
	if source == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	exists, _ := labels.NewRequirement(spread.GroupLabel, selection.Exists, nil)
	ledgers := &corev1.ConfigMapList{}
	if err := source.reader.List(ctx, ledgers, client.InNamespace(source.namespace), client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*exists)}); err != nil {
		ctrl.Log.WithName("metrics").Info("listing spread ledgers", "error", err.Error())
		return
	}
	for i := range ledgers.Items {
		group := ledgers.Items[i].Labels[spread.GroupLabel]
		perMinute, err := startsPerMinuteOfHour(&ledgers.Items[i], source.clock.Now())
		if err != nil {
			ctrl.Log.WithName("metrics").Info("reading a spread ledger", "group", group, "error", err.Error())
			continue
		}
		for minute, starts := range perMinute {
			ch <- prometheus.MustNewConstMetric(spreadStartsDesc, prometheus.GaugeValue, float64(starts), group, strconv.Itoa(minute))
		}
	}
}

// startsPerMinuteOfHour folds a ledger's daily load onto the hour.
func startsPerMinuteOfHour(ledger *corev1.ConfigMap, now time.Time) ([60]int64, error) {
	var perMinute [60]int64
	entries, _, err := spread.ReadLedger(ledger)
	if err != nil {
		return perMinute, err
	}
	load, err := spread.LedgerLoad(entries, now)
	if err != nil {
		return perMinute, err
	}
	for minuteOfDay, starts := range load {
		perMinute[minuteOfDay%60] += starts
	}
	return perMinute, nil
}
