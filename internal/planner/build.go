package planner

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// JobName is the name of the Job for a run scheduled at t: the
// ScheduledJob's name and the scheduled time in minutes since the epoch, as
// the CronJob controller names Jobs (getJobName). The name is the lock that
// makes creation idempotent: a second attempt for the same run fails with
// AlreadyExists. With names up to 52 characters the Job name stays within
// the 63 characters of the job-name label: 52 + "-" + 8 digits (until 2160).
func JobName(sj *v1alpha1.ScheduledJob, t time.Time) string {
	return sj.Name + "-" + strconv.FormatInt(t.Unix()/60, 10)
}

// TriggeredJobName names the Job of a trigger request. It hashes the
// request's value, so handling the same request twice (after a crash)
// creates one Job; the "m" keeps it apart from scheduled runs' all-digit
// suffixes and the length equals theirs.
func TriggeredJobName(sj *v1alpha1.ScheduledJob, value string) string {
	h := fnv.New32a()
	h.Write([]byte(value))
	return fmt.Sprintf("%s-m%07x", sj.Name, h.Sum32()&0xfffffff)
}

// buildJob makes the Job for a run, as getJobFromTemplate2 does: the
// template's labels, annotations and spec, the scheduled-time annotation (in
// spec.timeZone, else UTC) and a controller owner reference.
func buildJob(sj *v1alpha1.ScheduledJob, name string, scheduled time.Time, loc *time.Location) *batchv1.Job {
	template := sj.Spec.JobTemplate.DeepCopy()
	annotations := template.Annotations
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[v1alpha1.ScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   sj.Namespace,
			Labels:      template.Labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(sj, v1alpha1.GroupVersion.WithKind("ScheduledJob")),
			},
		},
		Spec: template.Spec,
	}
}
