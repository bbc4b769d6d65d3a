package standby

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/controller/jobcontrol"
	"github.com/ontime-dev/ontime/internal/controller/statuswrite"
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
	// CreateJob creates a run's Job and says what came of it
	// (jobcontrol.Writer.Create); a Job already there is not read
	// (jobcontrol.Exists): it is the leader's to record.
	CreateJob(ctx context.Context, job *batchv1.Job) (jobcontrol.Creation, error)
	// Claim writes claimed's status.active and activeCount (a Forbid run
	// claimed, planner.Claiming), on condition that the ScheduledJob is
	// still at sj's resourceVersion (a Conflict otherwise).
	Claim(ctx context.Context, sj, claimed *v1alpha1.ScheduledJob) error
}

// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=ontime.dev,resources=scheduledjobs/status,verbs=patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create

// NewCluster is the Cluster of a replica: its manager's client (which
// reads from the cache) and API reader.
func NewCluster(cached client.Client, live client.Reader) Cluster {
	return clusterClient{cached: cached, live: live, jobs: jobcontrol.NewWriter(cached, live)}
}

type clusterClient struct {
	cached client.Client
	live   client.Reader
	jobs   jobcontrol.Writer
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
		lister = jobcontrol.ListedLive(c.live, sj.Name)
	}
	jobs, readAhead, err := jobcontrol.ScheduledJobJobs(ctx, lister, c.live, sj, recorded)
	return jobs, !readAhead, err
}

func (c clusterClient) CreateJob(ctx context.Context, job *batchv1.Job) (jobcontrol.Creation, error) {
	creation, _, err := c.jobs.Create(ctx, nil, job)
	return creation, err
}

func (c clusterClient) Claim(ctx context.Context, sj, claimed *v1alpha1.ScheduledJob) error {
	_, err := statuswrite.Write(ctx, c.cached, sj, claimed.DeepCopy(), nil)
	return err
}
