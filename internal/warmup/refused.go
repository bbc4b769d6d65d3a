package warmup

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Refused reports whether creating a warm-up pod failed because the
// cluster does not allow it, rather than for a moment: a ResourceQuota, Pod
// Security admission, a policy engine's webhook or RBAC answers 403
// Forbidden, a spec admission rejects 422 Invalid or 400 BadRequest. The
// next pods would be refused alike, and retrying at the workqueue's backoff
// (up to 30 s) would hold back the reconcile that starts the run at its
// time: a refusal is reported, and warm-up is tried again at RefusedRetry
// or the next wake-up, whichever comes first.
func Refused(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}

// RefusedRetry is how often refused warm-up pods are tried again: quota
// may be freed, a policy changed.
const RefusedRetry = 30 * time.Second

// RetryAfterRefusal is when a reconcile whose warm-up was refused looks
// again: at its planned wake-up if that comes sooner (0: none), else at
// RefusedRetry.
func RetryAfterRefusal(requeueAfter time.Duration) time.Duration {
	if requeueAfter == 0 {
		return RefusedRetry
	}
	return min(requeueAfter, RefusedRetry)
}
