package scheduledjob

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Writing status: a merge patch conditional on the resourceVersion the
// plan was made from.

// writeStatus writes status if it changed, and reports whether it wrote.
// The write carries sj's resourceVersion as a precondition: a status
// planned from an object someone else has changed since is refused, and
// the next reconcile plans again from a confirmed one.
func (c *Controller) writeStatus(ctx context.Context, sj *v1alpha1.ScheduledJob, status v1alpha1.ScheduledJobStatus) (bool, error) {
	if equality.Semantic.DeepEqual(sj.Status, status) {
		return false, nil
	}
	updated := sj.DeepCopy()
	updated.Status = status
	patch, err := statusPatch(sj, updated)
	if err != nil {
		return false, err
	}
	if err := c.kubeClient.Status().Patch(ctx, updated, patch); err != nil {
		if apierrors.IsConflict(err) {
			// Someone else wrote meanwhile: the returned error requeues,
			// and the next run started is planned from a live read.
			c.known.refused(client.ObjectKeyFromObject(sj))
		}
		return false, client.IgnoreNotFound(err)
	}
	c.known.saw(updated)
	// The cache may have the write already: its watch event can beat the
	// write's answer, and observed then found nothing to forget.
	cached := &v1alpha1.ScheduledJob{}
	if err := c.kubeClient.Get(ctx, client.ObjectKeyFromObject(sj), cached); err == nil {
		c.known.observed(cached)
	}
	return true, nil
}

// statusPatch is the merge patch from sj to updated, conditional on sj's
// resourceVersion and always carrying
// status.activeCount: a diff of two Go structs leaves out a count that is 0
// on both sides, and the ACTIVE column would stay blank until the first run.
func statusPatch(sj, updated *v1alpha1.ScheduledJob) (client.Patch, error) {
	data, err := client.MergeFromWithOptions(sj, client.MergeFromWithOptimisticLock{}).Data(updated)
	if err != nil {
		return nil, err
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, err
	}
	status, _ := body["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		body["status"] = status
	}
	status["activeCount"] = updated.Status.ActiveCount
	data, err = json.Marshal(body)
	return client.RawPatch(types.MergePatchType, data), err
}
