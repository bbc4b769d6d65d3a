package backfill

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/scheme"
)

// TestProgressCollector: the leader reports each Backfill's times by
// state and the times left, from its status; a replica not elected
// reports nothing.
func TestProgressCollector(t *testing.T) {
	bf := &v1alpha1.Backfill{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "november"},
		Status: v1alpha1.BackfillStatus{Total: 96, Started: 40, ActiveCount: 3, Succeeded: 35, Failed: 2, Skipped: 10}}
	reader := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(bf).Build()
	elected := make(chan struct{})
	collector := NewProgressCollector(reader, elected, logr.Discard())
	if n := testutil.CollectAndCount(collector); n != 0 {
		t.Errorf("not elected: %d metrics, want none", n)
	}
	close(elected)
	want := `
# HELP ontime_backfill_times A Backfill's times by state, from its status: total (every time of its range), started, active (started and running), succeeded, failed, skipped (redo: Missing, a run already there).
# TYPE ontime_backfill_times gauge
ontime_backfill_times{backfill="november",namespace="team",state="active"} 3
ontime_backfill_times{backfill="november",namespace="team",state="failed"} 2
ontime_backfill_times{backfill="november",namespace="team",state="skipped"} 10
ontime_backfill_times{backfill="november",namespace="team",state="started"} 40
ontime_backfill_times{backfill="november",namespace="team",state="succeeded"} 35
ontime_backfill_times{backfill="november",namespace="team",state="total"} 96
# HELP ontime_backfill_times_left A Backfill's times neither started nor skipped yet.
# TYPE ontime_backfill_times_left gauge
ontime_backfill_times_left{backfill="november",namespace="team"} 46
`
	if err := testutil.CollectAndCompare(collector, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
