// Command promcheck checks ontime's Prometheus assets the way promtool
// does, with Prometheus' own packages: every alerting rule of the
// PrometheusRule files parses and validates (rulefmt, templates included),
// every query of the Grafana dashboard parses, and, given a controller's
// /metrics (a URL or a file), every metric they name exists there.
//
//	go run . -rules ../../../config/prometheus/rules.yaml \
//	  -dashboard ../../../config/prometheus/dashboard.json [-metrics http://127.0.0.1:8080/metrics]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

func main() {
	var rulesFiles, dashboards, metricsSource, absent string
	flag.StringVar(&rulesFiles, "rules", "", "comma-separated PrometheusRule files")
	flag.StringVar(&dashboards, "dashboard", "", "comma-separated Grafana dashboard JSON files")
	flag.StringVar(&metricsSource, "metrics", "", "comma-separated /metrics URLs or files (several replicas): every metric the rules and dashboards name must be in one of them")
	flag.StringVar(&absent, "may-be-absent", "", "comma-separated metric name prefixes that -metrics need not expose: families a controller exports only once their objects exist (a concurrency group, a Backfill)")
	flag.Parse()
	if err := run(split(rulesFiles), split(dashboards), metricsSource, split(absent)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func split(list string) []string {
	if list == "" {
		return nil
	}
	return strings.Split(list, ",")
}

func run(rulesFiles, dashboards []string, metricsSource string, mayBeAbsent []string) error {
	promql := parser.NewParser(parser.Options{})
	var queries []query
	var errs []error
	for _, file := range rulesFiles {
		q, err := checkRules(promql, file)
		queries, errs = append(queries, q...), append(errs, err)
	}
	for _, file := range dashboards {
		q, err := dashboardQueries(file)
		queries, errs = append(queries, q...), append(errs, err)
	}
	names := map[string][]string{} // metric -> where it is used
	for _, q := range queries {
		expr, err := promql.ParseExpr(q.expr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q: %w", q.where, q.expr, err))
			continue
		}
		for _, name := range metricNames(expr) {
			names[name] = append(names[name], q.where)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Printf("%d queries parse; they name %d metrics\n", len(queries), len(names))
	if metricsSource == "" {
		return nil
	}
	exposed := map[string]bool{}
	for _, source := range split(metricsSource) {
		if err := readMetrics(source, exposed); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(names) {
		if !exposed[name] && !slices.ContainsFunc(mayBeAbsent, func(prefix string) bool { return strings.HasPrefix(name, prefix) }) {
			errs = append(errs, fmt.Errorf("%s (used by %s) is not in %s", name, strings.Join(names[name], ", "), metricsSource))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Printf("every metric named is exposed by %s\n", metricsSource)
	return nil
}

// query is a PromQL expression and where it was found.
type query struct{ where, expr string }

// checkRules validates a PrometheusRule's groups as Prometheus would load
// them and returns their expressions.
func checkRules(promql parser.Parser, file string) ([]query, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var rule struct {
		Kind string          `json:"kind"`
		Spec json.RawMessage `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &rule); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if rule.Kind != "PrometheusRule" {
		return nil, fmt.Errorf("%s: kind %q, want PrometheusRule", file, rule.Kind)
	}
	groupsYAML, err := yaml.JSONToYAML(rule.Spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	groups, errs := rulefmt.Parse(groupsYAML, false, model.UTF8Validation, promql, slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", file, errors.Join(errs...))
	}
	var queries []query
	for _, group := range groups.Groups {
		if len(group.Rules) == 0 {
			return nil, fmt.Errorf("%s: group %s has no rules", file, group.Name)
		}
		for _, r := range group.Rules {
			if r.Alert != "" && r.Annotations["summary"] == "" {
				return nil, fmt.Errorf("%s: alert %s has no summary annotation", file, r.Alert)
			}
			queries = append(queries, query{where: file + ": " + r.Alert + r.Record, expr: r.Expr})
		}
	}
	return queries, nil
}

// dashboardQueries are the expressions of a Grafana dashboard's panels.
func dashboardQueries(file string) ([]query, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var dashboard struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dashboard); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var queries []query
	for _, panel := range dashboard.Panels {
		if len(panel.Targets) == 0 {
			return nil, fmt.Errorf("%s: panel %q has no query", file, panel.Title)
		}
		for _, target := range panel.Targets {
			queries = append(queries, query{where: file + ": " + panel.Title, expr: target.Expr})
		}
	}
	return queries, nil
}

// metricNames are the metric names an expression selects.
func metricNames(expr parser.Expr) []string {
	var names []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			for _, m := range vs.LabelMatchers {
				if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
					names = append(names, m.Value)
				}
			}
		}
		return nil
	})
	return names
}

// readMetrics adds every series name a /metrics page exposes: each
// family's name and, for histograms and summaries, its _bucket, _sum and
// _count series.
func readMetrics(source string, exposed map[string]bool) error {
	var body []byte
	var err error
	if strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		body, err = fetch(source)
	} else {
		body, err = os.ReadFile(source)
	}
	if err != nil {
		return err
	}
	textParser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := textParser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	for name, family := range families {
		exposed[name] = true
		switch family.GetType().String() {
		case "HISTOGRAM", "SUMMARY", "GAUGE_HISTOGRAM":
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				exposed[name+suffix] = true
			}
		}
	}
	return nil
}

func fetch(url string) ([]byte, error) {
	resp, err := http.Get(url) //nolint:gosec,noctx // a URL the caller gives
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
