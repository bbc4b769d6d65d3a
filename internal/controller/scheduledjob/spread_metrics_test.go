package scheduledjob

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/internal/spread"
)

func TestStartsPerMinuteOfHour(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	entries := map[string]spread.LedgerEntry{
		// Placed at minute 7 and 37: 24 starts a day each.
		spread.LedgerKey("team", "a"): {Schedule: "H/30 * * * *", Weight: 1, Choices: []int{7}},
		// Weight 2, every other hour at minute 7: 12 starts of weight 2.
		spread.LedgerKey("team", "b"): {Schedule: "H */2 * * *", Weight: 2, Choices: []int{7}},
		// Amsterdam at H=0 is UTC minute 0 (whole-hour offset).
		spread.LedgerKey("team", "c"): {Schedule: "H 3 * * *", TimeZone: "Europe/Amsterdam", Weight: 1, Choices: []int{0}},
	}
	ledger := &corev1.ConfigMap{}
	if err := spread.WriteLedger(ledger, entries, 1); err != nil {
		t.Fatal(err)
	}
	got, err := startsPerMinuteOfHour(ledger, now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int64{0: 1, 7: 24 + 24, 37: 24}
	for minute, starts := range got {
		if starts != want[minute] {
			t.Errorf("minute %d: %d starts a day, want %d", minute, starts, want[minute])
		}
	}
}
