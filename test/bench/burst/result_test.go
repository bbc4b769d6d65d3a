//go:build bench

package burst

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ontime-dev/ontime/test/framework"
)

// result is one row at one N.
type result struct {
	n    int
	kind rowKind
	// created counts the objects with a run's Job, duplicated the Jobs
	// beyond one per object.
	created, duplicated int
	// skews are the Jobs' creations after the instant; running their
	// pods' first sighting running.
	skews, running []time.Duration
	// requests is the row's requests over the burst, byKind by verb and
	// resource.
	requests int
	byKind   map[string]int
	// idle is the controller before its objects; before and after every
	// process's usage at the burst's start and end, over wall.
	idle          framework.ProcessUsage
	before, after map[string]framework.ProcessUsage
	wall          time.Duration
}

// collect reads the audit log: every Job created in the namespace, and the
// row's requests from 5 s before the instant to the burst's end.
func (r *result) collect(t *testing.T, instant, end time.Time, watch *runWatch, before, after map[string]framework.ProcessUsage) {
	r.before, r.after, r.wall = before, after, end.Sub(instant.Add(-time.Second))
	r.byKind = map[string]int{}
	jobsPerObject := map[string]int{}
	from := instant.Add(-5 * time.Second)
	framework.ReadAudit(t, framework.AuditLogPath(cluster), func(e framework.AuditEvent) {
		if e.CreatedJobIn(namespace) {
			if scheduled, ok := framework.JobScheduledTime(e.ObjectRef.Name); ok && scheduled.Equal(instant) {
				r.skews = append(r.skews, e.StageTimestamp.Sub(instant))
				jobsPerObject[e.ObjectRef.Name[:strings.LastIndex(e.ObjectRef.Name, "-")]]++
			}
		}
		if !r.kind.agent(e.UserAgent) || e.RequestReceived.Before(from) || !e.RequestReceived.Before(end) {
			return
		}
		kind := e.Verb
		if e.ObjectRef != nil {
			kind += " " + e.ObjectRef.Resource
			if e.ObjectRef.Subresource != "" {
				kind += "/" + e.ObjectRef.Subresource
			}
		}
		r.byKind[kind]++
		// The local setup's copy of the webhook certificate from its
		// Secret (--webhook-write-cert-files), which a controller in a
		// cluster does not do, is listed, not counted.
		if e.ObjectRef == nil || e.ObjectRef.Resource != "secrets" {
			r.requests++
		}
	})
	r.created = len(jobsPerObject)
	for _, jobs := range jobsPerObject {
		r.duplicated += jobs - 1
	}
	slices.Sort(r.skews)
	r.running = watch.runningSince(instant)
	slices.Sort(r.running)
}

// p99 is the creation p99 when at least 99% of the runs were created, else
// 0: there is none to compare.
func (r *result) p99() time.Duration {
	if len(r.skews)*100 < r.n*99 {
		return 0
	}
	return framework.PercentileValue(r.skews, 99)
}

// percentile of the runs due (not of those that happened): a run not yet
// created or running counts as later than any, "–" if it decides the
// percentile.
func (r *result) percentile(sorted []time.Duration, p int) string {
	rank := (r.n*p+99)/100 - 1
	if rank >= len(sorted) {
		return "> " + r.wall.Round(time.Second).String()
	}
	return sorted[rank].Round(10 * time.Millisecond).String()
}

// row is the result's line of the main table; floorP99 (0 when unknown)
// gives the ratio to the floor.
func (r *result) row(floorP99 ...time.Duration) string {
	ratio := "–"
	if len(floorP99) > 0 && floorP99[0] > 0 && r.p99() > 0 {
		ratio = fmt.Sprintf("%.2f ×", float64(r.p99())/float64(floorP99[0]))
	}
	perRun, cpu, peak, perObject := "–", "–", "–", "–"
	if r.created > 0 {
		perRun = fmt.Sprintf("%.1f", float64(r.requests)/float64(r.created))
	}
	if after, ok := r.after[controllerUnderTest]; ok {
		cpu = fmt.Sprintf("%.1f s", after.CPUSeconds-r.before[controllerUnderTest].CPUSeconds)
		peak = fmt.Sprintf("%.0f MiB", float64(after.PeakRSS)/(1<<20))
		perObject = fmt.Sprintf("%.1f KiB", (float64(after.PeakRSS)-float64(r.idle.RSS))/float64(r.n)/1024)
	}
	return fmt.Sprintf("| %d | %s | %d / %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |", r.n, r.kind.label,
		r.created, r.n, r.duplicated, r.percentile(r.skews, 50), r.percentile(r.skews, 99), r.percentile(r.skews, 100), ratio,
		r.percentile(r.running, 99), perRun, cpu, peak, perObject)
}

// requestsRow is the breakdown of requests per run by verb and resource.
func (r *result) requestsRow() string {
	var kinds []string
	for kind, count := range r.byKind {
		kinds = append(kinds, fmt.Sprintf("%s %.2f", kind, float64(count)/float64(max(1, r.created))))
	}
	slices.Sort(kinds)
	return fmt.Sprintf("| %d | %s | %s |", r.n, r.kind.name, strings.Join(kinds, " · "))
}

// processes in the CPU table's order.
var processes = []string{"kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok-controller", controllerUnderTest}

// cpuRow is each process's CPU seconds over the burst, and the cores the
// whole machine's share of them kept busy.
func (r *result) cpuRow() string {
	cells := []string{fmt.Sprint(r.n), r.kind.name, r.wall.Round(100 * time.Millisecond).String()}
	total := 0.0
	for _, name := range processes {
		after, ok := r.after[name]
		if !ok {
			cells = append(cells, "–")
			continue
		}
		seconds := after.CPUSeconds - r.before[name].CPUSeconds
		total += seconds
		cells = append(cells, fmt.Sprintf("%.1f", seconds))
	}
	cells = append(cells, fmt.Sprintf("%.2f", total/r.wall.Seconds()))
	return "| " + strings.Join(cells, " | ") + " |"
}

func printTables(results []*result) {
	floors := map[int]time.Duration{}
	for _, r := range results {
		if r.kind.name == "floor" {
			floors[r.n] = r.p99()
		}
	}
	fmt.Println("| N | runs made by | created / due | duplicated | creation p50 | p99 | max | p99 ÷ floor's | pods running p99 | API requests per run | controller CPU | peak RSS | per object |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Println(r.row(floors[r.n]))
	}
	fmt.Println()
	fmt.Println("| N | row | API requests per run by verb and resource |")
	fmt.Println("|---:|---|---|")
	for _, r := range results {
		fmt.Println(r.requestsRow())
	}
	fmt.Println()
	fmt.Println("| N | row | burst | " + strings.Join(processes, " | ") + " | cores busy |")
	fmt.Println("|---:|---|---:|" + strings.Repeat("---:|", len(processes)+1))
	for _, r := range results {
		fmt.Println(r.cpuRow())
	}
}
