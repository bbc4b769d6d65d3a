//go:build integration

package schedulecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/cmd/ontime/app/clitest"
	"github.com/ontime-dev/ontime/internal/spread"
)

// TestRebalance rewrites a crowded group's ConfigMap on a real API server:
// every member in a minute of its own, the epoch counted.
func TestRebalance(t *testing.T) {
	c := clitest.StartAPIServer(t)
	ctx := context.Background()
	key := crowdedLedger(t, c, "reports", "a", "b", "c")

	var out bytes.Buffer
	table := &cli.Output{Format: "table"}
	if err := rebalance(ctx, c, key, true, &out, table); err != nil || !strings.Contains(out.String(), "would rebalance 3 ScheduledJobs (3 moved), epoch 1: busiest minute 3 → 1 starts (ideal 1)") {
		t.Fatalf("dry run: %v\n%s", err, out.String())
	}
	out.Reset()
	var result rebalanceResult
	if err := rebalance(ctx, c, key, true, &out, &cli.Output{Format: "json"}); err != nil || json.Unmarshal(out.Bytes(), &result) != nil ||
		!result.DryRun || result.Moved != 3 || len(result.Placements) != 3 || result.PeakBefore != 3 || result.PeakAfter != 1 {
		t.Fatalf("dry run, -o json: %v %+v\n%s", err, result, out.String())
	}
	out.Reset()
	if err := rebalance(ctx, c, key, false, &out, table); err != nil || !strings.Contains(out.String(), "rebalanced 3 ScheduledJobs") {
		t.Fatalf("%v\n%s", err, out.String())
	}
	checkRebalanced(t, c, key, 1)
	missing := types.NamespacedName{Namespace: "ontime-system", Name: "ontime-spread-nope"}
	if err := rebalance(ctx, c, missing, false, &out, table); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing group: %v", err)
	}
}

// crowdedLedger creates a group's ConfigMap with every member at minute 7.
func crowdedLedger(t *testing.T, c client.Client, group string, names ...string) types.NamespacedName {
	t.Helper()
	entries := map[string]spread.LedgerEntry{}
	for _, name := range names {
		entries[spread.LedgerKey("reports", name)] = spread.LedgerEntry{Schedule: "H * * * *", Weight: 1, Choices: []int{7}}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ontime-system", Name: spread.LedgerName(group), Labels: map[string]string{spread.GroupLabel: group}}}
	if err := spread.WriteLedger(cm, entries, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(cm)
}

// checkRebalanced: the ledger is at the epoch, every member in a minute of
// its own.
func checkRebalanced(t *testing.T, c client.Client, key types.NamespacedName, wantEpoch int64) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), key, cm); err != nil {
		t.Fatal(err)
	}
	after, epoch, err := spread.ReadLedger(cm)
	if err != nil || epoch != wantEpoch {
		t.Fatalf("epoch %d, %v", epoch, err)
	}
	minutes := map[int]bool{}
	for key, entry := range after {
		if entry.Epoch != wantEpoch || minutes[entry.Choices[0]] {
			t.Errorf("%s: %+v", key, entry)
		}
		minutes[entry.Choices[0]] = true
	}
}
