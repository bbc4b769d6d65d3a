//go:build integration

package controller

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
)

// throttledRuns is how many runs the throttled test makes, throttledStep
// the time between their due times, and throttledRetryAfter the
// Retry-After of each run's first Job create. A due time is stored to the
// second (metav1.Time), so runs a fraction of a second apart are due at
// one instant and may be taken in any order: the step is a whole second.
// Each create takes at least throttledRetryAfter, longer than the step, so
// that runs fall due while the one worker is busy and wait in its queue.
const (
	throttledRuns       = 12
	throttledStep       = time.Second
	throttledRetryAfter = 2
)

// TestRunsInDueOrderUnderAThrottledAPIServer: the API server's flow
// control (APF) rejects the controller's requests with 429 and a
// Retry-After, as a busy 1.37 API server does more readily. The controller,
// at its shipped client limits and with one worker, still creates every
// run once and in the order of their due times, and waits as long as each
// 429 says before it asks again. A second user in the same priority level
// keeps its one seat busy, so that rejections are many, not chance. Where
// they fall is the server's choice, and in our runs it never fell on a
// Job create (events and list requests took them): so the controller's
// transport also answers each run's first Job create itself, 429 with
// a Retry-After, as APF would, before the request leaves the process.
func TestRunsInDueOrderUnderAThrottledAPIServer(t *testing.T) {
	h, err := testenv.StartHarness(testenv.HarnessOptions{
		// With 15 seats in the whole server, a priority level of one
		// share gets one seat.
		Options: testenv.Options{CRDDirs: []string{"config/crd/bases"},
			APIServerFlags: map[string]string{"max-requests-inflight": "10", "max-mutating-requests-inflight": "5"}},
		Scheme: ontimescheme.New(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	config, noise := throttledUsers(t, h)
	responses := &responseLog{}
	config.Wrap(rejectFirstJobCreates)
	config.Wrap(responses.wrap)
	config.QPS, config.Burst = 300, 600 // the shipped client limits

	t.Cleanup(func() {
		if t.Failed() {
			t.Log(responses.summary())
		}
	})
	startController(t, h, config)
	stopNoise := keepBusy(h.Ctx, noise, 6)
	defer stopNoise()

	first := time.Now().Add(5 * time.Second).Truncate(time.Second)
	namespaces := make([]string, throttledRuns)
	for i := range namespaces {
		// One namespace per run, so that each run's requests have paths
		// of their own and a retry is told apart from another run's
		// request.
		namespaces[i] = h.NewNamespace(t)
		sj := throttledScheduledJob(namespaces[i], first.Add(time.Duration(i)*throttledStep))
		h.Create(t, sj)
	}
	testenv.Eventually(t, 3*time.Minute, "every run's Job", func() bool { return jobsIn(h, namespaces) == throttledRuns })
	stopNoise()
	// Nothing more: a duplicate would be made after the last first one.
	time.Sleep(2 * time.Second) // giving a duplicate create time to show
	if got := jobsIn(h, namespaces); got != throttledRuns {
		t.Errorf("%d Jobs for %d runs, want one each", got, throttledRuns)
	}

	created := responses.createdJobNamespaces()
	order := make([]int, 0, len(created))
	for _, ns := range created {
		order = append(order, slices.Index(namespaces, ns))
	}
	if !slices.IsSorted(order) || len(order) != throttledRuns {
		t.Errorf("runs created in the order %v, want 0 to %d in due order", order, throttledRuns-1)
	}
	rejected := responses.rejected()
	rejectedCreates := 0
	for _, r := range rejected {
		if r.method == http.MethodPost && strings.HasSuffix(r.path, "/jobs") {
			rejectedCreates++
		}
	}
	t.Logf("%d of the controller's %d requests were answered 429, %d of them a run's Job create", len(rejected), responses.count(), rejectedCreates)
	if len(rejected) == rejectedCreates {
		t.Error("the API server answered none of the controller's requests 429: its flow control did not throttle, and the test proves less than it says")
	}
	if rejectedCreates < throttledRuns {
		t.Errorf("%d Job creates answered 429, want every run's first", rejectedCreates)
	}
	for _, early := range responses.retriedEarly() {
		t.Error(early)
	}
}

// throttledUsers adds the controller's user and a noisy neighbor's, both
// allowed everything, and a priority level of one seat that rejects (429)
// whatever finds it busy, which both users' requests go to. It waits until
// the API server classifies the controller's requests there.
func throttledUsers(t *testing.T, h *testenv.Harness) (controller, noise *rest.Config) {
	const level = "ontime-throttled"
	users := []string{"ontime-controller", "noisy-neighbor"}
	configs := make([]*rest.Config, len(users))
	subjects := make([]flowcontrolv1.Subject, len(users))
	for i, user := range users {
		config, err := h.AddUser(user)
		if err != nil {
			t.Fatal(err)
		}
		configs[i] = config
		subjects[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}
		h.Create(t, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}})
	}
	priority := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: level},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](1),
				LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
	h.Create(t, priority)
	h.Create(t, &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: level},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			MatchingPrecedence: 500,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{Subjects: subjects,
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}}}}})
	httpClient, err := rest.HTTPClientFor(configs[0])
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the controller's requests in the throttled priority level", func() bool {
		resp, err := httpClient.Get(configs[0].Host + "/version")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID") == string(priority.UID)
	})
	return configs[0], configs[1]
}

// keepBusy sends requests as the noisy neighbor from workers goroutines
// until stopped.
func keepBusy(ctx context.Context, config *rest.Config, workers int) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	noisy := rest.CopyConfig(config)
	noisy.QPS, noisy.Burst = -1, 0
	noisy.RateLimiter = nil
	httpClient, err := rest.HTTPClientFor(noisy)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil && err == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, noisy.Host+"/api/v1/namespaces", nil)
				if resp, err := httpClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		})
	}
	var once sync.Once
	return func() { once.Do(func() { cancel(); wg.Wait() }) }
}

// startController runs every controller, as the controller command
// registers them, through config, with one worker and the real clock, and
// waits until its cache has synced.
func startController(t *testing.T, h *testenv.Harness, config *rest.Config) {
	mgr, err := ctrl.NewManager(config, ctrl.Options{Scheme: ontimescheme.New(), Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	h.Create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ontime-system"}})
	if err := Register(h.Ctx, mgr, clock.RealClock{}, Options{Workers: 1, SpreadNamespace: "ontime-system"}); err != nil {
		t.Fatalf("Register: %v", err)
	}
	ctx, stop := context.WithCancel(h.Ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("the manager stopped: %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the controller's cache did not sync")
	}
}

func throttledScheduledJob(namespace string, at time.Time) *v1alpha1.ScheduledJob {
	sj := scheduledJob(namespace, "run", "")
	sj.Spec.Schedule = ""
	sj.Spec.RunAt = &metav1.Time{Time: at}
	return sj
}

// jobsIn counts the Jobs of the namespaces, read from the API server.
func jobsIn(h *testenv.Harness, namespaces []string) int {
	count := 0
	for _, ns := range namespaces {
		var jobs batchv1.JobList
		if err := h.Live.List(h.Ctx, &jobs, client.InNamespace(ns)); err == nil {
			count += len(jobs.Items)
		}
	}
	return count
}

// responseLog records every request the controller sent and what the API
// server answered, in the order they were sent.
type responseLog struct {
	mu      sync.Mutex
	entries []response
}

type response struct {
	method, path string
	sent, got    time.Time
	status       int
	// retryAfter is a 429's Retry-After.
	retryAfter time.Duration
}

func (l *responseLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		sent := time.Now()
		resp, err := next.RoundTrip(req)
		r := response{method: req.Method, path: req.URL.Path, sent: sent, got: time.Now()}
		if err == nil {
			r.status = resp.StatusCode
			if seconds, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
				r.retryAfter = time.Duration(seconds) * time.Second
			}
		}
		l.mu.Lock()
		l.entries = append(l.entries, r)
		l.mu.Unlock()
		return resp, err
	})
}

// rejectFirstJobCreates answers the first create of a Job in each
// namespace 429 with throttledRetryAfter, as the API server's flow control does,
// without sending it; every other request goes on.
func rejectFirstJobCreates(next http.RoundTripper) http.RoundTripper {
	var mu sync.Mutex
	rejected := map[string]bool{}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/jobs") {
			return next.RoundTrip(req)
		}
		mu.Lock()
		first := !rejected[req.URL.Path]
		rejected[req.URL.Path] = true
		mu.Unlock()
		if !first {
			return next.RoundTrip(req)
		}
		if req.Body != nil {
			_ = req.Body.Close()
		}
		body := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","code":429}`
		return &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Retry-After": {strconv.Itoa(throttledRetryAfter)}, "Content-Type": {"application/json"}},
			Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req}, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (l *responseLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// createdJobNamespaces are the namespaces of the Jobs created, in the
// order the API server answered the creates.
func (l *responseLog) createdJobNamespaces() []string {
	l.mu.Lock()
	entries := slices.Clone(l.entries)
	l.mu.Unlock()
	slices.SortStableFunc(entries, func(a, b response) int { return a.got.Compare(b.got) })
	var out []string
	for _, r := range entries {
		if r.method == http.MethodPost && r.status == http.StatusCreated && strings.HasSuffix(r.path, "/jobs") {
			out = append(out, strings.Split(r.path, "/")[5]) // /apis/batch/v1/namespaces/NS/jobs
		}
	}
	return out
}

// summary counts the requests by method, path and answer, for a test that
// failed.
func (l *responseLog) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	counts := map[string]int{}
	for _, r := range l.entries {
		counts[fmt.Sprintf("%s %s %d", r.method, r.path, r.status)]++
	}
	var lines []string
	for line, n := range counts {
		lines = append(lines, fmt.Sprintf("%5d %s", n, line))
	}
	slices.Sort(lines)
	return "the controller's requests:\n" + strings.Join(lines, "\n")
}

func (l *responseLog) rejected() []response {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []response
	for _, r := range l.entries {
		if r.status == http.StatusTooManyRequests {
			out = append(out, r)
		}
	}
	return out
}

// retriedEarly reports each 429 whose request was sent again (same method
// and path) sooner than its Retry-After said.
func (l *responseLog) retriedEarly() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for i, r := range l.entries {
		if r.status != http.StatusTooManyRequests || r.retryAfter == 0 {
			continue
		}
		for _, next := range l.entries[i+1:] {
			if next.method != r.method || next.path != r.path {
				continue
			}
			// The transport's clock and client-go's differ by the
			// moments between reading the response and returning it.
			if waited := next.sent.Sub(r.got); waited < r.retryAfter-50*time.Millisecond {
				out = append(out, fmt.Sprintf("%s %s answered 429 with Retry-After %s was sent again %s later", r.method, r.path, r.retryAfter, waited))
			}
			break
		}
	}
	return out
}
