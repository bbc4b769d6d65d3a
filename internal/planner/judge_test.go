package planner

import (
	"reflect"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestJudgementsJudgeOncePerGeneration: the spec is judged again only when
// the generation, the UID, status.spread or the placement read with it
// changes, or after Forget; otherwise the kept Judgement is returned.
func TestJudgementsJudgeOncePerGeneration(t *testing.T) {
	placed := &v1alpha1.SpreadStatus{Group: "g", Schedule: "H * * * *", Choices: []int{7}}
	for _, c := range []struct {
		name   string
		change func(sj *v1alpha1.ScheduledJob, placement **v1alpha1.SpreadStatus, j *Judgements)
		again  bool
	}{
		{"nothing changed", func(*v1alpha1.ScheduledJob, **v1alpha1.SpreadStatus, *Judgements) {}, false},
		{"status other than spread", func(sj *v1alpha1.ScheduledJob, _ **v1alpha1.SpreadStatus, _ *Judgements) {
			sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour}
		}, false},
		{"a placement equal but not the same", func(_ *v1alpha1.ScheduledJob, p **v1alpha1.SpreadStatus, _ *Judgements) {
			*p = (*p).DeepCopy()
		}, false},
		{"a new generation", func(sj *v1alpha1.ScheduledJob, _ **v1alpha1.SpreadStatus, _ *Judgements) { sj.Generation++ }, true},
		{"a new object of the same name", func(sj *v1alpha1.ScheduledJob, _ **v1alpha1.SpreadStatus, _ *Judgements) { sj.UID = "other" }, true},
		{"status.spread", func(sj *v1alpha1.ScheduledJob, _ **v1alpha1.SpreadStatus, _ *Judgements) {
			sj.Status.Spread = placed.DeepCopy()
		}, true},
		{"another placement", func(_ *v1alpha1.ScheduledJob, p **v1alpha1.SpreadStatus, _ *Judgements) {
			*p = &v1alpha1.SpreadStatus{Group: "g", Schedule: "H * * * *", Choices: []int{8}}
		}, true},
		{"forgotten", func(sj *v1alpha1.ScheduledJob, _ **v1alpha1.SpreadStatus, j *Judgements) {
			j.Forget(types.NamespacedName{Namespace: sj.Namespace, Name: sj.Name})
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sj := scheduledJob("H * * * *", justBeforeThePriorHour)
			sj.UID, sj.Generation = "uid", 1
			sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, Group: "g"}
			placement := placed.DeepCopy()
			var j Judgements
			first := j.Of(sj, placement, topOfTheHour)
			c.change(sj, &placement, &j)
			second := j.Of(sj, placement, topOfTheHour.Add(time.Hour))
			if again := first != second; again != c.again {
				t.Errorf("judged again: %v, want %v", again, c.again)
			}
		})
	}
}

// TestDecideJudgedIsDecideUnjudged: a plan made with the Judgement the
// controller kept is the plan Decide makes judging the spec itself, for
// specs that run, that cannot run, and whose warm-up breaks a rule.
func TestDecideJudgedIsDecideUnjudged(t *testing.T) {
	badWarmUp := scheduledJob("* * * * *", justBeforeThePriorHour)
	badWarmUp.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(10 * time.Minute), Strategy: v1alpha1.WarmUpEarlyStart}
	unparseable := scheduledJob("61 * * * *", justBeforeThePriorHour)
	badTemplate := scheduledJob("0 * * * *", justBeforeThePriorHour)
	badTemplate.Spec.JobTemplate.Spec.ActiveDeadlineSeconds = ptr.To[int64](0)
	pending := scheduledJob("H * * * *", justBeforeThePriorHour)
	pending.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, Group: "g"}
	running := scheduledJob("0 * * * *", justBeforeThePriorHour)
	for _, c := range []struct {
		name string
		sj   *v1alpha1.ScheduledJob
		// is what the Judgement must find, so that the case is what its
		// name says.
		is func(Judgement) bool
	}{
		{"due", running, func(j Judgement) bool { return j.problem == nil && len(j.invalid.spec)+len(j.invalid.warmUp) == 0 }},
		{"warm-up broken", badWarmUp, func(j Judgement) bool { return len(j.invalid.warmUp) > 0 }},
		{"schedule unparseable", unparseable, func(j Judgement) bool { return j.problem != nil }},
		{"template invalid", badTemplate, func(j Judgement) bool { return len(j.invalid.spec) > 0 }},
		{"spread not placed", pending, func(j Judgement) bool { return j.problem != nil && j.problem.condition == v1alpha1.ReasonSpreadPending }},
	} {
		t.Run(c.name, func(t *testing.T) {
			sj := c.sj
			jobs := []*batchv1.Job{childJob(sj, justBeforeThePriorHour.Add(time.Minute), "a", false)}
			in := Input{ScheduledJob: sj, Jobs: jobs, Now: topOfTheHour}
			unjudged := Decide(in)
			var kept Judgements
			in.Judged = kept.Of(sj, nil, topOfTheHour)
			if !c.is(*in.Judged) {
				t.Fatalf("the Judgement %+v is not what the case is named for", *in.Judged)
			}
			if judged := Decide(in); !reflect.DeepEqual(judged, unjudged) {
				t.Errorf("the plan with a kept Judgement differs:\n%+v\nwant\n%+v", judged, unjudged)
			}
		})
	}
}

// BenchmarkDecide is one decision of a run due now, for an hourly
// ScheduledJob whose last run is an hour old: judging the spec each time,
// as Decide does alone, and with the Judgement a controller keeps.
func BenchmarkDecide(b *testing.B) {
	sj := scheduledJob("0 * * * *", justBeforeThePriorHour)
	sj.Status.LastScheduleTime = &metav1.Time{Time: topOfTheHour.Add(-time.Hour)}
	in := Input{ScheduledJob: sj, Now: topOfTheHour}
	b.Run("judged each time", func(b *testing.B) {
		for b.Loop() {
			if Decide(in).Create == nil {
				b.Fatal("no run due")
			}
		}
	})
	b.Run("judged once", func(b *testing.B) {
		var kept Judgements
		for b.Loop() {
			in.Judged = kept.Of(sj, nil, in.Now)
			if Decide(in).Create == nil {
				b.Fatal("no run due")
			}
		}
	})
}
