package planner

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// buildJob makes the Job for a run, as getJobFromTemplate2 does: the
// template's labels, annotations and spec, the scheduled-time annotation (in
// spec.timeZone, else UTC) and a controller owner reference; and, unlike
// upstream, v1alpha1.ScheduledJobLabel, so that the controller can cache
// only its own Jobs. A member of a concurrency group has its Job created
// suspended, to be started by the group (v1alpha1.JoinGroup).
func buildJob(sj *v1alpha1.ScheduledJob, name string, scheduled time.Time, loc *time.Location) *batchv1.Job {
	template := sj.Spec.JobTemplate.DeepCopy()
	annotations := template.Annotations
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[v1alpha1.ScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	labels := template.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1alpha1.ScheduledJobLabel] = sj.Name
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   sj.Namespace,
			Labels:      labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(sj, v1alpha1.GroupVersion.WithKind("ScheduledJob")),
			},
		},
		Spec: template.Spec,
	}
	if group := sj.Spec.ConcurrencyGroup; group != nil {
		// The run waits for room in its group, at most its starting
		// deadline.
		var startBy *time.Time
		if deadline := sj.Spec.StartingDeadlineSeconds; deadline != nil {
			startBy = ptr.To(scheduled.Add(v1alpha1.StartingDeadline(*deadline)))
		}
		v1alpha1.JoinGroup(job, *group, startBy)
	}
	return job
}

// RunJob is the Job of the ScheduledJob's run at scheduled, named and
// marked as the run's (a backfill creates it, with its own owner).
func RunJob(sj *v1alpha1.ScheduledJob, scheduled time.Time, loc *time.Location) *batchv1.Job {
	return buildJob(sj, sj.JobName(scheduled), scheduled, loc)
}
