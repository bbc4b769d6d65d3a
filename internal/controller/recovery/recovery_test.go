package recovery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestUnavailable(t *testing.T) {
	jobs := schema.GroupResource{Group: "batch", Resource: "jobs"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection refused", &url.Error{Op: "Post", URL: "https://127.0.0.1:6443/apis/batch/v1/namespaces/a/jobs", Err: syscall.ECONNREFUSED}, true},
		{"wrapped connection refused", fmt.Errorf("creating job: %w", syscall.ECONNREFUSED), true},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), true},
		{"etcd down: 500", apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		{"server timeout", apierrors.NewServerTimeout(jobs, "create", 1), true},
		{"503", apierrors.NewServiceUnavailable("the server is shutting down"), true},
		{"already exists", apierrors.NewAlreadyExists(jobs, "a-1"), false},
		{"conflict", apierrors.NewConflict(jobs, "a-1", errors.New("modified")), false},
		{"forbidden", apierrors.NewForbidden(jobs, "a-1", errors.New("quota")), false},
		{"invalid", apierrors.NewBadRequest("spec.template: Required value"), false},
		{"plain error", errors.New("planner: bad spec"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unavailable(tc.err); got != tc.want {
				t.Errorf("Unavailable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// failing is a reconciler whose every reconcile fails with err.
func failing(err error) reconcile.Reconciler {
	return reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, err })
}

// apiState is a probe whose answer the test sets.
type apiState struct{ down atomic.Bool }

func (a *apiState) probe(context.Context) error {
	if a.down.Load() {
		return syscall.ECONNREFUSED
	}
	return nil
}

func startRetrier(t *testing.T, api *apiState) *Retrier {
	t.Helper()
	r := NewRetrier(api.probe)
	r.every = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func TestRetrierRetriesWhenTheAPIAnswersAgain(t *testing.T) {
	api := &apiState{}
	api.down.Store(true)
	r := startRetrier(t, api)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "a", Name: "nightly"}}
	refused := &url.Error{Op: "Post", URL: "https://127.0.0.1:6443", Err: syscall.ECONNREFUSED}
	if _, err := r.Reconciler(failing(refused)).Reconcile(context.Background(), req); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("the wrapped reconcile's error = %v, want it passed on", err)
	}
	select {
	case e := <-r.events:
		t.Fatalf("%v retried while the API server is down", e.Object)
	case <-time.After(50 * time.Millisecond):
	}
	api.down.Store(false)
	select {
	case e := <-r.events:
		if e.Object != req {
			t.Errorf("retried %v, want %v", e.Object, req)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not retried once the API server answered")
	}
	if n := r.waitingCount(); n != 0 {
		t.Errorf("%d requests still wait", n)
	}
}

// A reconcile refused for its own reasons is left to its backoff, and so
// is one that failed while the API server was already back when probed:
// retrying them at once would only spin.
func TestRetrierLeavesOtherFailuresToTheBackoff(t *testing.T) {
	api := &apiState{}
	r := startRetrier(t, api)
	jobs := schema.GroupResource{Group: "batch", Resource: "jobs"}
	for i, err := range []error{apierrors.NewForbidden(jobs, "a-1", errors.New("exceeded quota")), syscall.ECONNRESET} {
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "a", Name: fmt.Sprint(i)}}
		_, _ = r.Reconciler(failing(err)).Reconcile(context.Background(), req)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.waitingCount() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	select {
	case e := <-r.events:
		t.Errorf("%v retried, although the API server never failed a probe", e.Object)
	default:
	}
}

func TestWaitForAPI(t *testing.T) {
	api := &apiState{}
	api.down.Store(true)
	probes := atomic.Int32{}
	probe := func(ctx context.Context) error {
		if probes.Add(1) == 3 {
			api.down.Store(false)
		}
		return api.probe(ctx)
	}
	if err := WaitForAPI(context.Background(), probe, time.Millisecond); err != nil {
		t.Fatalf("WaitForAPI: %v", err)
	}
	if n := probes.Load(); n != 3 {
		t.Errorf("%d probes, want 3 (two refused, then one answered)", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	api.down.Store(true)
	if err := WaitForAPI(ctx, api.probe, time.Millisecond); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitForAPI with the API down and ctx canceled = %v, want context.Canceled", err)
	}
}

// TestReadyzProbe: an API server that answers, even to refuse the
// request, is up; one that says it is not ready, or does not answer, is
// not.
func TestReadyzProbe(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int // 0: the server is closed
		up     bool
	}{
		{"ready", http.StatusOK, true},
		{"readyz forbidden to the controller", http.StatusForbidden, true},
		{"readyz not served", http.StatusNotFound, true},
		{"etcd unreachable", http.StatusInternalServerError, false},
		{"shutting down", http.StatusServiceUnavailable, false},
		{"not answering", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/readyz" {
					t.Errorf("probed %s, want /readyz", r.URL.Path)
				}
				w.WriteHeader(tc.status)
			}))
			if tc.status == 0 {
				server.Close()
			} else {
				defer server.Close()
			}
			probe, err := ReadyzProbe(&rest.Config{Host: server.URL})
			if err != nil {
				t.Fatal(err)
			}
			if err := probe(context.Background()); (err == nil) != tc.up {
				t.Errorf("probe = %v, want up %v", err, tc.up)
			}
		})
	}
}
