package testenv

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Eventually checks cond until it holds, and fails the test, naming what it
// waited for, if it does not within timeout. It is for waiting on other
// processes (an informer's cache, the API server, a webhook server, a
// cluster), never on the time of day: tests step a fake clock instead.
// cond is checked at once, then every 1/500 of timeout (10 ms to 500 ms).
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	interval := min(max(timeout/500, 10*time.Millisecond), 500*time.Millisecond)
	err := wait.PollUntilContextTimeout(context.Background(), interval, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		tb.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}
