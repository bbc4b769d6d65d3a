package warmup

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// runAt is the scheduled time of the runs below; at(s) is s seconds after.
var runAt = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func at(s int) metav1.Time { return metav1.NewTime(runAt.Add(time.Duration(s) * time.Second)) }

// startTimes are the instants a run's objects record, in seconds after
// runAt; a nil pointer leaves the field unset.
type startTimes struct {
	jobCreated         int
	jobAdmitted        *int // Job status.startTime
	podCreated         int
	nodeCreated        *int
	nodeReady          *int
	scheduled          *int // PodScheduled True
	sandbox            *int // PodReadyToStartContainers True
	inits              [][2]int
	started            int // first container running
	sidecarStartedOnly bool
}

func (s startTimes) objects() (*batchv1.Job, *corev1.Pod, *corev1.Node) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "run", Namespace: "ns", UID: "job-uid", CreationTimestamp: at(s.jobCreated),
		Annotations: map[string]string{v1alpha1.ScheduledTimestampAnnotation: runAt.Format(time.RFC3339)}}}
	if s.jobAdmitted != nil {
		job.Status.StartTime = ptr.To(at(*s.jobAdmitted))
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "run-x", Namespace: "ns", CreationTimestamp: at(s.podCreated),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "run", UID: types.UID("job-uid"), Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "node-a"}}
	if s.scheduled != nil {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(*s.scheduled)})
	}
	if s.sandbox != nil {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at(*s.sandbox)})
	}
	for _, ran := range s.inits {
		state := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: at(ran[0]), FinishedAt: at(ran[1])}}
		if s.sidecarStartedOnly {
			state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(ran[0])}}
		}
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{Name: "init", State: state})
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(s.started)}}}}
	var node *corev1.Node
	if s.nodeCreated != nil {
		node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", CreationTimestamp: at(*s.nodeCreated)}}
		if s.nodeReady != nil {
			node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: at(*s.nodeReady)}}
		}
	}
	return job, pod, node
}

// phases is a breakdown in seconds by phase, in the order of RunPhases.
func phases(named ...any) []v1alpha1.RunPhase {
	var out []v1alpha1.RunPhase
	for i := 0; i < len(named); i += 2 {
		out = append(out, v1alpha1.RunPhase{Name: named[i].(v1alpha1.RunPhaseName), Duration: metav1.Duration{Duration: time.Duration(named[i+1].(int)) * time.Second}})
	}
	return out
}

// TestPhases: a run's lateness is split by the instants its Job, pod and
// node record, each cause of lateness in its own phase, and the phases add
// up to the lateness.
func TestPhases(t *testing.T) {
	for _, tc := range []struct {
		name  string
		times startTimes
		want  []v1alpha1.RunPhase
	}{{
		name:  "no wait beyond the usual: a node there, the image cached",
		times: startTimes{jobCreated: 0, jobAdmitted: ptr.To(0), podCreated: 1, scheduled: ptr.To(1), sandbox: ptr.To(2), started: 3},
		want:  phases(v1alpha1.PhaseJobController, 1, v1alpha1.PhasePodSandbox, 1, v1alpha1.PhaseImagePull, 1),
	}, {
		name:  "the controller was down for 40 s",
		times: startTimes{jobCreated: 40, jobAdmitted: ptr.To(40), podCreated: 40, scheduled: ptr.To(40), sandbox: ptr.To(41), started: 41},
		want:  phases(v1alpha1.PhaseController, 40, v1alpha1.PhasePodSandbox, 1),
	}, {
		name:  "waiting 30 s in a full concurrency group",
		times: startTimes{jobCreated: 0, jobAdmitted: ptr.To(30), podCreated: 30, scheduled: ptr.To(31), sandbox: ptr.To(31), started: 32},
		want:  phases(v1alpha1.PhaseConcurrencyGroup, 30, v1alpha1.PhaseScheduling, 1, v1alpha1.PhaseImagePull, 1),
	}, {
		name: "a node provisioned for the pod: created 4 s after it, Ready 60 s later",
		times: startTimes{jobCreated: 0, jobAdmitted: ptr.To(0), podCreated: 1, nodeCreated: ptr.To(5), nodeReady: ptr.To(65),
			scheduled: ptr.To(66), sandbox: ptr.To(68), started: 70},
		want: phases(v1alpha1.PhaseJobController, 1, v1alpha1.PhaseNode, 64, v1alpha1.PhaseScheduling, 1, v1alpha1.PhasePodSandbox, 2, v1alpha1.PhaseImagePull, 2),
	}, {
		name: "a node that was there before the pod is no wait for a node",
		times: startTimes{jobCreated: 0, jobAdmitted: ptr.To(0), podCreated: 0, nodeCreated: ptr.To(-300), nodeReady: ptr.To(-250),
			scheduled: ptr.To(20), sandbox: ptr.To(20), started: 21},
		want: phases(v1alpha1.PhaseScheduling, 20, v1alpha1.PhaseImagePull, 1),
	}, {
		name:  "the node not read (no permission): its wait counts as scheduling",
		times: startTimes{jobCreated: 0, jobAdmitted: ptr.To(0), podCreated: 0, scheduled: ptr.To(60), sandbox: ptr.To(61), started: 62},
		want:  phases(v1alpha1.PhaseScheduling, 60, v1alpha1.PhasePodSandbox, 1, v1alpha1.PhaseImagePull, 1),
	}, {
		name:  "a slow image pull",
		times: startTimes{jobCreated: 0, jobAdmitted: ptr.To(0), podCreated: 0, scheduled: ptr.To(0), sandbox: ptr.To(1), started: 48},
		want:  phases(v1alpha1.PhasePodSandbox, 1, v1alpha1.PhaseImagePull, 47),
	}, {
		name: "two init containers, the images pulled before each and before the container",
		times: startTimes{jobCreated: 0, jobAdmitted: ptr.To(0), podCreated: 0, scheduled: ptr.To(0), sandbox: ptr.To(1),
			inits: [][2]int{{3, 13}, {14, 20}}, started: 25},
		want: phases(v1alpha1.PhasePodSandbox, 1, v1alpha1.PhaseImagePull, 2+1+5, v1alpha1.PhaseInitContainers, 10+6),
	}, {
		name: "a sidecar init container counts until it started",
		times: startTimes{jobCreated: 0, jobAdmitted: ptr.To(0), podCreated: 0, scheduled: ptr.To(0), sandbox: ptr.To(1),
			inits: [][2]int{{3, 3}}, sidecarStartedOnly: true, started: 4},
		want: phases(v1alpha1.PhasePodSandbox, 1, v1alpha1.PhaseImagePull, 3),
	}, {
		name: "warmed up early: the Job and pod before the run's time, its container started on time",
		times: startTimes{jobCreated: -90, jobAdmitted: ptr.To(-90), podCreated: -89, scheduled: ptr.To(-60), sandbox: ptr.To(-58),
			inits: [][2]int{{-55, -52}}, started: -50},
		want: nil,
	}, {
		name: "warmed up, but the pod waited for its node past the run's time",
		times: startTimes{jobCreated: -60, jobAdmitted: ptr.To(-60), podCreated: -60, nodeCreated: ptr.To(-55), nodeReady: ptr.To(12),
			scheduled: ptr.To(13), sandbox: ptr.To(14), started: 15},
		want: phases(v1alpha1.PhaseNode, 12, v1alpha1.PhaseScheduling, 1, v1alpha1.PhasePodSandbox, 1, v1alpha1.PhaseImagePull, 1),
	}, {
		name:  "clocks apart: the Job's admission written after its pod's creation is bounded by it",
		times: startTimes{jobCreated: 2, jobAdmitted: ptr.To(5), podCreated: 4, scheduled: ptr.To(4), sandbox: ptr.To(5), started: 6},
		want:  phases(v1alpha1.PhaseController, 2, v1alpha1.PhaseConcurrencyGroup, 2, v1alpha1.PhasePodSandbox, 1, v1alpha1.PhaseImagePull, 1),
	}, {
		name:  "nothing recorded but the creations and the start: the rest is the kubelet's",
		times: startTimes{jobCreated: 1, podCreated: 2, started: 9},
		want:  phases(v1alpha1.PhaseController, 1, v1alpha1.PhaseJobController, 1, v1alpha1.PhaseImagePull, 7),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			job, pod, node := tc.times.objects()
			start, ok := MeasureStart(job, []*corev1.Pod{pod}, node)
			if !ok {
				t.Fatal("MeasureStart found no start")
			}
			if !reflect.DeepEqual(start.Phases, tc.want) {
				t.Errorf("phases %v, want %v", start.Phases, tc.want)
			}
			if sum := start.PhasesTotal(); sum != start.Lateness.Duration {
				t.Errorf("phases add up to %s, lateness %s", sum, start.Lateness.Duration)
			}
		})
	}
}

// TestPhasesAddUp: whatever order and values the recorded instants have
// (clocks apart, fields unset), the phases are never negative and add up
// to the lateness.
func TestPhasesAddUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	instant := func() int { return rng.IntN(200) - 60 }
	maybe := func() *int {
		if rng.IntN(4) == 0 {
			return nil
		}
		return ptr.To(instant())
	}
	for i := range 5000 {
		times := startTimes{jobCreated: instant(), jobAdmitted: maybe(), podCreated: instant(), nodeCreated: maybe(), nodeReady: maybe(),
			scheduled: maybe(), sandbox: maybe(), started: instant()}
		for range rng.IntN(3) {
			times.inits = append(times.inits, [2]int{instant(), instant()})
		}
		job, pod, node := times.objects()
		start, ok := MeasureStart(job, []*corev1.Pod{pod}, node)
		if !ok {
			t.Fatalf("case %d %+v: no start", i, times)
		}
		for _, p := range start.Phases {
			if p.Duration.Duration <= 0 {
				t.Fatalf("case %d %+v: phase %s of %s", i, times, p.Name, p.Duration.Duration)
			}
		}
		if sum := start.PhasesTotal(); sum != start.Lateness.Duration {
			t.Fatalf("case %d %+v: phases %v add up to %s, lateness %s", i, times, start.Phases, sum, start.Lateness.Duration)
		}
	}
}

// TestNodeToRead: the node is read only for a pod that waited seconds to
// be scheduled, the one case where a node provisioned for it can explain
// the wait.
func TestNodeToRead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		scheduled *int
		want      string
	}{
		{"scheduled at once", ptr.To(1), ""},
		{"scheduled after 2 s", ptr.To(2), "node-a"},
		{"scheduled after a minute", ptr.To(60), "node-a"},
		{"no PodScheduled condition", nil, ""},
	} {
		job, pod, _ := startTimes{podCreated: 0, scheduled: tc.scheduled, started: 70}.objects()
		if got := NodeToRead(job, []*corev1.Pod{pod}); got != tc.want {
			t.Errorf("%s: NodeToRead = %q, want %q", tc.name, got, tc.want)
		}
	}
	job, pod, _ := startTimes{podCreated: 0, scheduled: ptr.To(60), started: 70}.objects()
	pod.OwnerReferences = nil
	if got := NodeToRead(job, []*corev1.Pod{pod}); got != "" {
		t.Errorf("a pod of another Job: NodeToRead = %q, want none", got)
	}
}

// TestRecordRunStart: the recent starts keep the newest first, at most
// MaxRecentRunStarts, and a run measured again is not listed twice.
func TestRecordRunStart(t *testing.T) {
	start := func(s int) v1alpha1.RunStart { return v1alpha1.RunStart{ScheduledTime: at(s)} }
	scheduled := func(starts []v1alpha1.RunStart) []int {
		var out []int
		for _, s := range starts {
			out = append(out, int(s.ScheduledTime.Sub(runAt)/time.Second))
		}
		return out
	}
	var recent []v1alpha1.RunStart
	for s := range 7 {
		recent = RecordRunStart(recent, start(s*60))
	}
	if got, want := scheduled(recent), []int{360, 300, 240, 180, 120}; !reflect.DeepEqual(got, want) {
		t.Errorf("after 7 runs: %v, want %v", got, want)
	}
	if got, want := scheduled(RecordRunStart(recent, start(360))), []int{360, 300, 240, 180, 120}; !reflect.DeepEqual(got, want) {
		t.Errorf("the latest run again: %v, want %v", got, want)
	}
}
