package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// The API server calls it only for Jobs a CronJob owns (the configuration's
// matchConditions, added by config/webhook and the chart: controller-gen
// has no marker for them), and creates the Job unchanged when no replica
// answers (failurePolicy Ignore): a webhook that failed closed would stop
// every CronJob of the cluster while ontime is away.
// +kubebuilder:webhook:path=/mutate-batch-v1-job-concurrency-group,mutating=true,failurePolicy=ignore,sideEffects=None,groups=batch,resources=jobs,verbs=create,versions=v1,name=mjob-concurrency-group.ontime.dev,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch

// JobGroupPath is where JobGroupMutator is served.
const JobGroupPath = "/mutate-batch-v1-job-concurrency-group"

// JobGroupMutator makes the Jobs of a CronJob annotated
// ontime.dev/concurrency-group (or ontime.dev/cluster-concurrency-group)
// waiting runs of that group, as a ScheduledJob member's are created:
// suspended, labeled with the group, with the CronJob's priority
// annotation and the time after which the run is missed (its scheduled
// time plus the CronJob's startingDeadlineSeconds). The group's controller
// releases them.
type JobGroupMutator struct {
	// reader reads the owning CronJob from the API server: a CronJob
	// annotated a moment ago is read as it is now.
	reader  client.Reader
	decoder admission.Decoder
}

// RegisterJobGroupMutator serves the mutator on mgr's webhook server.
func RegisterJobGroupMutator(mgr ctrl.Manager) {
	mgr.GetWebhookServer().Register(JobGroupPath, &webhook.Admission{Handler: &JobGroupMutator{reader: mgr.GetAPIReader(), decoder: admission.NewDecoder(mgr.GetScheme())}})
}

// Handle adds the group to a new Job of an annotated CronJob. A CronJob
// whose annotations are not valid has its Jobs refused with a message
// naming the annotation and its value, which the CronJob controller
// reports as a FailedCreate event on the CronJob: a Job created without
// its group would run over the group's limit.
func (m *JobGroupMutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	job := &batchv1.Job{}
	if err := m.decoder.Decode(req, job); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	owner := metav1.GetControllerOf(job)
	if owner == nil || owner.Kind != "CronJob" || owner.APIVersion != "batch/v1" {
		return admission.Allowed("not a CronJob's Job")
	}
	cronJob := &batchv1.CronJob{}
	switch err := m.reader.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: owner.Name}, cronJob); {
	case apierrors.IsNotFound(err):
		return admission.Allowed("its CronJob is gone")
	case err != nil:
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("reading CronJob %s/%s: %w", req.Namespace, owner.Name, err))
	}
	ref, member, invalid := v1alpha1.CronJobGroup(cronJob)
	if invalid != nil {
		return admission.Denied(fmt.Sprintf("CronJob %s: %v", cronJob.Name, invalid))
	}
	if !member || cronJob.UID != owner.UID {
		return admission.Allowed("not in a concurrency group")
	}
	v1alpha1.JoinGroup(job, ref, startBy(job, cronJob))
	patched, err := json.Marshal(job)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, patched)
}

// startBy is when a CronJob's run is missed: its scheduled time (the
// annotation the CronJob controller sets) plus the CronJob's
// startingDeadlineSeconds; nil (it waits as long as it takes) without
// either.
func startBy(job *batchv1.Job, cronJob *batchv1.CronJob) *time.Time {
	scheduled, ok := v1alpha1.ScheduledTime(job)
	deadline := cronJob.Spec.StartingDeadlineSeconds
	if !ok || deadline == nil {
		return nil
	}
	return ptr.To(scheduled.Add(v1alpha1.StartingDeadline(*deadline)))
}
