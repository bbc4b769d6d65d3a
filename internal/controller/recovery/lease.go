package recovery

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MaxClockSkew is how far apart the replicas' clocks may be, at most: a
// Lease renewed by a holder whose clock is that far behind this replica's
// looks that much older here.
const MaxClockSkew = 5 * time.Second

// StaleLease reports how long ago the leader election Lease was last
// renewed, by now, and whether its holder has stopped leading: it names a
// holder that has not renewed it for longer than its duration plus
// MaxClockSkew. A holder stops leading once it has not renewed the Lease
// for its renew deadline by its own clock, which is shorter than the
// duration; with clocks at most MaxClockSkew apart, that has happened.
func StaleLease(lease *coordinationv1.Lease, now time.Time) (time.Duration, bool) {
	spec := lease.Spec
	if spec.HolderIdentity == nil || *spec.HolderIdentity == "" || spec.RenewTime == nil || spec.LeaseDurationSeconds == nil {
		return 0, false
	}
	since := now.Sub(spec.RenewTime.Time)
	return since, since > time.Duration(*spec.LeaseDurationSeconds)*time.Second+MaxClockSkew
}

// ReleaseStaleLease releases the leader election Lease at key when its
// holder has stopped leading (StaleLease), as a leader stopping
// gracefully does: client-go's leader election, which trusts no
// timestamp written by another clock, would otherwise wait a whole lease
// duration from when this process first read the Lease before taking it,
// even when every replica was down for minutes, and the runs due since
// would wait that long for a leader. The release is conditional on the
// version read: a holder that renewed meanwhile keeps it. It reports
// whether it released the Lease, and how long ago it was renewed.
func ReleaseStaleLease(ctx context.Context, c client.Client, key types.NamespacedName, now time.Time) (bool, time.Duration, error) {
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, key, lease); err != nil {
		return false, 0, client.IgnoreNotFound(err)
	}
	since, stale := StaleLease(lease, now)
	if !stale {
		return false, since, nil
	}
	lease.Spec.HolderIdentity = nil
	if err := c.Update(ctx, lease); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return false, since, nil // renewed, taken or deleted meanwhile
		}
		return false, since, err
	}
	return true, since, nil
}
