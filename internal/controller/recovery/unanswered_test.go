package recovery

import (
	"context"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// answer is a transport that answers every request with code, or fails
// with err.
type answer struct {
	code int
	err  error
}

func (a answer) RoundTrip(*http.Request) (*http.Response, error) {
	if a.err != nil {
		return nil, a.err
	}
	return &http.Response{StatusCode: a.code, Body: http.NoBody}, nil
}

func TestUnansweredRecordsWhatTheAPIServerDidNotAnswer(t *testing.T) {
	for name, tc := range map[string]struct {
		answer   answer
		recorded bool
	}{
		"connection refused":           {answer: answer{err: fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED)}, recorded: true},
		"a timeout":                    {answer: answer{err: context.DeadlineExceeded}, recorded: true},
		"503, etcd unreachable":        {answer: answer{code: http.StatusServiceUnavailable}, recorded: true},
		"504":                          {answer: answer{code: http.StatusGatewayTimeout}, recorded: true},
		"200":                          {answer: answer{code: http.StatusOK}},
		"409, a conflict: it answered": {answer: answer{code: http.StatusConflict}},
		"canceled by the caller":       {answer: answer{err: context.Canceled}},
	} {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 27, 7, 51, 0, 0, time.UTC))
			u := NewUnanswered(clk)
			req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:6443/apis/batch/v1/jobs?watch=true", nil)
			if resp, err := u.Wrap(tc.answer).RoundTrip(req); err == nil {
				_ = resp.Body.Close()
			}
			if got := u.Within(clk.Now().Add(CacheCatchUp-time.Millisecond), CacheCatchUp); got != tc.recorded {
				t.Errorf("recorded %v, want %v", got, tc.recorded)
			}
			if u.Within(clk.Now().Add(CacheCatchUp), CacheCatchUp) {
				t.Error("still within CacheCatchUp once it has passed")
			}
		})
	}
}

func TestNoUnansweredMeansAnswered(t *testing.T) {
	var u *Unanswered
	if u.Within(time.Now(), time.Hour) {
		t.Error("a nil Unanswered says the API server failed to answer")
	}
}
