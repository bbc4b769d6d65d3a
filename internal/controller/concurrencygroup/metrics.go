package concurrencygroup

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/internal/concurrency"
	"github.com/ontime-dev/ontime/internal/controller/runmetrics"
)

// Metrics are the groups' metrics. Every replica runs the controller, so
// every replica exports them: the gauges as of its last decision, the
// counters of what it did itself (sum them across replicas).
type Metrics struct {
	active, waiting *prometheus.GaugeVec
	wait            *prometheus.HistogramVec
	missedRuns      *prometheus.CounterVec
}

// NewMetrics registers the groups' metrics with registry.
func NewMetrics(registry prometheus.Registerer) (*Metrics, error) {
	labels := []string{"kind", "namespace", "group"}
	m := &Metrics{
		active: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ontime_concurrency_group_active",
			Help: "Runs of the group's members active (admitted or otherwise running), as of this replica's last decision."}, labels),
		waiting: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ontime_concurrency_group_waiting",
			Help: "Runs of the group's members waiting for room, as of this replica's last decision."}, labels),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ontime_concurrency_group_wait_seconds",
			Help:    "How long an admitted run waited, from its scheduled time (or its Job's creation, if later) to its release by this replica.",
			Buckets: []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}}, labels),
		missedRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ontime_concurrency_group_missed_total",
			Help: "Runs this replica found waiting past their starting deadline (not run)."}, labels),
	}
	var err error
	m.active, err = runmetrics.RegisterOnce(registry, m.active)
	if err == nil {
		m.waiting, err = runmetrics.RegisterOnce(registry, m.waiting)
	}
	if err == nil {
		m.wait, err = runmetrics.RegisterOnce(registry, m.wait)
	}
	if err == nil {
		m.missedRuns, err = runmetrics.RegisterOnce(registry, m.missedRuns)
	}
	return m, err
}

func (m *Metrics) observe(kind string, group client.Object, plan concurrency.Dispatch) {
	if m == nil {
		return
	}
	m.active.WithLabelValues(kind, group.GetNamespace(), group.GetName()).Set(float64(plan.Status.ActiveCount))
	m.waiting.WithLabelValues(kind, group.GetNamespace(), group.GetName()).Set(float64(plan.Status.Waiting))
}

func (m *Metrics) waited(kind string, group client.Object, d time.Duration) {
	if m != nil {
		m.wait.WithLabelValues(kind, group.GetNamespace(), group.GetName()).Observe(d.Seconds())
	}
}

func (m *Metrics) missed(kind string, group client.Object) {
	if m != nil {
		m.missedRuns.WithLabelValues(kind, group.GetNamespace(), group.GetName()).Inc()
	}
}

// forget drops a deleted group's series, so that a dashboard does not show
// a group that is gone as still running (its gauges) or waiting. Its
// counters and histogram go too: Prometheus reads a series that restarts
// as a new one.
func (m *Metrics) forget(kind string, group types.NamespacedName) {
	if m == nil {
		return
	}
	labels := []string{kind, group.Namespace, group.Name}
	m.active.DeleteLabelValues(labels...)
	m.waiting.DeleteLabelValues(labels...)
	m.wait.DeleteLabelValues(labels...)
	m.missedRuns.DeleteLabelValues(labels...)
}
