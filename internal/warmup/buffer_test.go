package warmup

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

func bufferOptions() Options {
	return (&v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(10 * time.Minute), Strategy: v1alpha1.WarmUpCapacityBuffer}).Settings()
}

var servedBeta = BufferAPI{Version: "v1beta1"}

// bufferFor is the run's buffer as created at warm-up start, ready at
// readyAt when that is set.
func bufferFor(at time.Time, readyAt ...time.Time) Buffer {
	b := Buffer{Name: BufferName("report-" + v1alpha1.RunLabelValue(at)), Run: v1alpha1.RunLabelValue(at), Created: at.Add(-10 * time.Minute)}
	if len(readyAt) > 0 {
		b.ReadyAt = readyAt[0]
	}
	return b
}

func bufferState(ready *time.Time) *v1alpha1.WarmUpStatus {
	s := &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(run), Strategy: v1alpha1.WarmUpCapacityBuffer, StartTime: metav1.NewTime(warmStart), Pods: 2}
	if ready != nil {
		s.ReadyTime, s.ScheduledPods = &metav1.Time{Time: *ready}, 2
	}
	return s
}

type bufferWant struct {
	decideWant
	createBuffers, deleteBuffers []string
	unavailable                  bool
}

func TestDecideCapacityBuffer(t *testing.T) {
	at0951, at0952 := run.Add(-9*time.Minute), run.Add(-8*time.Minute)
	nextWarm := nextRun.Add(-10 * time.Minute)
	name := BufferName("report-" + v1alpha1.RunLabelValue(run))
	tests := map[string]struct {
		in   Input
		want bufferWant
	}{
		"before warm-up: nothing asked": {
			in:   Input{Now: beforeWarm, Next: run},
			want: bufferWant{decideWant: decideWant{wake: []time.Time{warmStart}, nextStart: warmStart}},
		},
		"warm-up begins: the buffer is asked for, and polled": {
			in: Input{Now: warmStart, Next: run},
			want: bufferWant{createBuffers: []string{name}, decideWant: decideWant{events: []string{"WarmUpStarted"}, nextStart: warmStart,
				wake: []time.Time{warmStart.Add(BufferPoll)}, state: bufferState(nil)}},
		},
		"not ready yet: polled again, not asked twice": {
			in:   Input{Now: at0951, Next: run, Buffers: []Buffer{bufferFor(run)}, Previous: bufferState(nil)},
			want: bufferWant{decideWant: decideWant{nextStart: warmStart, wake: []time.Time{at0951.Add(BufferPoll)}, state: bufferState(nil)}},
		},
		"the autoscaler reports it in place: ready, no more polling": {
			in: Input{Now: at0952, Next: run, Buffers: []Buffer{bufferFor(run, at0951)}, Previous: bufferState(nil)},
			want: bufferWant{decideWant: decideWant{events: []string{"WarmUpReady"}, nextStart: warmStart, state: bufferState(ptr.To(at0951)),
				readyAfter: time.Minute}},
		},
		"a buffer being deleted is asked for again": {
			in:   Input{Now: at0951, Next: run, Buffers: []Buffer{func() Buffer { b := bufferFor(run); b.Deleting = true; return b }()}, Previous: bufferState(nil)},
			want: bufferWant{createBuffers: []string{name}, decideWant: decideWant{nextStart: warmStart, wake: []time.Time{at0951.Add(BufferPoll)}, state: bufferState(nil)}},
		},
		"the API is not served: said once, the run goes on": {
			in: Input{Now: warmStart, Next: run, BufferAPI: BufferAPI{Problem: "not served"}},
			want: bufferWant{unavailable: true, decideWant: decideWant{events: []string{"CapacityBufferUnavailable"}, nextStart: warmStart,
				wake: []time.Time{warmStart.Add(RefusedRetry)}, state: bufferState(nil)}},
		},
		"the run starts: the buffer goes, its nodes left empty for the run's pods": {
			in: Input{Now: afterRun, Next: nextRun, Current: run, CurrentStarts: true, CurrentJob: jobWithReady(0),
				Buffers: []Buffer{bufferFor(run, at0951)}, Previous: bufferState(ptr.To(at0951))},
			want: bufferWant{deleteBuffers: []string{name}, decideWant: decideWant{wake: []time.Time{nextWarm, run.Add(2 * time.Minute)}, nextStart: nextWarm, state: bufferState(ptr.To(at0951))}},
		},
		"never reported before the run: late": {
			in: Input{Now: afterRun, Next: nextRun, Current: run, CurrentStarts: true, CurrentJob: jobWithReady(0),
				Buffers: []Buffer{bufferFor(run)}, Previous: bufferState(nil)},
			want: bufferWant{deleteBuffers: []string{name}, decideWant: decideWant{events: []string{"WarmUpLate"}, wake: []time.Time{nextWarm, run.Add(2 * time.Minute)}, nextStart: nextWarm,
				state: func() *v1alpha1.WarmUpStatus { s := bufferState(nil); s.Late = true; return s }(), late: true}},
		},
		"reported before the run while the controller was away: not late": {
			in: Input{Now: afterRun, Next: nextRun, Current: run, CurrentStarts: true, CurrentJob: jobWithReady(0),
				Buffers: []Buffer{bufferFor(run, at0952)}, Previous: bufferState(nil)},
			want: bufferWant{deleteBuffers: []string{name}, decideWant: decideWant{events: []string{"WarmUpReady"}, wake: []time.Time{nextWarm, run.Add(2 * time.Minute)}, nextStart: nextWarm,
				state: bufferState(ptr.To(at0952)), readyAfter: 2 * time.Minute}},
		},
		"the run does not start (Forbid): canceled": {
			in: Input{Now: afterRun, Next: nextRun, Current: run, Buffers: []Buffer{bufferFor(run, at0951)}, Previous: bufferState(ptr.To(at0951))},
			want: bufferWant{deleteBuffers: []string{name}, decideWant: decideWant{events: []string{"WarmUpCanceled"}, wake: []time.Time{nextWarm}, nextStart: nextWarm,
				state: bufferState(ptr.To(at0951))}},
		},
		"suspended during warm-up: canceled": {
			in:   Input{Now: at0952, Buffers: []Buffer{bufferFor(run)}, Previous: bufferState(nil)},
			want: bufferWant{deleteBuffers: []string{name}, decideWant: decideWant{events: []string{"WarmUpCanceled"}, state: bufferState(nil)}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.in.Owner, tc.in.Options = decideOwner(), bufferOptions()
			if tc.in.BufferAPI.Problem == "" {
				tc.in.BufferAPI = servedBeta
			}
			checkBufferDecision(t, Decide(tc.in), tc.want)
		})
	}
}

// TestStrategyChangedFromCapacityBuffer: once the strategy is another, the
// buffers go, and placeholders are created in their place.
func TestStrategyChangedFromCapacityBuffer(t *testing.T) {
	in := Input{Owner: decideOwner(), Options: placeholderOptions(), Now: run.Add(-8 * time.Minute), Next: run,
		Buffers: []Buffer{bufferFor(run)}, BufferAPI: servedBeta, Previous: bufferState(nil)}
	d := Decide(in)
	if len(d.CreatePods) != 2 || len(d.DeleteBuffers) != 1 || len(d.CreateBuffers) != 0 {
		t.Errorf("created %d placeholders and %d buffers, deleted %d buffers; want 2, 0, 1", len(d.CreatePods), len(d.CreateBuffers), len(d.DeleteBuffers))
	}
}

func checkBufferDecision(t *testing.T, d Decision, want bufferWant) {
	t.Helper()
	checkDecision(t, d, want.decideWant)
	if d.State != nil && d.State.Strategy != v1alpha1.WarmUpCapacityBuffer {
		t.Errorf("state's strategy %q, want CapacityBuffer", d.State.Strategy)
	}
	var created, deleted []string
	for _, r := range d.CreateBuffers {
		created = append(created, r.Buffer.GetName())
	}
	for _, b := range d.DeleteBuffers {
		deleted = append(deleted, b.Name)
	}
	if !slices.Equal(created, want.createBuffers) || !slices.Equal(deleted, want.deleteBuffers) {
		t.Errorf("buffers created %v deleted %v, want %v and %v", created, deleted, want.createBuffers, want.deleteBuffers)
	}
	if d.BufferUnavailable != want.unavailable {
		t.Errorf("unavailable %v, want %v (%q)", d.BufferUnavailable, want.unavailable, d.BufferProblem)
	}
}

// TestBufferRequest: the PodTemplate is shaped like a placeholder, the
// buffer names it and asks for the run's pods, both owned by the owner.
func TestBufferRequest(t *testing.T) {
	owner := decideOwner()
	opts := bufferOptions()
	opts.Image, opts.PriorityClassName = "mirror.example/pause:3.10", "batch-low"
	r := NewBufferRequest(servedBeta, owner, "report-1", run, opts)
	pod := r.Template.Template
	if pod.Spec.Containers[0].Image != opts.Image || pod.Spec.PriorityClassName != "batch-low" || pod.Spec.NodeSelector["karpenter.sh/nodepool"] != "batch" {
		t.Errorf("template spec %+v: want the placeholder's shape, image and class", pod.Spec)
	}
	if got := pod.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "600m" {
		t.Errorf("template requests %s CPU, want the run's 600m", got)
	}
	if _, ok := pod.Labels[v1alpha1.WarmUpLabel]; ok {
		t.Errorf("the template's pods carry %s: the controllers would take them for warm-up pods", v1alpha1.WarmUpLabel)
	}
	b := r.Buffer
	if b.GetAPIVersion() != "autoscaling.x-k8s.io/v1beta1" || b.GetKind() != "CapacityBuffer" || b.GetName() != "report-1-buffer" || b.GetNamespace() != owner.Namespace {
		t.Errorf("buffer %s %s %s/%s", b.GetAPIVersion(), b.GetKind(), b.GetNamespace(), b.GetName())
	}
	ref, _, _ := unstructured.NestedString(b.Object, "spec", "podTemplateRef", "name")
	replicas, _, _ := unstructured.NestedInt64(b.Object, "spec", "replicas")
	if ref != r.Template.Name || replicas != 2 {
		t.Errorf("buffer asks for %d of %q, want 2 of %q", replicas, ref, r.Template.Name)
	}
	checkBufferOwnership(t, r, owner)
}

// checkBufferOwnership: the buffer and its template are the owner's and
// labeled with the run.
func checkBufferOwnership(t *testing.T, r BufferRequest, owner Owner) {
	t.Helper()
	for _, refs := range [][]metav1.OwnerReference{r.Buffer.GetOwnerReferences(), r.Template.OwnerReferences} {
		if len(refs) != 1 || refs[0].UID != owner.Reference.UID {
			t.Errorf("owner references %+v, want the owner's", refs)
		}
	}
	if labels := r.Buffer.GetLabels(); labels[v1alpha1.OwnerUIDLabel] != owner.UID || labels[v1alpha1.RunLabel] != v1alpha1.RunLabelValue(run) {
		t.Errorf("buffer labels %v", labels)
	}
}

// TestBufferOf reads the autoscaler's conditions as Karpenter writes them.
func TestBufferOf(t *testing.T) {
	created := run.Add(-10 * time.Minute)
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "ReadyForProvisioning", "status": "True", "reason": "Resolved", "message": "Pod template resolved successfully", "lastTransitionTime": "2026-11-24T09:50:01Z"},
		map[string]any{"type": "Provisioning", "status": "True", "reason": "FitsExistingCapacity", "message": "All 2 virtual pods fit on existing capacity", "lastTransitionTime": "2026-11-24T09:51:02Z"},
	}}}}
	u.SetName("report-1-buffer")
	u.SetCreationTimestamp(metav1.NewTime(created))
	u.SetLabels(map[string]string{v1alpha1.RunLabel: "29925180"})
	b := BufferOf(u)
	if !b.ReadyAt.Equal(time.Date(2026, 11, 24, 9, 51, 2, 0, time.UTC)) || b.Run != "29925180" || b.Blocked != "" {
		t.Errorf("%+v: want ready at 09:51:02 of run 29925180", b)
	}
	u.Object["status"] = map[string]any{"conditions": []any{
		map[string]any{"type": "ReadyForProvisioning", "status": "False", "reason": "PodTemplateNotFound", "message": `podtemplates "x" not found`, "lastTransitionTime": "2026-11-24T09:50:01Z"},
		map[string]any{"type": "Provisioning", "status": "False", "reason": "NotReadyForProvisioning", "lastTransitionTime": "2026-11-24T09:50:01Z"},
		"not a condition",
	}}
	b = BufferOf(u)
	if !b.ReadyAt.IsZero() || !strings.HasPrefix(b.Blocked, "PodTemplateNotFound: ") {
		t.Errorf("%+v: want not ready, blocked by PodTemplateNotFound", b)
	}
}

// TestChooseBufferAPI: the newest namespaced version; a cluster-scoped one
// or none is said plainly.
func TestChooseBufferAPI(t *testing.T) {
	for _, tc := range []struct {
		served  map[string]bool
		version string
		problem string
	}{
		{served: map[string]bool{"v1beta1": true}, version: "v1beta1"},
		{served: map[string]bool{"v1alpha1": true, "v1beta1": true}, version: "v1beta1"},
		{served: map[string]bool{"v1alpha1": true}, version: "v1alpha1"},
		{served: map[string]bool{"v1alpha1": false}, problem: "cluster-scoped"},
		{served: nil, problem: "does not serve CapacityBuffer"},
	} {
		got := ChooseBufferAPI(tc.served)
		if got.Version != tc.version || (tc.problem == "") != (got.Problem == "") || !strings.Contains(got.Problem, tc.problem) {
			t.Errorf("%v: %+v, want version %q, problem with %q", tc.served, got, tc.version, tc.problem)
		}
	}
}
