package main

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
)

// rulesFile is the PrometheusRule the chart ships (a copy of it).
const rulesFile = "../../../config/prometheus/rules.yaml"

// alertExpr returns an alert's expression in rulesFile.
func alertExpr(t *testing.T, alert string) string {
	t.Helper()
	queries, err := checkRules(parser.NewParser(parser.Options{}), rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		if strings.HasSuffix(q.where, ": "+alert) {
			return strings.Join(strings.Fields(q.expr), " ")
		}
	}
	t.Fatalf("no alert %s in %s", alert, rulesFile)
	return ""
}

// The start objective's burn-rate alerts, evaluated as Prometheus' rule
// manager does (neither has a for:, so an alert fires exactly while its
// expression returns a series) on series a controller would export, in
// the promqltest language of Prometheus' own tests (the one promtool's
// rule tests build on): each scenario says at which moments each alert
// fires, and for which ScheduledJob.
//
// Scenarios, targets 99 % (budget 1 %):
//   - steady: every minute, on time: never.
//   - broke: every minute, half of the runs late from minute 60: fast
//     (at 90m, 15 of the last hour's 60 runs, and half of the last 5
//     minutes'), then slow.
//   - hourly: one run an hour; the run at 3h is late: the 1h and 5m
//     windows hold only it (100 %), so fast fires right after it, and
//     goes on while the 6h (1 in 3) and 30m windows hold it, then stops.
//   - trickle: every 5 minutes, one run in 50 late (2 %) for 3 days:
//     slow (3d and 6h over 1 %), never fast (2 % under 6 % and 14.4 %).
func TestStartObjectiveBurnRateAlerts(t *testing.T) {
	fast, slow := alertExpr(t, "OntimeStartObjectiveBurningFast"), alertExpr(t, "OntimeStartObjectiveBurningSlowly")
	fires := func(expr, job string) string {
		return "count by (namespace, name) (" + expr + ")\n    {namespace=\"team\", name=\"" + job + "\"} 1\n"
	}
	silent := func(expr string) string { return expr + "\n" }
	engine := promqltest.NewTestEngine(t, false, 5*time.Minute, 1_000_000)

	t.Run("steady, then broke", func(t *testing.T) {
		promqltest.RunTest(t, `
load 1m
    ontime_start_objective_runs_total{namespace="team", name="steady"} 0+1x180
    ontime_start_objective_late_runs_total{namespace="team", name="steady"} 0x180
    ontime_start_objective_target_ratio{namespace="team", name="steady"} 0.99x180
    ontime_start_objective_runs_total{namespace="team", name="broke"} 0+1x180
    ontime_start_objective_late_runs_total{namespace="team", name="broke"} 0x60 0+0.5x120
    ontime_start_objective_target_ratio{namespace="team", name="broke"} 0.99x180

eval instant at 59m `+silent(fast)+`
eval instant at 59m `+silent(slow)+`
eval instant at 90m `+fires(fast, "broke")+`
eval instant at 150m `+fires(slow, "broke")+`
`, engine)
	})

	t.Run("hourly", func(t *testing.T) {
		// One run at the top of each hour; the one at 3h is late.
		promqltest.RunTest(t, `
load 1m
    ontime_start_objective_runs_total{namespace="team", name="hourly"} 0x59 1x59 2x59 3x59 4x59 5x59
    ontime_start_objective_late_runs_total{namespace="team", name="hourly"} 0x179 1x179
    ontime_start_objective_target_ratio{namespace="team", name="hourly"} 0.99x359

eval instant at 150m `+silent(fast)+`
eval instant at 182m `+fires(fast, "hourly")+`
eval instant at 205m `+fires(fast, "hourly")+`
eval instant at 215m `+silent(fast)+`
`, engine)
	})

	t.Run("trickle", func(t *testing.T) {
		// 3 days every 5 minutes: 864 runs, one in 50 late.
		promqltest.RunTest(t, `
load 5m
    ontime_start_objective_runs_total{namespace="team", name="trickle"} 0+1x900
    ontime_start_objective_late_runs_total{namespace="team", name="trickle"} 0+0.02x900
    ontime_start_objective_target_ratio{namespace="team", name="trickle"} 0.99x900

eval instant at 3d `+fires(slow, "trickle")+`
eval instant at 3d `+silent(fast)+`
`, engine)
	})
}

// TestDeadlineAlerts: OntimeDeadlineAtRisk fires while the gauge is 1,
// OntimeDeadlineMissed for an hour after a missed run.
func TestDeadlineAlerts(t *testing.T) {
	atRisk, missed := alertExpr(t, "OntimeDeadlineAtRisk"), alertExpr(t, "OntimeDeadlineMissed")
	fires := func(expr string) string {
		return "count by (namespace, name) (" + expr + ")\n    {namespace=\"team\", name=\"report\"} 1\n"
	}
	promqltest.RunTest(t, `
load 1m
    ontime_deadline_at_risk{namespace="team", name="report"} 0x30 1x30 0x60
    ontime_deadline_missed_total{namespace="team", name="report"} 0x59 1x60

eval instant at 20m `+atRisk+"\n"+`
eval instant at 40m `+fires(atRisk)+`
eval instant at 70m `+atRisk+"\n"+`
eval instant at 50m `+missed+"\n"+`
eval instant at 65m `+fires(missed)+`
eval instant at 125m `+missed+"\n"+`
`, promqltest.NewTestEngine(t, false, 5*time.Minute, 1_000_000))
}
