package jobcontrol

import (
	"context"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ontime-dev/ontime/internal/scheme"
)

// TestCachedAndRecorded: what an actor sees of the Jobs it answers for,
// from a cache that may be behind the API server.
func TestCachedAndRecorded(t *testing.T) {
	job := func(name string, uid types.UID, version string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid, ResourceVersion: version}}
	}
	ref := func(name string, uid types.UID) Recorded {
		return Recorded{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}, UID: uid}
	}
	tests := []struct {
		name          string
		cached, live  []*batchv1.Job
		recorded      []Recorded
		reread        Reread
		keep          func(*batchv1.Job) bool
		want          []string // name@uid, sorted
		wantLive      bool
		wantLiveReads int
	}{
		{name: "nothing recorded: the cache alone", cached: []*batchv1.Job{job("a", "1", "")}, live: []*batchv1.Job{job("b", "2", "")},
			want: []string{"a@1"}},
		{name: "a recorded Job the cache has is not read", cached: []*batchv1.Job{job("a", "1", "")}, live: []*batchv1.Job{job("a", "1", "")},
			recorded: []Recorded{ref("a", "1")}, want: []string{"a@1"}},
		{name: "a recorded Job the cache lacks is read live", live: []*batchv1.Job{job("a", "1", "")},
			recorded: []Recorded{ref("a", "1")}, want: []string{"a@1"}, wantLive: true, wantLiveReads: 1},
		{name: "a claim (no UID) is found in the cache by name", cached: []*batchv1.Job{job("a", "1", "")},
			recorded: []Recorded{ref("a", "")}, want: []string{"a@1"}},
		{name: "by UID: a cached Job of the name but another UID is replaced by the live one", cached: []*batchv1.Job{job("a", "1", "")}, live: []*batchv1.Job{job("a", "2", "")},
			recorded: []Recorded{ref("a", "2")}, want: []string{"a@2"}, wantLive: true, wantLiveReads: 1},
		{name: "a recorded Job gone from the API server is left out", cached: []*batchv1.Job{job("a", "1", "")},
			recorded: []Recorded{ref("a", "")}, reread: Always, want: nil, wantLiveReads: 1},
		{name: "always: a cached recorded Job is read live all the same", cached: []*batchv1.Job{job("a", "1", "")}, live: []*batchv1.Job{job("a", "1", "")},
			recorded: []Recorded{ref("a", "")}, reread: Always, want: []string{"a@1"}, wantLive: true, wantLiveReads: 1},
		{name: "one keep refuses (another owner's) is not added", live: []*batchv1.Job{job("a", "1", "")},
			recorded: []Recorded{ref("a", "")}, keep: func(*batchv1.Job) bool { return false }, want: nil, wantLiveReads: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cached := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objects(tc.cached)...).Build()
			reads := 0
			live := countingReader{Reader: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objects(tc.live)...).Build(), reads: &reads}
			jobs, readLive, err := CachedAndRecorded(context.Background(), cached, live, []client.ListOption{client.InNamespace("ns")}, tc.recorded, tc.reread, tc.keep)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, j := range jobs {
				got = append(got, j.Name+"@"+string(j.UID))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) || readLive != tc.wantLive || reads != tc.wantLiveReads {
				t.Errorf("jobs %v, read live %v, %d live reads; want %v, %v, %d", got, readLive, reads, tc.want, tc.wantLive, tc.wantLiveReads)
			}
		})
	}
}

func objects(jobs []*batchv1.Job) []client.Object {
	var out []client.Object
	for _, j := range jobs {
		out = append(out, j.DeepCopy())
	}
	return out
}

// countingReader counts the Gets of the API server.
type countingReader struct {
	client.Reader
	reads *int
}

func (r countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	*r.reads++
	return r.Reader.Get(ctx, key, obj, opts...)
}
