//go:build bench

// Package burst measures a burst: N scheduled runs due at one instant
// (N = 1,000, 5,000 and 10,000), each way of making them in a fresh local
// cluster with the same settings:
//
//   - the floor: a bare client, without a rate limit, creating N Jobs at
//     the instant;
//   - ontime's controller at its shipped defaults with N ScheduledJobs,
//     and with 100 workers instead of 20;
//   - kube-controller-manager's CronJob controller with N CronJobs, at its
//     defaults (client 20 QPS, burst 30, 5 workers) and with its limits
//     raised to ontime's shipped ones (300 QPS, burst 600, 20 workers).
//
// The CronJob controller runs in a kube-controller-manager of its own
// (--controllers=cronjob-controller): the cluster's own
// kube-controller-manager, which runs the Job controller that makes every
// row's pods, has the same settings in every row, and the process measured
// holds the CronJob controller alone, as ontime's holds ontime alone.
//
// For each row it reports runs created of runs due and duplicated, creation
// p50/p99/max after the instant (from the API server's audit log: a run is
// created when its Job's create request completes), pods running p99 (from
// a watch), API requests per run by verb and resource (audit log, the
// controller's user agent, from just before the instant to the end of the
// burst), and the controller process's CPU seconds over the burst and peak
// memory (/proc). It also prints each control-plane process's CPU seconds
// over the burst: where the two cores went.
//
//	make bench-burst
//	go test -tags bench -timeout 0 -v ./test/bench/burst -args -n 1000 -rows floor,ontime
//	go test -tags bench -timeout 0 -v ./test/bench/burst -args -n 10000 -rows ontime -profile
package burst

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ontime-dev/ontime/test/framework"
)

const (
	cluster   = "ontime-burst"
	namespace = "burst"
	// auditPolicy records every request but the kubelet's and the
	// scheduler's chatter, as the controller benchmark does.
	auditPolicy = "test/bench/controller/audit-policy.yaml"
)

var (
	sizes   = flag.String("n", "1000,5000,10000", "comma-separated numbers of runs due at one instant")
	rowList = flag.String("rows", "floor,ontime,ontime-100,kcm,kcm-raised", "comma-separated rows to measure: floor, ontime, ontime-100 (with 100 workers), kcm (kube-controller-manager's CronJob controller at its defaults), kcm-raised (with ontime's limits)")
	window  = flag.Duration("window", 5*time.Minute, "how long after the instant to wait for every run's pod to run")
	profile = flag.Bool("profile", false, "take a CPU profile of ontime's controller over the burst and print its top functions")
)

func TestBenchBurst(t *testing.T) {
	var results []*result
	for _, n := range framework.ParseSizes(t, *sizes) {
		for _, name := range strings.Split(*rowList, ",") {
			kind, ok := rowKinds[name]
			if !ok {
				t.Fatalf("unknown row %q: want floor, ontime, ontime-100, kcm or kcm-raised", name)
			}
			t.Run(fmt.Sprintf("N=%d/%s", n, name), func(t *testing.T) {
				r := measure(t, n, kind)
				results = append(results, r)
				// Each row as it completes, in case a later one fails.
				framework.Progress("result: %s", r.row())
			})
		}
	}
	printTables(results)
}
