//go:build chaos

package chaos

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// jobWatcher records every Job of the namespace it sees, through an
// informer (which lists again after an outage): its UIDs per name, and
// when it finished. With history limits 0 and 1 most Jobs are gone by the
// end, so the finish of the run before a Forbid run, and a second Job of
// one name that the audit log may have lost, are read from here.
type jobWatcher struct {
	mu       sync.Mutex
	uids     map[string][]types.UID
	finished map[types.UID]time.Time
	byName   map[string]types.UID
	// released and marked are the concurrency group runs' Jobs seen
	// released (not suspended) and marked missed, by name.
	released, marked map[string]bool
}

func watchJobs(ctx context.Context, t *testing.T, kubeconfig string) *jobWatcher {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	config.QPS, config.Burst = 50, 100
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	w := &jobWatcher{uids: map[string][]types.UID{}, finished: map[types.UID]time.Time{}, byName: map[string]types.UID{},
		released: map[string]bool{}, marked: map[string]bool{}}
	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithNamespace(namespace))
	informer := factory.Batch().V1().Jobs().Informer()
	record := func(obj any) {
		if job, ok := obj.(*batchv1.Job); ok {
			w.see(job)
		}
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    record,
		UpdateFunc: func(_, updated any) { record(updated) },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return w
}

func (w *jobWatcher) see(job *batchv1.Job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, seen := w.finished[job.UID]; !seen {
		w.finished[job.UID] = time.Time{}
		w.uids[job.Name] = append(w.uids[job.Name], job.UID)
		if _, ok := w.byName[job.Name]; !ok {
			w.byName[job.Name] = job.UID
		}
	}
	if job.Labels[v1alpha1.GroupLabel] != "" {
		if job.Spec.Suspend == nil || !*job.Spec.Suspend {
			w.released[job.Name] = true
		}
		if _, ok := job.Annotations[v1alpha1.MissedAnnotation]; ok {
			w.marked[job.Name] = true
		}
	}
	if condition, done := v1alpha1.JobFinished(job); done && w.finished[job.UID].IsZero() {
		for _, c := range job.Status.Conditions {
			if c.Type == condition {
				w.finished[job.UID] = c.LastTransitionTime.Time
			}
		}
	}
}

// jobs is, per Job name, how many Jobs of that name (UIDs) were seen, and
// when the first of them finished (zero: not seen finishing).
func (w *jobWatcher) jobs() (seen map[string]int, finished map[string]time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen, finished = map[string]int{}, map[string]time.Time{}
	for name, uids := range w.uids {
		seen[name] = len(uids)
		finished[name] = w.finished[w.byName[name]]
	}
	return seen, finished
}

// groupRuns are the concurrency group runs' Jobs seen released, and seen
// marked missed, by name.
func (w *jobWatcher) groupRuns() (released, marked map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.released), maps.Clone(w.marked)
}
