package spread

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/pkg/cron"
)

func TestLedgerRoundTrip(t *testing.T) {
	entries := map[string]LedgerEntry{
		LedgerKey("reports", "a"):       {Schedule: "H * * * *", Weight: 1, Choices: []int{7}},
		LedgerKey("reports", "nightly"): {Schedule: "H H * * *", TimeZone: "Europe/Amsterdam", Weight: 250, Choices: []int{3, 2}, Epoch: 1},
	}
	cm := &corev1.ConfigMap{}
	if err := WriteLedger(cm, entries, 4); err != nil {
		t.Fatal(err)
	}
	read, epoch, err := ReadLedger(cm)
	if err != nil || epoch != 4 || len(read) != 2 || read["reports_nightly"].Weight != 250 || read["reports_nightly"].Choices[1] != 2 {
		t.Fatalf("read back %+v, epoch %d, %v", read, epoch, err)
	}
	entry, epoch, ok, err := ReadEntry(cm, "reports_a")
	if !ok || err != nil || epoch != 4 || entry.Choices[0] != 7 {
		t.Errorf("ReadEntry: %+v %d %v %v", entry, epoch, ok, err)
	}
	if _, _, ok, _ := ReadEntry(cm, "reports_b"); ok {
		t.Error("ReadEntry found an absent key")
	}
	cm.Data["reports_broken"] = "{"
	if _, _, err := ReadLedger(cm); err == nil || !strings.Contains(err.Error(), "key reports_broken") {
		t.Errorf("a broken entry: %v", err)
	}
}

func TestLedgerKeys(t *testing.T) {
	nn, ok := ParseLedgerKey(LedgerKey("team-a", "index.builder-7"))
	if !ok || nn.Namespace != "team-a" || nn.Name != "index.builder-7" {
		t.Errorf("round trip: %v %v", nn, ok)
	}
	m, err := MemberOf("team-a_x", LedgerEntry{Schedule: "H * * * *", TimeZone: "Mars/Olympus"}, testRead)
	if err == nil || !strings.Contains(err.Error(), `timeZone "Mars/Olympus"`) {
		t.Errorf("unknown zone: %+v %v", m, err)
	}
	if m, _ := MemberOf("team-a_x", LedgerEntry{Schedule: "H * * * *"}, testRead); m.Key != "team-a/x" {
		t.Errorf("member key %q, want the hash key namespace/name", m.Key)
	}
}

func TestRebalanceLedger(t *testing.T) {
	entries := map[string]LedgerEntry{}
	for _, name := range []string{"a", "b", "c", "d"} {
		entries[LedgerKey("reports", name)] = LedgerEntry{Schedule: "H/30 * * * *", Weight: 1, Choices: []int{3}}
	}
	rebalanced, epoch, err := RebalanceLedger(entries, 2, balanceNow, testRead)
	if err != nil || epoch != 3 {
		t.Fatalf("epoch %d, %v", epoch, err)
	}
	seen := map[int]bool{}
	for key, entry := range rebalanced {
		if entry.Epoch != 3 || seen[entry.Choices[0]] || entry.Schedule != "H/30 * * * *" {
			t.Errorf("%s: %+v", key, entry)
		}
		seen[entry.Choices[0]] = true
	}
}

// TestLedgerMembersAreReadAsScheduledJobs: an entry's schedule is read as
// its ScheduledJob's, with its zone and DST policy.
func TestLedgerMembersAreReadAsScheduledJobs(t *testing.T) {
	var asked []string
	read := func(kind, key, timeZone, dstPolicy string) (cron.Parser, error) {
		asked = []string{kind, key, timeZone, dstPolicy}
		return testRead(kind, key, timeZone, dstPolicy)
	}
	if _, err := MemberOf("team-a_x", LedgerEntry{Schedule: "H * * * *", TimeZone: "Europe/Amsterdam", DSTPolicy: "Kubernetes"}, read); err != nil {
		t.Fatal(err)
	}
	if want := []string{KindScheduledJob, "team-a/x", "Europe/Amsterdam", "Kubernetes"}; !slices.Equal(asked, want) {
		t.Errorf("read %q, want %q", asked, want)
	}
}
