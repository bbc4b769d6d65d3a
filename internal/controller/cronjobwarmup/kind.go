package cronjobwarmup

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ontime-dev/ontime/internal/controller/owners"
	"github.com/ontime-dev/ontime/internal/wakeup"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// cronJobs is the CronJob kind of owners.Reconciler: how an annotated
// CronJob is read, decided about and recorded.
type cronJobs struct{ *Controller }

func (cronJobs) New() *batchv1.CronJob { return &batchv1.CronJob{} }

// Forget drops the state last written on a deleted CronJob; its warm-up
// objects go with it (they are its own).
func (k cronJobs) Forget(_ context.Context, key types.NamespacedName) error {
	k.written.forget(key)
	return nil
}

// Plan gathers and decides.
func (k cronJobs) Decide(ctx context.Context, cj *batchv1.CronJob, now time.Time) (owners.Decision, error) {
	in, err := k.gather(ctx, cj, now)
	if err != nil {
		return nil, err
	}
	return &cronJobDecision{c: k.Controller, in: in, decided: decide(in)}, nil
}

// cronJobDecision is a CronJob's warm-up plan as the loop carries it out.
type cronJobDecision struct {
	c       *Controller
	in      gathered
	decided warmUpActions
}

func (p *cronJobDecision) WarmUp() warmup.Changes { return p.decided.changes }

func (p *cronJobDecision) Wake() time.Duration { return wakeup.Delay(p.in.now, p.decided.wake...) }

// Record writes the state annotation if it changed, then emits the events
// and observes the metrics; failed, warm-up's error, is the reconcile's.
func (p *cronJobDecision) Record(ctx context.Context, warm warmup.Applied, failed error) error {
	if err := p.c.writeState(ctx, p.in.cj, p.in.state, p.decided.state); err != nil {
		// What the plan found is found again by the retry; only what was
		// done is reported now.
		p.c.emit(p.in.cj, warm.Events())
		return err
	}
	p.c.emit(p.in.cj, append(p.decided.events, warm.Events()...))
	p.decided.observe()
	return failed
}
