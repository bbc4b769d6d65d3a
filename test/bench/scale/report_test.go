//go:build bench

package scale

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ontime-dev/ontime/test/framework"
)

// result is one controller at one N.
type result struct {
	n      int
	label  string
	cached string
	// createRate is how fast the client's 20 workers created the objects
	// (ScheduledJobs pass ontime's webhook).
	createRate float64
	// sweep is from the first creation until every object was reconciled.
	sweep time.Duration
	// idle, loaded and window are the metrics samples before the objects,
	// with them, and over the measured minutes.
	idle, loaded, window []sample
	skews                []time.Duration
	due                  int
	// jobs is how many Jobs the namespace held at the end.
	jobs    int
	restart restartResult
}

func mib(bytes float64) string { return fmt.Sprintf("%.0f MiB", bytes/(1<<20)) }

// perObject is the growth of a memory figure from idle to the steady state
// (the median over the measured minutes), per object, in KiB. Just after
// the objects were created, the heap still holds the garbage of creating
// them (ScheduledJobs pass ontime's webhook), so that is not the measure.
func (r *result) perObject(field func(sample) float64) string {
	return fmt.Sprintf("%.1f KiB", (median(r.window, field)-median(r.idle, field))/float64(r.n)/1024)
}

// cpuPerMinute is CPU seconds per minute over the measured window.
func (r *result) cpuPerMinute() string {
	if len(r.window) < 2 {
		return "–"
	}
	first, last := r.window[0], r.window[len(r.window)-1]
	return fmt.Sprintf("%.1f s", (last.cpu-first.cpu)/last.at.Sub(first.at).Minutes())
}

func (r *result) peak(field func(sample) float64) float64 {
	peak := 0.0
	for _, m := range r.window {
		peak = max(peak, field(m))
	}
	return peak
}

// resourceRow: memory, CPU and cache.
func (r *result) resourceRow() string {
	return fmt.Sprintf("| %d | %s | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %s | %d objects + %d Jobs (%s) |",
		r.n, r.label,
		mib(median(r.idle, rssOf)), mib(median(r.idle, heapOf)),
		mib(median(r.loaded, rssOf)), mib(median(r.loaded, heapOf)),
		mib(median(r.window, rssOf)), mib(median(r.window, heapOf)),
		r.perObject(rssOf), r.perObject(heapOf),
		mib(r.peak(rssOf)), mib(r.peak(heapOf)),
		r.cpuPerMinute(), r.n, r.jobs, r.cached)
}

// runsRow: creation, runs, skew and restart.
func (r *result) runsRow() string {
	restart := "did not finish in 10 min"
	if r.restart.ok {
		restart = fmt.Sprintf("%s | %s", r.restart.lead.Round(100*time.Millisecond), r.restart.sweep.Round(100*time.Millisecond))
	} else {
		restart += " | –"
	}
	return fmt.Sprintf("| %d | %s | %.0f/s | %s | %d / %d | %s | %s | %s | %s |",
		r.n, r.label, r.createRate, r.sweep.Round(time.Second), len(r.skews), r.due,
		framework.Percentile(r.skews, 50), framework.Percentile(r.skews, 99), framework.Percentile(r.skews, 100), restart)
}

func printTables(rows []*result) {
	fmt.Println("| N | controller | RSS / heap, idle | just after creating N objects | steady, with N objects (median) | growth per object, idle to steady (RSS / heap) | peak while running | CPU per minute | informer cache |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		fmt.Println(r.resourceRow())
	}
	fmt.Println()
	fmt.Println("| N | controller | objects created | all reconciled after | runs created / due | creation skew p50 | p99 | max | restart: leading after | every object reconciled after |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Println(r.runsRow())
	}
}

// writeSamples saves the metrics samples of every phase, one per line, for
// a second look at a run.
func (r *result) writeSamples(dir string) {
	if dir == "" {
		return
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%d.tsv", strings.NewReplacer(" ", "_", "/", "_", ",", "").Replace(r.label), r.n))
	var b strings.Builder
	b.WriteString("phase\tunix\trss\theap\tcpu\tdepth\tadds\n")
	for _, phase := range []struct {
		name    string
		samples []sample
	}{{"idle", r.idle}, {"created", r.loaded}, {"window", r.window}} {
		for _, m := range phase.samples {
			fmt.Fprintf(&b, "%s\t%d\t%.0f\t%.0f\t%.2f\t%.0f\t%.0f\n", phase.name, m.at.Unix(), m.rss, m.heap, m.cpu, m.depth, m.adds)
		}
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		framework.Progress("saving samples: %v", err)
	}
}
