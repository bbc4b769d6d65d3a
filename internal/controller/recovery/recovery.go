// Package recovery makes a controller start working again as soon as the
// API server answers after an outage, instead of when client-go's and
// controller-runtime's backoffs next try:
//
//   - a reconcile that failed because the API server did not answer is
//     retried the moment it answers again (its workqueue backoff, up to
//     30 s after a long outage, would otherwise decide), and
//   - a cache's first list waits until the API server answers (client-go's
//     reflector, once a list has failed, tries again only every 30 to 60 s,
//     so a replica restarted during an outage would start that much late).
//
// Whether the API server answers is its /readyz (which every authenticated
// user may read; it fails while etcd is unreachable too).
package recovery

import (
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// ProbeEvery is how often the API server is asked whether it answers while
// something waits for it: the most a recovery is noticed late.
const ProbeEvery = 250 * time.Millisecond

// Probe reports whether the API server answers (nil) or why not.
type Probe func(ctx context.Context) error

// ReadyzProbe asks the API server of config for /readyz, with its own rate
// limit (a probe must not wait behind the controllers' requests) and a
// timeout of a second. An answer refusing the request (a cluster that does
// not let the controller read /readyz: 401, 403, 404) counts as answering:
// only an API server that does not answer, or says it is not ready, holds
// the controller back.
func ReadyzProbe(config *rest.Config) (Probe, error) {
	config = rest.CopyConfig(config)
	config.Timeout = time.Second
	config.QPS, config.Burst, config.RateLimiter = 20, 20, nil
	client, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if err := client.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error(); Unavailable(err) {
			return err
		}
		return nil
	}, nil
}

// Unavailable reports whether err says the API server did not answer, or
// could not reach etcd, rather than refusing the request: only those are
// worth retrying the moment it answers again.
func Unavailable(err error) bool {
	var urlErr *url.Error
	var netErr net.Error
	switch {
	case err == nil:
		return false
	case errors.As(err, &urlErr), errors.As(err, &netErr),
		utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	// By status code (500, 503, 504), whatever the body: an API server
	// whose etcd is down may answer without a Status object.
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsInternalError(err)
}

// Retrier retries, once the API server answers again, the reconciles that
// failed because it did not. Add it to the manager (it probes only while a
// reconcile waits), wrap the reconciler with Reconciler and watch Source.
type Retrier struct {
	probe  Probe
	every  time.Duration
	events chan event.TypedGenericEvent[reconcile.Request]

	mu      sync.Mutex
	waiting map[reconcile.Request]struct{}
}

// NewRetrier returns a Retrier that asks probe every ProbeEvery.
func NewRetrier(probe Probe) *Retrier {
	return &Retrier{probe: probe, every: ProbeEvery, events: make(chan event.TypedGenericEvent[reconcile.Request], 1024),
		waiting: map[reconcile.Request]struct{}{}}
}

// Reconciler wraps inner: a request whose reconcile failed because the API
// server did not answer waits for it (and is retried by its backoff too).
func (r *Retrier) Reconciler(inner reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		result, err := inner.Reconcile(ctx, req)
		if Unavailable(err) {
			r.mu.Lock()
			r.waiting[req] = struct{}{}
			r.mu.Unlock()
		}
		return result, err
	})
}

// Source enqueues the waiting requests when the API server answers again.
func (r *Retrier) Source() source.TypedSource[reconcile.Request] {
	return source.Channel(r.events, handler.TypedFuncs[reconcile.Request, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[reconcile.Request], queue workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			queue.Add(e.Object)
		},
	})
}

// NeedLeaderElection is false: a standby's reconciles wait too.
func (r *Retrier) NeedLeaderElection() bool { return false }

// Start probes, while requests wait, until ctx ends. When a probe succeeds
// after one failed, the waiting requests are enqueued; when the first probe
// succeeds, the API server was back before anyone looked and their backoff
// retries them soon enough.
func (r *Retrier) Start(ctx context.Context) error {
	ticker := time.NewTicker(r.every)
	defer ticker.Stop()
	sawDown := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		if r.waitingCount() == 0 {
			sawDown = false
			continue
		}
		if err := r.probe(ctx); err != nil {
			sawDown = true
			continue
		}
		waiting := r.takeWaiting()
		if !sawDown {
			continue
		}
		sawDown = false
		log.FromContext(ctx).Info("the API server answers again: retrying the reconciles that waited for it", "count", len(waiting))
		for _, req := range waiting {
			select {
			case r.events <- event.TypedGenericEvent[reconcile.Request]{Object: req}:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

func (r *Retrier) waitingCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.waiting)
}

func (r *Retrier) takeWaiting() []reconcile.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	waiting := make([]reconcile.Request, 0, len(r.waiting))
	for req := range r.waiting {
		waiting = append(waiting, req)
	}
	clear(r.waiting)
	return waiting
}

// WaitForAPI returns once probe succeeds, or with ctx's error, asking
// every ProbeEvery and logging every 10 s while it waits.
func WaitForAPI(ctx context.Context, probe Probe, every time.Duration) error {
	logged := time.Time{}
	for {
		err := probe(ctx)
		if err == nil {
			return nil
		}
		if time.Since(logged) >= 10*time.Second {
			log.FromContext(ctx).Info("waiting for the API server to answer before listing", "error", err.Error())
			logged = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}

// NewCache is controller-runtime's cache whose Start first waits for the API
// server to answer, so that its informers' first lists are not spent on an
// API server that is down, after which client-go would wait up to a minute
// to list again. The manager starts leader election only once its caches
// have synced, so a replica that cannot list does not take the Lease.
func NewCache(config *rest.Config, opts cache.Options) (cache.Cache, error) {
	probe, err := ReadyzProbe(config)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(config, opts)
	if err != nil {
		return nil, err
	}
	return &waitingCache{Cache: c, probe: probe}, nil
}

type waitingCache struct {
	cache.Cache
	probe Probe
}

func (w *waitingCache) Start(ctx context.Context) error {
	if err := WaitForAPI(ctx, w.probe, ProbeEvery); err != nil {
		return nil // stopped before the API server answered
	}
	return w.Cache.Start(ctx)
}

// AddRetrier adds a Retrier for one controller to mgr, probing mgr's API
// server.
func AddRetrier(mgr manager.Manager) (*Retrier, error) {
	probe, err := ReadyzProbe(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	r := NewRetrier(probe)
	return r, mgr.Add(r)
}
