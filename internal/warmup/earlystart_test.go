package warmup

import (
	"reflect"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

func TestInContainerWait(t *testing.T) {
	withCommand := func(name string) corev1.Container {
		c := container(name, nil)
		c.Command = []string{"/app/report"}
		return c
	}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}}
	tests := map[string]struct {
		change func(*corev1.PodSpec)
		want   string // why the pod is held in an init container
	}{
		"every container names its command": {func(*corev1.PodSpec) {}, ""},
		"a readiness probe does no harm":    {func(s *corev1.PodSpec) { s.Containers[1].ReadinessProbe = probe }, ""},
		"a container runs the image's entrypoint": {func(s *corev1.PodSpec) { s.Containers[1].Command = nil; s.Containers[1].Args = []string{"--daily"} },
			"containers[1] (sidecar) names no command"},
		"a liveness probe would kill it during the wait": {func(s *corev1.PodSpec) { s.Containers[0].LivenessProbe = probe }, "containers[0] (main) has a livenessProbe"},
		"a startup probe would kill it during the wait":  {func(s *corev1.PodSpec) { s.Containers[0].StartupProbe = probe }, "containers[0] (main) has a startupProbe"},
		"a postStart hook would run before the time": {func(s *corev1.PodSpec) {
			s.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
		}, "containers[0] (main) has a postStart hook"},
		"the pod's init containers run after the time": {func(s *corev1.PodSpec) { s.InitContainers = []corev1.Container{withCommand("setup")} }, "initContainers is set"},
		"a volume already has the wait volume's name":  {func(s *corev1.PodSpec) { s.Volumes = []corev1.Volume{{Name: waitVolume}} }, "volumes has one named ontime-wait"},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			spec := corev1.PodSpec{Containers: []corev1.Container{withCommand("main"), withCommand("sidecar")}}
			test.change(&spec)
			if got := v1alpha1.EarlyStartHeldInInitContainer(&spec); got != test.want {
				t.Errorf("EarlyStartHeldInInitContainer = %q, want %q", got, test.want)
			}
			if got := InContainerWait(&spec); got != (test.want == "") {
				t.Errorf("InContainerWait = %v, want %v", got, test.want == "")
			}
		})
	}
}

// TestHoldUntilInContainers: when the containers name their commands, the
// init container installs ontime and exits, and each container waits in
// it, then execs its own command and arguments.
func TestHoldUntilInContainers(t *testing.T) {
	owner := testOwner()
	run := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	job := &batchv1.Job{Spec: *owner.Template.Spec.DeepCopy()}
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
	main := &job.Spec.Template.Spec.Containers[0]
	main.Command = []string{"/app/report", "--daily"}
	main.Args = []string{"--out", "$(OUT)"}
	main.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	HoldUntil(job, owner, run, run.Add(-time.Minute), "ghcr.io/ontime-dev/ontime:v1")

	spec := job.Spec.Template.Spec
	if len(spec.InitContainers) != 1 {
		t.Fatalf("init containers %v, want the installer alone", spec.InitContainers)
	}
	install := spec.InitContainers[0]
	if want := []string{"--until", "2026-11-24T10:00:00Z", "--install", "/.ontime-wait/ontime-wait"}; install.Name != WaitContainerName ||
		install.Image != "ghcr.io/ontime-dev/ontime:v1" || !reflect.DeepEqual(install.Command, []string{"/ontime-wait"}) || !reflect.DeepEqual(install.Args, want) {
		t.Errorf("init container %s %s %v %v, want %s running /ontime-wait %v", install.Name, install.Image, install.Command, install.Args, WaitContainerName, want)
	}
	if want := []corev1.VolumeMount{{Name: "ontime-wait", MountPath: "/.ontime-wait"}}; !reflect.DeepEqual(install.VolumeMounts, want) {
		t.Errorf("installer mounts %v, want %v", install.VolumeMounts, want)
	}
	main = &spec.Containers[0]
	if want := []string{"/.ontime-wait/ontime-wait"}; !reflect.DeepEqual(main.Command, want) {
		t.Errorf("command %v, want %v", main.Command, want)
	}
	if want := []string{"--until", "2026-11-24T10:00:00Z", "--", "/app/report", "--daily", "--out", "$(OUT)"}; !reflect.DeepEqual(main.Args, want) {
		t.Errorf("args %q, want %q", main.Args, want)
	}
	if want := []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "ontime-wait", MountPath: "/.ontime-wait", ReadOnly: true}}; !reflect.DeepEqual(main.VolumeMounts, want) {
		t.Errorf("mounts %v, want %v", main.VolumeMounts, want)
	}
	if want := []corev1.Volume{{Name: "ontime-wait", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}; !reflect.DeepEqual(spec.Volumes, want) {
		t.Errorf("volumes %v, want %v", spec.Volumes, want)
	}
	if got := *job.Spec.ActiveDeadlineSeconds; got != 600+60 {
		t.Errorf("activeDeadlineSeconds %d, want 600 + the 60 s wait", got)
	}
	if owner.Template.Spec.Template.Spec.Containers[0].Command != nil {
		t.Error("HoldUntil changed the template")
	}
}

// TestHoldUntilKeepsThePodFromDisruption (issue #20, item 4): the waiting
// pod asks autoscalers not to take its node away, and a disrupted pod does
// not count against backoffLimit, after the owner's own rules.
func TestHoldUntilKeepsThePodFromDisruption(t *testing.T) {
	run := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ignoreDisrupted := batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}}
	failOn42 := batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}}
	tooMany := make([]batchv1.PodFailurePolicyRule, maxPodFailurePolicyRules)
	for i := range tooMany {
		tooMany[i] = failOn42
	}
	tests := map[string]struct {
		restartPolicy corev1.RestartPolicy
		annotations   map[string]string
		policy        *batchv1.PodFailurePolicy
		wantPolicy    *batchv1.PodFailurePolicy
		wantAnnotated map[string]string
	}{
		"restartPolicy Never": {restartPolicy: corev1.RestartPolicyNever,
			wantPolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{ignoreDisrupted}}},
		"the owner's rules first": {restartPolicy: corev1.RestartPolicyNever, policy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{failOn42}},
			wantPolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{failOn42, ignoreDisrupted}}},
		"no room for another rule": {restartPolicy: corev1.RestartPolicyNever, policy: &batchv1.PodFailurePolicy{Rules: tooMany},
			wantPolicy: &batchv1.PodFailurePolicy{Rules: tooMany}},
		"restartPolicy OnFailure allows no podFailurePolicy": {restartPolicy: corev1.RestartPolicyOnFailure},
		"the owner's own annotation is kept": {restartPolicy: corev1.RestartPolicyNever, annotations: map[string]string{clusterAutoscalerSafeToEvict: "true"},
			wantPolicy:    &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{ignoreDisrupted}},
			wantAnnotated: map[string]string{karpenterDoNotDisrupt: "true", clusterAutoscalerSafeToEvict: "true"}},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			owner := testOwner()
			job := &batchv1.Job{Spec: *owner.Template.Spec.DeepCopy()}
			job.Spec.Template.Spec.RestartPolicy = test.restartPolicy
			job.Spec.Template.Annotations = test.annotations
			job.Spec.PodFailurePolicy = test.policy.DeepCopy()
			HoldUntil(job, owner, run, run.Add(-time.Minute), "ghcr.io/ontime-dev/ontime:v1")
			want := test.wantAnnotated
			if want == nil {
				want = map[string]string{karpenterDoNotDisrupt: "true", clusterAutoscalerSafeToEvict: "false"}
			}
			for k, v := range want {
				if got := job.Spec.Template.Annotations[k]; got != v {
					t.Errorf("annotation %s = %q, want %q", k, got, v)
				}
			}
			if !reflect.DeepEqual(job.Spec.PodFailurePolicy, test.wantPolicy) {
				t.Errorf("podFailurePolicy %+v, want %+v", job.Spec.PodFailurePolicy, test.wantPolicy)
			}
		})
	}
}

// TestMeasureStartOfAWaitingContainer: a container that waited in ontime
// wait ran before its time; the run started at its time, 0 s late.
func TestMeasureStartOfAWaitingContainer(t *testing.T) {
	run := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: "job-1",
		Annotations: map[string]string{v1alpha1.ScheduledTimestampAnnotation: run.Format(time.RFC3339)}}}
	pod := func(started time.Time) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{UID: "job-1", Controller: ptr.To(true)}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{
				Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}}},
		}
	}
	for _, test := range []struct {
		started      time.Time
		wantStart    time.Time
		wantLateness time.Duration
	}{
		{run.Add(-20 * time.Second), run, 0},
		{run.Add(3 * time.Second), run.Add(3 * time.Second), 3 * time.Second},
	} {
		got, ok := MeasureStart(job, []*corev1.Pod{pod(test.started)}, nil)
		if !ok || !got.StartTime.Time.Equal(test.wantStart) || got.Lateness.Duration != test.wantLateness {
			t.Errorf("container started %v: MeasureStart = %+v, %v; want start %v, %v late", test.started, got, ok, test.wantStart, test.wantLateness)
		}
	}
}
