package scheduledjob

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// The objects the tests start from, for the unit tests and the envtest
// suite (build tag integration) alike.

// newScheduledJob runs busybox on schedule, its pods labeled app=name.
func newScheduledJob(namespace, name, schedule string) *v1alpha1.ScheduledJob {
	return &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1alpha1.ScheduledJobSpec{
			Schedule: schedule,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				}}},
			},
		},
	}
}

// newWarmUpJob is an hourly ScheduledJob whose runs place two pods of
// 500m CPU on nodes labeled pool=batch, warmed up 10 minutes ahead.
func newWarmUpJob(namespace, name string) *v1alpha1.ScheduledJob {
	sj := newScheduledJob(namespace, name, "0 * * * *")
	sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(10 * time.Minute)}
	spec := &sj.Spec.JobTemplate.Spec
	spec.Parallelism = ptr.To[int32](2)
	spec.Template.Labels = map[string]string{"app": name}
	spec.Template.Spec.NodeSelector = map[string]string{"pool": "batch"}
	spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	return sj
}
