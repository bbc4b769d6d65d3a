package standby

import (
	"context"
	"encoding/json"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/owned"
)

// Cluster is everything the standby does to the cluster: what it reads,
// the one object it creates and the one write it makes.
type Cluster interface {
	// ScheduledJob reads a ScheduledJob from the replica's cache, or from
	// the API server when live.
	ScheduledJob(ctx context.Context, key types.NamespacedName, live bool) (*v1alpha1.ScheduledJob, error)
	// Jobs are the ScheduledJob's Jobs: the cache's, and, under an active
	// limit (Forbid, maxActive), those its status.active names that the
	// cache lacks, read from the API server (whether one still runs
	// decides whether a run may start; for the other policies it decides
	// nothing the standby does). oneRead says that none was read so: the
	// Jobs show one moment, and failures may be counted from them. live
	// lists them from the API server instead of the cache.
	Jobs(ctx context.Context, sj *v1alpha1.ScheduledJob, live bool) (jobs []*batchv1.Job, oneRead bool, err error)
	// CreateJob creates a run's Job.
	CreateJob(ctx context.Context, job *batchv1.Job) error
	// Claim sets status.active (a Forbid run claimed), on condition that
	// the ScheduledJob is still at sj's resourceVersion (a Conflict
	// otherwise).
	Claim(ctx context.Context, sj *v1alpha1.ScheduledJob, active []corev1.ObjectReference) error
}

// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs/status,verbs=patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create

// NewCluster is the Cluster of a replica: its manager's client (which
// reads from the cache) and API reader.
func NewCluster(cached client.Client, live client.Reader) Cluster {
	return clusterClient{cached: cached, live: live}
}

type clusterClient struct {
	cached client.Client
	live   client.Reader
}

func (c clusterClient) ScheduledJob(ctx context.Context, key types.NamespacedName, live bool) (*v1alpha1.ScheduledJob, error) {
	var reader client.Reader = c.cached
	if live {
		reader = c.live
	}
	sj := &v1alpha1.ScheduledJob{}
	return sj, reader.Get(ctx, key, sj)
}

func (c clusterClient) Jobs(ctx context.Context, sj *v1alpha1.ScheduledJob, live bool) ([]*batchv1.Job, bool, error) {
	recorded := sj.Status.Active
	if _, limited := sj.ActiveLimit(); !limited {
		recorded = nil // nothing to read live: no limit to keep
	}
	var lister client.Reader = c.cached
	if live {
		lister = owned.ListedLive(c.live, sj.Name)
	}
	jobs, readAhead, err := owned.ScheduledJobJobs(ctx, lister, c.live, sj, recorded)
	return jobs, !readAhead, err
}

func (c clusterClient) CreateJob(ctx context.Context, job *batchv1.Job) error {
	return c.cached.Create(ctx, job)
}

func (c clusterClient) Claim(ctx context.Context, sj *v1alpha1.ScheduledJob, active []corev1.ObjectReference) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": sj.ResourceVersion},
		"status":   map[string]any{"active": active, "activeCount": len(active)},
	})
	if err != nil {
		return err
	}
	return c.cached.Status().Patch(ctx, sj.DeepCopy(), client.RawPatch(types.MergePatchType, patch))
}
