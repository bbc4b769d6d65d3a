package testenv

import (
	"testing"
	"time"
)

// recorder stands in for a test, to see what Eventually reports.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, _ ...any) { r.failed = format }

func TestEventually(t *testing.T) {
	calls := 0
	Eventually(t, time.Second, "the third call", func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Errorf("cond called %d times, want 3", calls)
	}
	r := &recorder{TB: t}
	Eventually(r, 50*time.Millisecond, "nothing", func() bool { return false })
	if r.failed == "" {
		t.Error("a condition that never holds did not fail the test")
	}
}
