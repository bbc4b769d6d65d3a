package warmup

import (
	"maps"
	"reflect"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

func resources(pairs ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		list[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return list
}

func container(name string, requests corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Image: "busybox", Resources: corev1.ResourceRequirements{Requests: requests}}
}

func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if other, ok := b[name]; !ok || q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

func TestEffectiveRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	tests := map[string]struct {
		spec corev1.PodSpec
		want corev1.ResourceList
	}{
		"sum of containers": {
			spec: corev1.PodSpec{Containers: []corev1.Container{container("a", resources("cpu", "500m", "memory", "1Gi")), container("b", resources("cpu", "250m"))}},
			want: resources("cpu", "750m", "memory", "1Gi"),
		},
		"largest init container wins over the sum": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container("migrate", resources("cpu", "2", "memory", "256Mi")), container("small", resources("cpu", "100m"))},
				Containers:     []corev1.Container{container("a", resources("cpu", "500m", "memory", "1Gi"))},
			},
			want: resources("cpu", "2", "memory", "1Gi"),
		},
		"sidecar runs beside the containers and later init containers": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					{Name: "proxy", Image: "proxy", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: resources("cpu", "100m")}},
					container("setup", resources("cpu", "1")),
				},
				Containers: []corev1.Container{container("a", resources("cpu", "500m"))},
			},
			want: resources("cpu", "1100m"),
		},
		"limits without requests count as requests": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "gpu", Image: "cuda",
				Resources: corev1.ResourceRequirements{Limits: resources("nvidia.com/gpu", "1", "memory", "8Gi")}}}},
			want: resources("nvidia.com/gpu", "1", "memory", "8Gi"),
		},
		"pod-level requests": {
			spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: resources("cpu", "3", "memory", "2Gi")},
				Containers: []corev1.Container{container("a", nil)}},
			want: resources("cpu", "3", "memory", "2Gi"),
		},
		"overhead left to admission": {
			spec: corev1.PodSpec{Overhead: resources("cpu", "250m"), Containers: []corev1.Container{container("a", resources("cpu", "1"))}},
			want: resources("cpu", "1"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := EffectiveRequests(&tc.spec); !equalResources(got, tc.want) {
				t.Errorf("EffectiveRequests = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodsPerRun(t *testing.T) {
	for _, tc := range []struct {
		parallelism, completions *int32
		want                     int32
	}{
		{nil, nil, 1},
		{ptr.To[int32](4), nil, 4},
		{ptr.To[int32](4), ptr.To[int32](2), 2},
		{ptr.To[int32](3), ptr.To[int32](10), 3},
		{ptr.To[int32](0), nil, 0},
		{nil, ptr.To[int32](5), 1},
	} {
		spec := batchv1.JobSpec{Parallelism: tc.parallelism, Completions: tc.completions}
		if got := PodsPerRun(&spec); got != tc.want {
			t.Errorf("parallelism %v, completions %v: %d pods, want %d", ptr.Deref(tc.parallelism, -1), ptr.Deref(tc.completions, -1), got, tc.want)
		}
	}
}

// testOwner is a ScheduledJob team-a/report whose runs place 3 pods.
func testOwner() Owner {
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: "team-a", UID: "uid-1"}}
	template := &batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Parallelism: ptr.To[int32](3),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "report"}, Annotations: map[string]string{"sidecar.example/inject": "true"}},
			Spec: corev1.PodSpec{
				Containers:   []corev1.Container{container("main", resources("cpu", "600m", "memory", "512Mi"))},
				NodeSelector: map[string]string{"karpenter.sh/nodepool": "batch"},
				Tolerations:  []corev1.Toleration{{Key: "batch", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}}}}}}},
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule,
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "report"}}}},
				RuntimeClassName:  ptr.To("gvisor"),
				SchedulerName:     "batch-scheduler",
				PriorityClassName: "batch-high",
				RestartPolicy:     corev1.RestartPolicyNever,
			},
		},
	}}
	return OwnerOf(sj, v1alpha1.GroupVersion.WithKind("ScheduledJob"), template)
}

func TestPlaceholdersAreShapedLikeTheRunsPods(t *testing.T) {
	owner := testOwner()
	run := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	opts := (&v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(10 * time.Minute)}).Settings()
	pods := Placeholders(owner, "report-29925240", run, opts)
	if len(pods) != 3 {
		t.Fatalf("%d placeholders, want one per pod of the run (parallelism 3)", len(pods))
	}
	template := &owner.Template.Spec.Template.Spec
	for i, pod := range pods {
		if want := PlaceholderName("report-29925240", i); pod.Name != want || pod.Namespace != "team-a" {
			t.Errorf("placeholder %d is %s/%s, want team-a/%s", i, pod.Namespace, pod.Name, want)
		}
		checkPlaceholderSpec(t, &pod.Spec, template)
		checkPlaceholderMetadata(t, pod)
	}
	// The placeholders share no map with the template, which the cache holds.
	pods[0].Spec.NodeSelector["changed"] = "yes"
	if _, shared := template.NodeSelector["changed"]; shared {
		t.Error("a placeholder shares its nodeSelector map with the template")
	}
}

// checkPlaceholderSpec: one pause container requesting what one of the
// run's pods requests, placed where the run's pods may go.
func checkPlaceholderSpec(t *testing.T, spec, template *corev1.PodSpec) {
	t.Helper()
	if len(spec.Containers) != 1 || spec.Containers[0].Image != v1alpha1.DefaultPlaceholderImage {
		t.Fatalf("containers %+v, want one pause container", spec.Containers)
	}
	res := spec.Containers[0].Resources
	if want := resources("cpu", "600m", "memory", "512Mi"); !equalResources(res.Requests, want) || !equalResources(res.Limits, want) {
		t.Errorf("resources %+v, want requests and limits %v", res, want)
	}
	for _, check := range []struct {
		what      string
		got, want any
	}{
		{"nodeSelector", spec.NodeSelector, template.NodeSelector},
		{"affinity", spec.Affinity, template.Affinity},
		{"tolerations", spec.Tolerations, template.Tolerations},
		{"topologySpreadConstraints", spec.TopologySpreadConstraints, template.TopologySpreadConstraints},
		{"runtimeClassName", spec.RuntimeClassName, template.RuntimeClassName},
		{"schedulerName", spec.SchedulerName, template.SchedulerName},
		{"priorityClassName", spec.PriorityClassName, v1alpha1.DefaultPlaceholderPriorityClass},
		{"terminationGracePeriodSeconds", spec.TerminationGracePeriodSeconds, ptr.To[int64](0)},
		{"automountServiceAccountToken", spec.AutomountServiceAccountToken, ptr.To(false)},
	} {
		if !reflect.DeepEqual(check.got, check.want) {
			t.Errorf("%s = %v, want %v", check.what, check.got, check.want)
		}
	}
}

// checkPlaceholderMetadata: the run's pod labels plus ontime's, the
// autoscalers' do-not-disrupt annotations, owned by the ScheduledJob.
func checkPlaceholderMetadata(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	wantLabels := map[string]string{"app": "report", v1alpha1.WarmUpLabel: "placeholder", v1alpha1.OwnerKindLabel: "ScheduledJob",
		v1alpha1.OwnerNameLabel: "report", v1alpha1.OwnerUIDLabel: "uid-1", v1alpha1.RunLabel: "29925240"}
	if !maps.Equal(pod.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", pod.Labels, wantLabels)
	}
	wantAnnotations := map[string]string{"karpenter.sh/do-not-disrupt": "true", "cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
	if !maps.Equal(pod.Annotations, wantAnnotations) {
		t.Errorf("annotations %v, want %v (not the template's)", pod.Annotations, wantAnnotations)
	}
	if owner := metav1.GetControllerOf(pod); owner == nil || owner.UID != "uid-1" || owner.Kind != "ScheduledJob" {
		t.Errorf("controller %+v, want the ScheduledJob", owner)
	}
}

func TestPlaceholderOptions(t *testing.T) {
	opts := (&v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(time.Minute), Placeholder: &v1alpha1.PlaceholderWarmUp{
		PriorityClassName: "warm", Image: "mirror.example/pause:3.10"}}).Settings()
	cronJob := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns", UID: "cj"}}
	owner := OwnerOf(cronJob, batchv1.SchemeGroupVersion.WithKind("CronJob"), &cronJob.Spec.JobTemplate)
	pod := Placeholders(owner, "nightly-1", time.Unix(60, 0), opts)[0]
	if ref := pod.OwnerReferences[0]; ref.Kind != "CronJob" || ref.Controller != nil {
		t.Errorf("owner reference %+v, want the CronJob as a non-controlling owner", ref)
	}
	if pod.Spec.PriorityClassName != "warm" || pod.Spec.Containers[0].Image != "mirror.example/pause:3.10" {
		t.Errorf("priority class %q, image %q", pod.Spec.PriorityClassName, pod.Spec.Containers[0].Image)
	}
}

func TestHoldUntil(t *testing.T) {
	owner := testOwner()
	run := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	job := &batchv1.Job{Spec: *owner.Template.Spec.DeepCopy()}
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
	job.Spec.Template.Spec.InitContainers = []corev1.Container{container("setup", nil)}
	HoldUntil(job, owner, run, run.Add(-9*time.Minute-30*time.Second), "ghcr.io/ontime-dev/ontime:v1")
	pod := job.Spec.Template
	if names := []string{pod.Spec.InitContainers[0].Name, pod.Spec.InitContainers[1].Name}; names[0] != WaitContainerName || names[1] != "setup" {
		t.Errorf("init containers %v, want the wait first", names)
	}
	wait := pod.Spec.InitContainers[0]
	if want := []string{"--until", "2026-11-24T10:00:00Z"}; wait.Image != "ghcr.io/ontime-dev/ontime:v1" || !reflect.DeepEqual(wait.Command, []string{"/ontime-wait"}) || !reflect.DeepEqual(wait.Args, want) {
		t.Errorf("wait container %s %v %v, want /ontime-wait with args %v", wait.Image, wait.Command, wait.Args, want)
	}
	if pod.Annotations[v1alpha1.ReleaseAtAnnotation] != "2026-11-24T10:00:00Z" || pod.Labels[v1alpha1.WarmUpLabel] != "early-start" || pod.Labels["app"] != "report" {
		t.Errorf("pod labels %v, annotations %v", pod.Labels, pod.Annotations)
	}
	if got := *job.Spec.ActiveDeadlineSeconds; got != 600+570 {
		t.Errorf("activeDeadlineSeconds %d, want 600 + the 570 s wait", got)
	}
	if owner.Template.Spec.Template.Spec.InitContainers != nil {
		t.Error("HoldUntil changed the template")
	}
}

func TestFirstStart(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(int64(s), 0)) }
	pods := []*corev1.Pod{
		{Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: at(10)}}}},
			ContainerStatuses:     []corev1.ContainerStatus{{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(105)}}}},
		}},
		{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: at(102)}}}}}},
		{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}},
	}
	if got, ok := FirstStart(pods); !ok || !got.Equal(time.Unix(102, 0)) {
		t.Errorf("FirstStart = %v, %v; want the finished pod's start at 102 (init containers do not count)", got, ok)
	}
	if _, ok := FirstStart(pods[2:]); ok {
		t.Error("FirstStart found a start among pods that have not started")
	}
}
