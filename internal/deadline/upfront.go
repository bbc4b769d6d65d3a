package deadline

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// upFront is the condition of a latest run on track (or succeeded),
// unless the next run cannot succeed by its deadline however soon it
// starts: then DeadlineInfeasible says why, before that run exists. A run
// at risk or past its deadline says more, so judge asks only here.
func upFront(onTrack Condition, st *v1alpha1.DeadlineStatus, in Input) Condition {
	if why := infeasible(st, in); why != "" {
		return Condition{metav1.ConditionTrue, v1alpha1.ReasonDeadlineInfeasible, why}
	}
	return onTrack
}

// infeasible says why the next run cannot succeed by its deadline, ""
// while it can. Runs take the typical run time, as predicted, and each
// check assumes the best case, so that what it reports holds whatever
// happens: the next run takes longer than its deadline allows; Replace
// replaces it when the run after it is due, before it can finish; Forbid
// or maxActive keeps it waiting until the run Limit runs before it
// (started on time, Following−Next earlier each) finishes; or its
// concurrency group predicts its admission too late.
func infeasible(st *v1alpha1.DeadlineStatus, in Input) string {
	ahead := in.Ahead
	if st.TypicalRunTime == nil || ahead.Next.IsZero() {
		return ""
	}
	typical := st.TypicalRunTime.Duration
	deadline, ok := in.Deadline.For(ahead.Next, in.Location)
	if !ok {
		return ""
	}
	runTimes := runTimesBasis(typical, len(st.RecentRunTimes))
	if finish := ahead.Next.Add(typical); finish.After(deadline) {
		return fmt.Sprintf("%s, longer than the deadline allows: the next run, at %s, must succeed by %s, %s after its time",
			runTimes, stamp(ahead.Next), stamp(deadline), deadline.Sub(ahead.Next))
	}
	if !ahead.Following.IsZero() {
		gap := ahead.Following.Sub(ahead.Next)
		if ahead.Replace && typical > gap {
			return fmt.Sprintf("%s, but concurrencyPolicy Replace replaces each run when the next is due, %s later: none can succeed", runTimes, gap)
		}
		if ahead.Limit > 0 {
			if why := heldTooLong(ahead, gap, typical, deadline, runTimes); why != "" {
				return why
			}
		}
	}
	if at := ahead.NextAdmission; at.After(ahead.Next) && at.Add(typical).After(deadline) {
		return fmt.Sprintf("%s predicts the next run, at %s, is admitted at %s, behind the runs queued ahead of it; %s, so it would succeed at %s, %s",
			ahead.Group, stamp(ahead.Next), stamp(at), runTimes, stamp(at.Add(typical)), againstDeadline(at.Add(typical), deadline))
	}
	return ""
}

// heldTooLong says why the next run, held back until the run Limit runs
// before it finishes, cannot succeed by its deadline; "" while it can.
// Limit is at least 1 (infeasible asks only then).
func heldTooLong(ahead Outlook, gap, typical time.Duration, deadline time.Time, runTimes string) string {
	before := ahead.Next.Add(-time.Duration(ahead.Limit) * gap)
	freed := before.Add(typical)
	if !freed.After(ahead.Next) || !freed.Add(typical).After(deadline) {
		return ""
	}
	limit := "Forbid starts a run only once the one before it has finished"
	if ahead.Limit > 1 {
		limit = fmt.Sprintf("maxActive %d starts a run only once one of the %d before it has finished", ahead.Limit, ahead.Limit)
	}
	return fmt.Sprintf("%s and start every %s, and %s: the next run, at %s, waits at best until %s and would succeed at %s, %s",
		runTimes, gap, limit, stamp(ahead.Next), stamp(freed), stamp(freed.Add(typical)), againstDeadline(freed.Add(typical), deadline))
}
