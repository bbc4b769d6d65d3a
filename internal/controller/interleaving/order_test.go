package interleaving

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestCatchUpOrderCheck: the checker's "out of order" reads the order in
// which runs began, claims included, from the API server's writes. A run
// claimed before a newer one is in order whichever Job is created first
// (two actors create the Jobs of two claimed runs side by side); a newer
// run claimed or created first is not.
func TestCatchUpOrderCheck(t *testing.T) {
	older := time.Date(2026, 11, 26, 10, 1, 0, 0, time.UTC)
	newer := older.Add(time.Minute)
	claim, create := "claim", "create"
	for name, tc := range map[string]struct {
		writes     []string    // claim or create, in order
		runs       []time.Time // the run each write is for
		outOfOrder bool
	}{
		"claimed in order, created in order":         {writes: []string{claim, claim, create, create}, runs: []time.Time{older, newer, older, newer}},
		"claimed in order, created reversed":         {writes: []string{claim, claim, create, create}, runs: []time.Time{older, newer, newer, older}},
		"created in order without claims":            {writes: []string{create, create}, runs: []time.Time{older, newer}},
		"created reversed without claims":            {writes: []string{create, create}, runs: []time.Time{newer, older}, outOfOrder: true},
		"claimed reversed, created in order":         {writes: []string{claim, claim, create, create}, runs: []time.Time{newer, older, older, newer}, outOfOrder: true},
		"the newer created before the older claimed": {writes: []string{create, claim, create}, runs: []time.Time{newer, older, older}, outOfOrder: true},
	} {
		t.Run(name, func(t *testing.T) {
			sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: "sj-0", Namespace: "default"},
				Spec: v1alpha1.ScheduledJobSpec{Schedule: "* * * * *", CatchUp: &v1alpha1.CatchUp{MaxRuns: 3}}}
			clock := clocktesting.NewFakePassiveClock(newer.Add(5 * time.Second))
			w := &world{clock: clock, api: newAPI(clock.Now), scenario: scenario{scheduledJobs: []*v1alpha1.ScheduledJob{sj}}}
			if err := w.api.create("user", sj.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			for i, write := range tc.writes {
				job := runJob(sj, tc.runs[i])
				if write == claim {
					w.api.mutate(keyOf(sj), "leader", func(o client.Object) {
						stored := o.(*v1alpha1.ScheduledJob)
						stored.Status.Active = append(stored.Status.Active, corev1.ObjectReference{Name: job.Name, Namespace: job.Namespace})
					})
					continue
				}
				if err := w.api.create("leader", job); err != nil {
					t.Fatal(err)
				}
			}
			w.checkCatchUpOrder(w.creations())
			found := len(w.violations) == 1 && strings.Contains(w.violations[0], "out of order:")
			if found != tc.outOfOrder || len(w.violations) > 1 {
				t.Errorf("violations %q, want out of order %v", w.violations, tc.outOfOrder)
			}
		})
	}
}

// runJob is the Job of sj's run at t, as the planner names and marks it.
func runJob(sj *v1alpha1.ScheduledJob, t time.Time) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Name: sj.JobName(t), Namespace: sj.Namespace,
		Annotations:     map[string]string{v1alpha1.ScheduledTimestampAnnotation: t.Format(time.RFC3339)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ScheduledJob", Name: sj.Name, Controller: ptr.To(true)}},
	}}
}
