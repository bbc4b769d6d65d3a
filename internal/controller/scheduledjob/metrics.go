package scheduledjob

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/runmetrics"
	"github.com/ontime-dev/ontime/internal/planner"
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

// The start objective's series (spec.startObjective), one per ScheduledJob
// that has one: the burn-rate alerts of config/prometheus/rules.yaml divide
// late runs by runs over their windows and compare with the target. Only
// ScheduledJobs with an objective have series, and a ScheduledJob's go
// with its objective or with it (forgetObjective).
var (
	objectiveRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ontime_start_objective_runs_total",
		Help: "Runs counted against a ScheduledJob's spec.startObjective: measured, reported missed, or not started a minute after the objective's within.",
	}, []string{"namespace", "name"})
	objectiveLateRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ontime_start_objective_late_runs_total",
		Help: "Runs counted against a ScheduledJob's spec.startObjective that did not start within its within: late, missed, or not started.",
	}, []string{"namespace", "name"})
	objectiveTarget = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ontime_start_objective_target_ratio",
		Help: "A ScheduledJob's spec.startObjective.percent as a ratio (0.99 for 99): the share of runs that should start within the objective's within.",
	}, []string{"namespace", "name"})
	objectiveAttainment = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ontime_start_objective_attainment_ratio",
		Help: "The share of a ScheduledJob's runs in its objective's window (status.startObjective) that started within spec.startObjective.within; absent while no run is counted.",
	}, []string{"namespace", "name"})
)

// The deadline's series (spec.deadline), one per ScheduledJob that has one.
var (
	deadlineAtRisk = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ontime_deadline_at_risk",
		Help: "1 while a ScheduledJob's latest run is predicted to succeed after its spec.deadline, or has missed it (condition DeadlineAtRisk True); 0 otherwise.",
	}, []string{"namespace", "name"})
	deadlineMissed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ontime_deadline_missed_total",
		Help: "Runs of a ScheduledJob that had not succeeded by their spec.deadline (event DeadlineMissed).",
	}, []string{"namespace", "name"})
	deadlineAtRiskReported = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ontime_deadline_at_risk_total",
		Help: "Runs of a ScheduledJob first predicted to succeed after their spec.deadline (event DeadlineAtRisk).",
	}, []string{"namespace", "name"})
)

// exportDeadline sets a ScheduledJob's at-risk gauge from the status a
// reconcile planned, and starts its counters at 0; without a deadline, it
// removes them.
func exportDeadline(sj *v1alpha1.ScheduledJob, status v1alpha1.ScheduledJobStatus) {
	if sj.Spec.Deadline == nil {
		forgetDeadline(sj.Namespace, sj.Name)
		return
	}
	deadlineMissed.WithLabelValues(sj.Namespace, sj.Name)
	deadlineAtRiskReported.WithLabelValues(sj.Namespace, sj.Name)
	atRisk := 0.0
	if meta.IsStatusConditionTrue(status.Conditions, v1alpha1.ConditionDeadlineAtRisk) {
		atRisk = 1
	}
	deadlineAtRisk.WithLabelValues(sj.Namespace, sj.Name).Set(atRisk)
}

// recordMetrics records what a reconcile's outcome measured and the runs
// it found missed: the one place the metrics of an outcome are recorded,
// once its status is written (or deferred, to be written by the next
// reconcile). A reconcile that finds the status written already (a repeat
// from a stale cache), or that fails to write it, counts nothing; its
// retry counts the outcome once, when it writes.
func recordMetrics(sj *v1alpha1.ScheduledJob, outcome planner.Outcome) {
	if outcome.ObjectiveRuns > 0 {
		objectiveRuns.WithLabelValues(sj.Namespace, sj.Name).Add(float64(outcome.ObjectiveRuns))
		objectiveLateRuns.WithLabelValues(sj.Namespace, sj.Name).Add(float64(outcome.ObjectiveLate))
	}
	if outcome.DeadlineAtRisk {
		deadlineAtRiskReported.WithLabelValues(sj.Namespace, sj.Name).Inc()
	}
	if n := outcome.DeadlinesMissed; n > 0 {
		deadlineMissed.WithLabelValues(sj.Namespace, sj.Name).Add(float64(n))
	}
	for reason, n := range outcome.Missed {
		missedRuns.WithLabelValues(string(reason)).Add(float64(n))
	}
	if outcome.SuspendedAfterFailures {
		suspendedAfterFailures.Inc()
	}
	runmetrics.Observe(runmetrics.Observation{Kind: "ScheduledJob", Strategy: outcome.WarmUp,
		CapacityReadyAfter: outcome.CapacityReadyAfter, Late: outcome.WarmUpLate, Started: outcome.Started})
}

// exportObjective sets a ScheduledJob's objective gauges from its spec and
// the status a reconcile planned, on every reconcile (a new leader exports
// them at its first), and starts its counters at 0 so that alerts see the
// first late run as an increase; without an objective, it removes them.
func exportObjective(sj *v1alpha1.ScheduledJob, status *v1alpha1.StartObjectiveStatus) {
	o := sj.Spec.StartObjective
	if o == nil || status == nil {
		forgetObjective(sj.Namespace, sj.Name)
		return
	}
	objectiveRuns.WithLabelValues(sj.Namespace, sj.Name)
	objectiveLateRuns.WithLabelValues(sj.Namespace, sj.Name)
	if target, err := o.Ratio(); err == nil {
		objectiveTarget.WithLabelValues(sj.Namespace, sj.Name).Set(target)
	}
	if status.Runs > 0 {
		objectiveAttainment.WithLabelValues(sj.Namespace, sj.Name).Set(float64(status.OnTime) / float64(status.Runs))
	} else {
		objectiveAttainment.DeleteLabelValues(sj.Namespace, sj.Name)
	}
}

// forgetObjective removes a ScheduledJob's objective series.
func forgetObjective(namespace, name string) {
	forgetSeries(namespace, name, objectiveRuns.MetricVec, objectiveLateRuns.MetricVec, objectiveTarget.MetricVec, objectiveAttainment.MetricVec)
}

// forgetDeadline removes a ScheduledJob's deadline series.
func forgetDeadline(namespace, name string) {
	forgetSeries(namespace, name, deadlineAtRisk.MetricVec, deadlineMissed.MetricVec, deadlineAtRiskReported.MetricVec)
}

// forgetSeries removes a ScheduledJob's series of each vec.
func forgetSeries(namespace, name string, vecs ...*prometheus.MetricVec) {
	for _, vec := range vecs {
		vec.DeleteLabelValues(namespace, name)
	}
}

// RegisterMetrics registers the ScheduledJob controller's metrics, and the
// run metrics it shares with CronJob warm-up, with registry.
func RegisterMetrics(registry prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{jobCreationSkew, missedRuns, suspendedAfterFailures,
		objectiveRuns, objectiveLateRuns, objectiveTarget, objectiveAttainment,
		deadlineAtRisk, deadlineMissed, deadlineAtRiskReported, undecodableScheduledJobs} {
		if _, err := runmetrics.RegisterOnce(registry, c); err != nil {
			return err
		}
	}
	// Every reason is exported from the start, at 0, so that an alert on
	// increase() sees the first miss (a series born at 1 shows no increase).
	for _, reason := range []planner.MissReason{planner.MissDeadline, planner.MissSkipped, planner.MissConflict} {
		missedRuns.WithLabelValues(string(reason))
	}
	return runmetrics.Register(registry)
}
