package scheduledjob

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ontime-dev/ontime/internal/planner"
	"github.com/ontime-dev/ontime/internal/warmup"
)

var (
	// jobCreationSkew is the CronJob controller's stable
	// cronjob_controller_job_creation_skew_duration_seconds, with its
	// buckets, for ScheduledJobs.
	jobCreationSkew = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ontime_job_creation_skew_seconds",
		Help:    "Time between when a ScheduledJob run is scheduled to start and when its Job is created.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 10),
	})
	// missedRuns counts runs that did not start. Upstream has no such
	// signal: its deadline-miss event is dead code (kubernetes#111223).
	missedRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ontime_missed_runs_total",
		Help: "Scheduled runs that did not start, by reason: deadline (later than startingDeadlineSeconds), " +
			"skipped (a later run started in its place after an outage), conflict (a Job of its name is not the ScheduledJob's).",
	}, []string{"reason"})
	// suspendedAfterFailures counts the ScheduledJobs suspended by
	// spec.suspendAfterFailures: each wants someone to look at its Jobs.
	suspendedAfterFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ontime_suspended_after_failures_total",
		Help: "ScheduledJobs that suspended themselves after spec.suspendAfterFailures runs failed in a row (event SuspendedAfterFailures names them).",
	})
)

// recordMetrics records what a reconcile's outcome measured and the runs
// it found missed: the one place the metrics of an outcome are recorded,
// once its status is written (or deferred, to be written by the next
// reconcile). A reconcile that finds the status written already (a repeat
// from a stale cache), or that fails to write it, counts nothing; its
// retry counts the outcome once, when it writes.
func recordMetrics(outcome planner.Outcome) {
	for reason, n := range outcome.Missed {
		missedRuns.WithLabelValues(string(reason)).Add(float64(n))
	}
	if outcome.SuspendedAfterFailures {
		suspendedAfterFailures.Inc()
	}
	warmup.Observe(warmup.Observation{Kind: "ScheduledJob", Strategy: outcome.WarmUp,
		CapacityReadyAfter: outcome.CapacityReadyAfter, Late: outcome.WarmUpLate, Started: outcome.Started})
}

func init() {
	metrics.Registry.MustRegister(jobCreationSkew, missedRuns, suspendedAfterFailures)
	// Every reason is exported from the start, at 0, so that an alert on
	// increase() sees the first miss (a series born at 1 shows no increase).
	for _, reason := range []planner.MissReason{planner.MissDeadline, planner.MissSkipped, planner.MissConflict} {
		missedRuns.WithLabelValues(string(reason))
	}
}
