// Command compattable writes the compatibility table of docs/install.md,
// and the chart's kubeVersion, from what make compat ran
// (test/compat/results.tsv), so that neither claims a release nothing was
// run against. hack/compat.sh runs it after each run; its test fails when
// the table or the chart's kubeVersion no longer match the results.
//
//	go run ./hack/compattable test/compat/results.tsv docs/install.md charts/ontime/Chart.yaml
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The table sits between these lines of docs/install.md.
const (
	tableStart = "<!-- compat-table: written by make compat (hack/compattable) from test/compat/results.tsv -->"
	tableEnd   = "<!-- /compat-table -->"
)

// result is one row of results.tsv: one suite run against one release.
type result struct {
	version, suite, outcome, seconds, date, commit string
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: compattable RESULTS.tsv INSTALL.md Chart.yaml")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "compattable:", err)
		os.Exit(1)
	}
}

func run(resultsPath, docPath, chartPath string) error {
	results, err := readResults(resultsPath)
	if err != nil {
		return err
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		return err
	}
	newDoc, err := replaceTable(string(doc), renderTable(results))
	if err != nil {
		return fmt.Errorf("%s: %w", docPath, err)
	}
	chart, err := os.ReadFile(chartPath)
	if err != nil {
		return err
	}
	newChart, err := setKubeVersion(string(chart), results)
	if err != nil {
		return fmt.Errorf("%s: %w", chartPath, err)
	}
	if err := os.WriteFile(docPath, []byte(newDoc), 0o644); err != nil {
		return err
	}
	return os.WriteFile(chartPath, []byte(newChart), 0o644)
}

// readResults reads results.tsv: version, suite, outcome, seconds, date,
// commit, tab-separated.
func readResults(path string) ([]result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var results []result
	scanner := bufio.NewScanner(f)
	for line := 1; scanner.Scan(); line++ {
		fields := strings.Split(scanner.Text(), "\t")
		if len(fields) != 6 {
			return nil, fmt.Errorf("%s:%d: want 6 tab-separated fields (version, suite, outcome, seconds, date, commit), got %d", path, line, len(fields))
		}
		results = append(results, result{fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]})
	}
	return results, scanner.Err()
}

// minor is a release's minor version (v1.35.4: 35), or -1.
func minor(version string) int {
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	if len(parts) < 2 {
		return -1
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return -1
	}
	return n
}

// renderTable is a row per release, newest first, a column per suite.
func renderTable(results []result) string {
	byVersion := map[string]map[string]result{}
	for _, r := range results {
		if byVersion[r.version] == nil {
			byVersion[r.version] = map[string]result{}
		}
		byVersion[r.version][r.suite] = r
	}
	versions := make([]string, 0, len(byVersion))
	for v := range byVersion {
		versions = append(versions, v)
	}
	sort.Slice(versions, func(i, j int) bool { return minor(versions[i]) > minor(versions[j]) })
	var b strings.Builder
	b.WriteString("| Kubernetes | envtest suites | kwok smoke test (ScheduledJobs beside CronJobs, the leader killed) |\n|---|---|---|\n")
	for _, v := range versions {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", v, cell(byVersion[v]["envtest"]), cell(byVersion[v]["kwok-smoke"]))
	}
	return b.String()
}

func cell(r result) string {
	if r.outcome == "" {
		return "not run"
	}
	return fmt.Sprintf("%s (%s s, %s, %s)", r.outcome, r.seconds, r.date, r.commit)
}

func replaceTable(doc, table string) (string, error) {
	start := strings.Index(doc, tableStart)
	end := strings.Index(doc, tableEnd)
	if start < 0 || end < start {
		return "", fmt.Errorf("no lines %q … %q", tableStart, tableEnd)
	}
	return doc[:start+len(tableStart)] + "\n" + table + doc[end:], nil
}

var kubeVersionLine = regexp.MustCompile(`(?m)^kubeVersion: .*$`)

// setKubeVersion makes the chart's kubeVersion start at the oldest minor
// every suite passed on.
func setKubeVersion(chart string, results []result) (string, error) {
	failed := map[string]bool{}
	for _, r := range results {
		if r.outcome != "passed" {
			failed[r.version] = true
		}
	}
	oldest := -1
	for _, r := range results {
		if m := minor(r.version); !failed[r.version] && m >= 0 && (oldest < 0 || m < oldest) {
			oldest = m
		}
	}
	if oldest < 0 {
		return "", fmt.Errorf("no release passed every suite")
	}
	if !kubeVersionLine.MatchString(chart) {
		return "", fmt.Errorf("no kubeVersion line")
	}
	return kubeVersionLine.ReplaceAllString(chart, fmt.Sprintf(`kubeVersion: ">=1.%d.0-0"`, oldest)), nil
}
