// Command benchreport turns `go test -bench` output for pkg/cron (run with
// -count 5 or so) into the markdown tables in docs/performance.md: the
// median of each benchmark, ontime next to robfig/cron.
//
//	go test -run XXX -bench . -benchmem -count 5 ./pkg/cron | go run ./test/bench/report
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// corpus repeats pkg/cron's benchCorpus for the table's first column.
var corpus = []string{
	"* * * * *", "*/5 * * * *", "0 0 * * *", "0 0 29 2 *", "0 0 31 * *",
	"0 9 * * 1-5", "15 14 1 * *", "0 22 * * 1-5", "23 0-20/2 * * *", "5 4 * * sun",
	"0 0,12 1 */2 *", "0 4 8-14 * *", "0 0 1,15 * 3", "@hourly", "@daily",
	"0 0 13 * 5", "59 23 31 12 *", "0 12 * * 0,6", "30 2 * * *",
}

// zoneNames undoes the benchmark labels' "/" → "_".
var zoneNames = map[string]string{"UTC": "UTC", "America_New_York": "America/New_York"}

var line = regexp.MustCompile(`^Benchmark(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+(\d+) B/op\s+(\d+) allocs/op)?`)

type samples struct{ ns, bytes, allocs []float64 }

func main() {
	results := map[string]*samples{}
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		m := line.FindStringSubmatch(scanner.Text())
		if m == nil {
			continue
		}
		s := results[m[1]]
		if s == nil {
			s = &samples{}
			results[m[1]] = s
		}
		s.ns = append(s.ns, number(m[3]))
		if m[4] != "" {
			s.bytes = append(s.bytes, number(m[4]))
			s.allocs = append(s.allocs, number(m[5]))
		}
	}
	fmt.Println("| operation | ontime ns/op | ontime allocs | robfig ns/op | robfig allocs | robfig ÷ ontime |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	row := func(label, ours, theirs string) {
		o, t := results[ours], results[theirs]
		if o == nil || t == nil {
			return
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %.0f× |\n", label, format(median(o.ns)), format(median(o.allocs)),
			format(median(t.ns)), format(median(t.allocs)), median(t.ns)/median(o.ns))
	}
	row("Parse (corpus, cycling)", "Parse/engine=ontime", "Parse/engine=robfig")
	for _, zone := range []string{"UTC", "America_New_York"} {
		row("Next, mixed corpus, "+zoneNames[zone],
			"Next/zone="+zone+"/engine=ontime/spec=mixed", "Next/zone="+zone+"/engine=robfig/spec=mixed")
	}
	fmt.Println()
	fmt.Println("| # | schedule | UTC ontime | UTC robfig | NY ontime | NY robfig |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	var ontimeMedians [2][]float64
	for i, spec := range corpus {
		cells := []string{strconv.Itoa(i), "`" + spec + "`"}
		for z, zone := range []string{"UTC", "America_New_York"} {
			for _, engine := range []string{"ontime", "robfig"} {
				s := results[fmt.Sprintf("Next/zone=%s/engine=%s/spec=%02d", zone, engine, i)]
				if s == nil {
					cells = append(cells, "–")
					continue
				}
				cells = append(cells, format(median(s.ns)))
				if engine == "ontime" {
					ontimeMedians[z] = append(ontimeMedians[z], median(s.ns))
				}
			}
		}
		fmt.Println("| " + strings.Join(cells, " | ") + " |")
	}
	fmt.Println()
	for z, zone := range []string{"UTC", "America/New_York"} {
		if len(ontimeMedians[z]) > 0 {
			fmt.Printf("Median over the corpus entries, ontime, %s: %s ns\n", zone, format(median(ontimeMedians[z])))
		}
	}
}

func number(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func format(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
