package backfill

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

var (
	// timesDesc: a Backfill's times by what became of them, from its
	// status, so that a dashboard shows its progress and an alert its
	// failures.
	timesDesc = prometheus.NewDesc("ontime_backfill_times",
		"A Backfill's times by state, from its status: total (every time of its range), started, active (started and running), succeeded, failed, skipped (redo: Missing, a run already there).",
		[]string{"namespace", "backfill", "state"}, nil)
	// timesLeftDesc: the times not started yet, so that a dashboard shows
	// how far it has to go.
	timesLeftDesc = prometheus.NewDesc("ontime_backfill_times_left",
		"A Backfill's times neither started nor skipped yet.",
		[]string{"namespace", "backfill"}, nil)
)

// ProgressCollector reads the Backfills from the cache when Prometheus
// scrapes, as the leader's Backfill controller last wrote their status.
// Only the leader reports (the Backfill controller runs there, and the
// other replicas' caches need not hold Backfills): no two replicas report
// the same Backfill, and a Backfill deleted leaves no series behind.
type ProgressCollector struct {
	reader  client.Reader
	elected <-chan struct{}
	log     logr.Logger
}

// NewProgressCollector collects the Backfills read through reader (the
// manager's cache) once elected is closed (the manager's Elected()).
func NewProgressCollector(reader client.Reader, elected <-chan struct{}, log logr.Logger) *ProgressCollector {
	return &ProgressCollector{reader: reader, elected: elected, log: log}
}

// Describe sends the metrics' descriptions.
func (c *ProgressCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- timesDesc
	ch <- timesLeftDesc
}

// Collect sends each Backfill's times by state and the times left.
func (c *ProgressCollector) Collect(ch chan<- prometheus.Metric) {
	select {
	case <-c.elected:
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	backfills := &v1alpha1.BackfillList{}
	if err := c.reader.List(ctx, backfills); err != nil {
		c.log.Info("listing Backfills", "error", err.Error())
		return
	}
	for i := range backfills.Items {
		for _, m := range progress(&backfills.Items[i]) {
			ch <- m
		}
	}
}

// progress is one Backfill's metrics, from its status.
func progress(bf *v1alpha1.Backfill) []prometheus.Metric {
	s := bf.Status
	states := []struct {
		name  string
		count int32
	}{
		{"total", s.Total}, {"started", s.Started}, {"active", s.ActiveCount},
		{"succeeded", s.Succeeded}, {"failed", s.Failed}, {"skipped", s.Skipped},
	}
	metrics := make([]prometheus.Metric, 0, len(states)+1)
	for _, state := range states {
		metrics = append(metrics, prometheus.MustNewConstMetric(timesDesc, prometheus.GaugeValue, float64(state.count), bf.Namespace, bf.Name, state.name))
	}
	left := max(s.Total-s.Started-s.Skipped, 0)
	return append(metrics, prometheus.MustNewConstMetric(timesLeftDesc, prometheus.GaugeValue, float64(left), bf.Namespace, bf.Name))
}
