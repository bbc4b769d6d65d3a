package planner

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Catching up (spec.catchUp). Without it, as with a CronJob, only the most
// recent due run starts and the ones before it are recorded as missed. With
// it, the runs still owed are the due runs after the last one handled
// (status.lastScheduleTime, lastMissedTime), within startingDeadlineSeconds,
// not before the run last announced (notBeforeAnnounced), at most
// spec.catchUp.maxRuns of them, the most recent ones; the oldest of them
// starts, as the due run would (claimed under a limit, held while the
// limit is reached), and status announces the next one, in the past.
//
// Nothing else is kept: each plan finds the runs owed from the watermark
// that starting a run moves, so a catch-up goes on across failovers and
// restarts. Runs stay in order: every actor's plan starts the oldest run
// owed, and a standby, which starts a run only within StandbyWindow of its
// time, never starts a newer run ahead of the older ones (which would move
// the watermark past them). As time passes, the deadline and the bound
// only move forward: a run no longer owed never is again, which is what
// lets a claim of it be dropped (catchUpAbandoned).

// catchesUp reports whether this plan catches up missed runs: spec.catchUp
// is set, the policy is not Replace (which would replace each run by the
// next), and the ScheduledJob is not resuming from a suspension (the
// Ready condition still says suspended): runs due while it was suspended
// are not owed.
func (s scheduling) catchesUp() bool {
	if s.sj.Spec.CatchUp == nil || s.sj.Spec.ConcurrencyPolicy == v1alpha1.ReplaceConcurrent || s.sj.Spec.RunAt != nil {
		return false
	}
	reason := readyReason(&s.sj.Status)
	return reason != v1alpha1.ReasonSuspended && reason != v1alpha1.ReasonSuspendedAfterFailures
}

// owedRuns are the runs a catch-up owes, oldest first, when due is the
// most recent due run and handled the watermark. The due runs after
// handled before the first of them are not owed (beyond the bound or the
// deadline): runDue counts them as skipped.
func (s scheduling) owedRuns(handled, due time.Time) (owed []time.Time) {
	bound := int(s.sj.Spec.CatchUp.MaxRuns)
	t := due
	for ; !t.IsZero() && t.After(handled) && len(owed) < bound && !s.tooLate(t) && s.notBeforeAnnounced(t); t = s.sched.Prev(t.Add(-time.Second)) {
		owed = append(owed, t)
	}
	slices.Reverse(owed)
	return owed
}

// tooLate reports whether the run at t is later than
// startingDeadlineSeconds. Deadlines are whole seconds, so lateness is
// too: with startingDeadlineSeconds 0 a run created in its own second
// still starts.
func (s scheduling) tooLate(t time.Time) bool {
	deadline := s.sj.Spec.StartingDeadlineSeconds
	return deadline != nil && s.now.Truncate(time.Second).Sub(t) > v1alpha1.StartingDeadline(*deadline)
}

// catchUp starts the oldest of the owed runs (at least two) and announces
// the next. Its run carries the catch-up's record when it changes it,
// which the run's creator writes: a run that begins a catch-up reports it
// (Run.BeginsCatchUp); one that continues it (the oldest run owed is the one
// after the last the record counts: runs came due while older ones
// waited, as under Forbid) extends it, without another event.
func (s scheduling) catchUp(owed []time.Time, handled time.Time) dueRun {
	d := s.runDue(owed[0], handled)
	d.catchUpNext = owed[1]
	if d.create == nil {
		return d
	}
	d.create.CatchingUp = true
	last := owed[len(owed)-1]
	record := &v1alpha1.CatchUpStatus{From: metav1.Time{Time: owed[0]}, Through: metav1.Time{Time: last},
		Runs: int32(len(owed)), Dropped: int32(d.missed[MissSkipped])}
	recorded := s.sj.Status.CatchUp
	switch {
	case recorded == nil || owed[0].After(s.sched.Next(recorded.Through.Time)):
		d.create.CatchUp, d.create.BeginsCatchUp = record, true
	case last.After(recorded.Through.Time):
		record.From = recorded.From
		record.Runs = recorded.Runs + int32(countFrom(owed, recorded.Through.Time))
		record.Dropped = recorded.Dropped + record.Dropped
		d.create.CatchUp = record
	}
	return d
}

// countFrom counts the times after from.
func countFrom(times []time.Time, from time.Time) int {
	n := 0
	for _, t := range times {
		if t.After(from) {
			n++
		}
	}
	return n
}

// catchUpAbandoned is when the claimed run at t stops being owed, so that
// no plan starts it any more: its deadline passed, or maxRuns newer runs
// came due. A claim of it is dropped RequestBound later (dropStaleClaims),
// when no create planned before can still arrive.
func (s scheduling) catchUpAbandoned(t time.Time) time.Time {
	abandoned := t
	for range s.sj.Spec.CatchUp.MaxRuns {
		if abandoned = s.sched.Next(abandoned); abandoned.IsZero() {
			break
		}
	}
	if deadline := s.sj.Spec.StartingDeadlineSeconds; deadline != nil {
		passed := t.Add(v1alpha1.StartingDeadline(*deadline) + time.Second)
		if abandoned.IsZero() || passed.Before(abandoned) {
			abandoned = passed
		}
	}
	return abandoned
}

// announceCatchUp says that missed runs are being caught up: status
// announces the next one owed, in the past, and the plan looks again at
// once (a run just created is also announced by its Job's event).
func (s scheduling) announceCatchUp(next time.Time) announcement {
	return announcement{
		readiness: scheduled(next, "catching up missed runs (spec.catchUp): the run at "+next.In(s.loc).Format(time.RFC3339)+" is next"),
		wake:      []time.Time{s.now},
	}
}
