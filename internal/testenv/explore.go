package testenv

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// SeedCount is how many seeds an interleaving exploration explores: the
// count in ONTIME_EXPLORE_SEEDS when set (make unit, the edit loop, sets
// a few), else short with -short (make test, CI) and full without.
func SeedCount(short, full int) int {
	if n, err := strconv.Atoi(os.Getenv("ONTIME_EXPLORE_SEEDS")); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return short
	}
	return full
}

// ExploreSeeds runs explore for the seeds first to first+n−1, on every
// core, and fails t with the report of the first seed that broke an
// invariant and how many did: the loop of the interleaving explorations.
func ExploreSeeds(t *testing.T, first uint64, n int, explore func(seed uint64) (report string, broken bool)) {
	t.Helper()
	var mu sync.Mutex
	broken := 0
	work := make(chan uint64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for seed := range work {
				report, bad := explore(seed)
				if !bad {
					continue
				}
				mu.Lock()
				if broken++; broken == 1 {
					t.Errorf("seed %d: %s", seed, report)
				}
				mu.Unlock()
			}
		})
	}
	for seed := first; seed < first+uint64(n); seed++ {
		work <- seed
	}
	close(work)
	wg.Wait()
	if broken > 0 {
		t.Errorf("%d of %d seeds broke an invariant", broken, n)
	}
}

// FakeAPI is a fake API server without managed fields, which the
// controllers never read and whose bookkeeping is most of a write's cost.
func FakeAPI(scheme *k8sruntime.Scheme) *fake.ClientBuilder {
	tracker := clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	return fake.NewClientBuilder().WithScheme(scheme).WithObjectTracker(tracker)
}

// Lagging is a controller's cached client in an exploration: it reads
// from a snapshot of the API server (taken when the world lets its cache
// catch up) and writes to the API server.
type Lagging struct {
	client.Client
	Snapshot func() client.Reader
}

// Get reads from the snapshot.
func (l Lagging) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return l.Snapshot().Get(ctx, key, obj, opts...)
}

// List reads from the snapshot.
func (l Lagging) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return l.Snapshot().List(ctx, list, opts...)
}
