package planner

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// Judgement is what the planner makes of a ScheduledJob's spec before it
// looks at any Job: what the webhook's rules find wrong with it
// (invalid.go), and what its schedule means with the spread placement it
// is read with (the parsed schedule; scheduleOf). Both are functions of
// the spec, of the placements (status.spread for the rules, the ledger's
// for the schedule) and, for warm-up's look at the coming runs only, of
// the time it was made. A controller makes it once per generation and
// placement (Judgements) instead of parsing and validating the spec on
// every reconcile; Decide makes it itself when Input.Judged is nil.
type Judgement struct {
	invalid invalidity
	// meaning is the spec read with choices, the values of a Balanced
	// spread's H fields; problem is why it cannot be (a spread not placed
	// yet, a schedule that cannot be read), or nil.
	meaning v1alpha1.Meaning
	problem *specProblem
	// effective is meaning's schedule with its H fields' values.
	effective string
}

// Judge judges sj's spec, read with placement (Input.Placement), at now.
func Judge(sj *v1alpha1.ScheduledJob, placement *v1alpha1.SpreadStatus, now time.Time) Judgement {
	judgement := Judgement{invalid: invalidityOf(sj, now)}
	judgement.meaning, judgement.problem = meaningOf(sj, placement)
	if judgement.problem == nil {
		judgement.effective = judgement.meaning.Effective()
	}
	return judgement
}

// meaningOf is what sj's spec means read with placement, or why it cannot
// be read.
func meaningOf(sj *v1alpha1.ScheduledJob, placement *v1alpha1.SpreadStatus) (v1alpha1.Meaning, *specProblem) {
	var choices []int
	if sj.Spec.RunAt == nil {
		var problem *specProblem
		if choices, problem = spreadChoices(sj, placement); problem != nil {
			return v1alpha1.Meaning{}, problem
		}
	}
	meaning, err := sj.Meaning(choices)
	if errs := v1alpha1.SpecErrors(err); len(errs) > 0 {
		return v1alpha1.Meaning{}, problemOf(errs[0])
	}
	return meaning, nil
}

// Judgements keeps each ScheduledJob's latest Judgement, so that its spec
// is judged once per generation and placement: again only when the
// generation (the spec), status.spread or the placement read with it
// changes, or the name is taken by a new object. Safe for concurrent use.
type Judgements struct {
	mu     sync.Mutex
	latest map[types.NamespacedName]judged
}

// judged is a Judgement and what it was made from.
type judged struct {
	uid        types.UID
	generation int64
	recorded   *v1alpha1.SpreadStatus // status.spread
	placement  *v1alpha1.SpreadStatus // Input.Placement
	judgement  *Judgement
}

func (j judged) of(sj *v1alpha1.ScheduledJob, placement *v1alpha1.SpreadStatus) bool {
	return j.judgement != nil && j.uid == sj.UID && j.generation == sj.Generation &&
		equality.Semantic.DeepEqual(j.recorded, sj.Status.Spread) && equality.Semantic.DeepEqual(j.placement, placement)
}

// Of is sj's Judgement with placement: the one kept if it was made from
// the same generation and placements, else a new one made at now.
func (j *Judgements) Of(sj *v1alpha1.ScheduledJob, placement *v1alpha1.SpreadStatus, now time.Time) *Judgement {
	key := types.NamespacedName{Namespace: sj.Namespace, Name: sj.Name}
	j.mu.Lock()
	kept := j.latest[key]
	j.mu.Unlock()
	if kept.of(sj, placement) {
		return kept.judgement
	}
	judgement := Judge(sj, placement, now)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.latest == nil {
		j.latest = map[types.NamespacedName]judged{}
	}
	j.latest[key] = judged{uid: sj.UID, generation: sj.Generation, recorded: sj.Status.Spread.DeepCopy(),
		placement: placement.DeepCopy(), judgement: &judgement}
	return &judgement
}

// Forget drops what is kept of a deleted ScheduledJob.
func (j *Judgements) Forget(key types.NamespacedName) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.latest, key)
}
