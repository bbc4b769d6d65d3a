// Package runmetrics holds the metrics of runs and their warm-up, shared by
// the ScheduledJob controller and the CronJob warm-up controller (label
// kind), and the one way every controller's metrics are registered: with
// the registry internal/controller.Register hands them (controller-runtime's),
// never on import.
package runmetrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Metrics of runs and their warm-up.
var (
	// StartLateness is the headline number: scheduled time to the run's
	// first container running.
	StartLateness = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ontime_run_start_lateness_seconds",
		Help:    "Time from a run's scheduled time to its first pod's first container running, by warm-up strategy (none without warm-up) and owner kind.",
		Buckets: []float64{0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 600, 1800},
	}, []string{"warm_up", "kind"})
	// StartPhase splits StartLateness by phase (v1alpha1.RunPhases): each
	// run adds one observation to every phase, 0 for those it did not wait
	// in, so that a phase's sum over its count is its mean share.
	StartPhase = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ontime_run_start_phase_seconds",
		Help:    "Time a run's start spent in each phase (Controller, ConcurrencyGroup, JobController, Node, Scheduling, PodSandbox, ImagePull, InitContainers) between its scheduled time and its first container running; the phases of a run add up to its ontime_run_start_lateness_seconds.",
		Buckets: []float64{0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 600, 1800},
	}, []string{"phase", "warm_up", "kind"})
	// CapacityReady is warm-up start to every warm-up pod having a node.
	CapacityReady = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ontime_warm_up_capacity_ready_seconds",
		Help:    "Time from the start of a run's warm-up to every warm-up pod having a node.",
		Buckets: []float64{1, 5, 10, 20, 30, 45, 60, 90, 120, 180, 300, 600, 1200},
	}, []string{"strategy", "kind"})
	// Late counts runs that started before their capacity was ready.
	Late = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ontime_warm_up_late_total",
		Help: "Runs whose capacity was not ready at their scheduled time.",
	}, []string{"strategy", "kind"})
)

// Register registers the run metrics with registry.
func Register(registry prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{StartLateness, StartPhase, CapacityReady, Late} {
		if _, err := RegisterOnce(registry, c); err != nil {
			return err
		}
	}
	// Every strategy and kind is exported from the start, at 0, so that
	// alerts see the first late run as an increase and dashboards have
	// every series ("none" is a run without warm-up).
	for _, kind := range []string{"ScheduledJob", "CronJob"} {
		StartLateness.WithLabelValues("none", kind)
		for _, phase := range v1alpha1.RunPhases {
			StartPhase.WithLabelValues(string(phase), "none", kind)
		}
		for _, strategy := range []string{string(v1alpha1.WarmUpPlaceholder), string(v1alpha1.WarmUpEarlyStart), string(v1alpha1.WarmUpCapacityBuffer)} {
			StartLateness.WithLabelValues(strategy, kind)
			for _, phase := range v1alpha1.RunPhases {
				StartPhase.WithLabelValues(string(phase), strategy, kind)
			}
			CapacityReady.WithLabelValues(strategy, kind)
			Late.WithLabelValues(strategy, kind)
		}
	}
	return nil
}

// RegisterOnce registers c, or returns the collector registered before it
// in its place: a process that registers its controllers again, as tests
// do, goes on with the first registration's.
func RegisterOnce[C prometheus.Collector](registry prometheus.Registerer, c C) (C, error) {
	err := registry.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// Observation is what one reconcile of an owner measured of its runs and
// their warm-up.
type Observation struct {
	// Kind is the owner's kind: ScheduledJob or CronJob.
	Kind string
	// Strategy is the warm-up strategy, or "none" without warm-up.
	Strategy string
	// CapacityReadyAfter is set when a warm-up's capacity became ready: how
	// long after it began. Late is set when a run started before it.
	CapacityReadyAfter *time.Duration
	Late               bool
	// Started is set when a run's start was first seen: scheduled time to
	// its first container running, and its phases.
	Started *v1alpha1.RunStart
}

// Observe records an observation in the metrics: the one place for every
// kind of owner, called once the owner's state recording it is written.
func Observe(o Observation) {
	if s := o.Started; s != nil {
		StartLateness.WithLabelValues(o.Strategy, o.Kind).Observe(s.Lateness.Seconds())
		for _, phase := range v1alpha1.RunPhases {
			StartPhase.WithLabelValues(string(phase), o.Strategy, o.Kind).Observe(s.Spent(phase).Seconds())
		}
	}
	if d := o.CapacityReadyAfter; d != nil {
		CapacityReady.WithLabelValues(o.Strategy, o.Kind).Observe(d.Seconds())
	}
	if o.Late {
		Late.WithLabelValues(o.Strategy, o.Kind).Inc()
	}
}
