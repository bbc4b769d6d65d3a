//go:build integration

package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// cronJobMutation makes a valid CronJob spec malformed; pod and container
// mutate its pod template and first container.
type cronJobMutation struct {
	name string
	// atElement: the CRD's schema, which keeps Kubernetes' list-map
	// markers for server-side apply, reports a duplicate name at the list
	// element; the CronJob's validation at the element's name.
	atElement bool
	cronJob   func(*batchv1.CronJobSpec)
	pod       func(*corev1.PodSpec)
	container func(*corev1.Container)
}

// malformedSpecs are specs the API server refuses for a batch/v1 CronJob
// (the test checks that it does). The ScheduledJob with the same spec must
// be refused too, with the same field paths.
var malformedSpecs = []cronJobMutation{
	// The CronJob's own fields.
	{name: "empty schedule", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "" }},
	{name: "minute 61", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "61 * * * *" }},
	{name: "four fields", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "* * * *" }},
	{name: "six fields", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "0 * * * * *" }},
	{name: "hour 24", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "0 24 * * *" }},
	{name: "day 0", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "0 0 0 * *" }},
	{name: "month 13", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "0 0 1 13 *" }},
	{name: "weekday 8", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "0 0 * * 8" }},
	{name: "step 0", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "*/0 * * * *" }},
	{name: "reversed range", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "30-10 * * * *" }},
	{name: "word", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "often" }},
	{name: "unknown descriptor", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "@fortnightly" }},
	{name: "TZ in schedule", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "TZ=UTC 0 0 * * *" }},
	{name: "CRON_TZ in schedule", cronJob: func(s *batchv1.CronJobSpec) { s.Schedule = "CRON_TZ=Europe/Paris 0 0 * * *" }},
	{name: "empty time zone", cronJob: func(s *batchv1.CronJobSpec) { s.TimeZone = ptr.To("") }},
	{name: "Local time zone", cronJob: func(s *batchv1.CronJobSpec) { s.TimeZone = ptr.To("Local") }},
	{name: "unknown time zone", cronJob: func(s *batchv1.CronJobSpec) { s.TimeZone = ptr.To("Mars/Olympus") }},
	{name: "time zone with ..", cronJob: func(s *batchv1.CronJobSpec) { s.TimeZone = ptr.To("../etc/passwd") }},
	{name: "time zone with a space", cronJob: func(s *batchv1.CronJobSpec) { s.TimeZone = ptr.To("Europe/New York") }},
	{name: "negative starting deadline", cronJob: func(s *batchv1.CronJobSpec) { s.StartingDeadlineSeconds = ptr.To[int64](-1) }},
	{name: "unknown concurrency policy", cronJob: func(s *batchv1.CronJobSpec) { s.ConcurrencyPolicy = "Sometimes" }},
	{name: "negative successful history", cronJob: func(s *batchv1.CronJobSpec) { s.SuccessfulJobsHistoryLimit = ptr.To[int32](-1) }},
	{name: "negative failed history", cronJob: func(s *batchv1.CronJobSpec) { s.FailedJobsHistoryLimit = ptr.To[int32](-1) }},
	// The Job template.
	{name: "negative parallelism", cronJob: func(s *batchv1.CronJobSpec) { s.JobTemplate.Spec.Parallelism = ptr.To[int32](-1) }},
	{name: "negative completions", cronJob: func(s *batchv1.CronJobSpec) { s.JobTemplate.Spec.Completions = ptr.To[int32](-1) }},
	{name: "negative active deadline", cronJob: func(s *batchv1.CronJobSpec) { s.JobTemplate.Spec.ActiveDeadlineSeconds = ptr.To[int64](-1) }},
	{name: "negative backoff limit", cronJob: func(s *batchv1.CronJobSpec) { s.JobTemplate.Spec.BackoffLimit = ptr.To[int32](-1) }},
	{name: "negative TTL", cronJob: func(s *batchv1.CronJobSpec) { s.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1) }},
	{name: "unknown completion mode", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.CompletionMode = ptr.To[batchv1.CompletionMode]("Sideways")
	}},
	{name: "Indexed without completions", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}},
	{name: "backoff limit per index without Indexed", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	}},
	{name: "max failed indexes without backoff limit per index", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		s.JobTemplate.Spec.Completions = ptr.To[int32](3)
		s.JobTemplate.Spec.MaxFailedIndexes = ptr.To[int32](1)
	}},
	{name: "max failed indexes above completions", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		s.JobTemplate.Spec.Completions = ptr.To[int32](3)
		s.JobTemplate.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		s.JobTemplate.Spec.MaxFailedIndexes = ptr.To[int32](5)
	}},
	{name: "selector", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
	}},
	{name: "manual selector", cronJob: func(s *batchv1.CronJobSpec) { s.JobTemplate.Spec.ManualSelector = ptr.To(true) }},
	{name: "pod failure policy with OnFailure", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		s.JobTemplate.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}},
		}}}
	}},
	{name: "pod failure policy rule without requirement", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore}}}
	}},
	{name: "pod failure policy exit code 0 with In", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{0}},
		}}}
	}},
	{name: "success policy without Indexed", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
	}},
	{name: "unknown pod replacement policy", cronJob: func(s *batchv1.CronJobSpec) {
		s.JobTemplate.Spec.PodReplacementPolicy = ptr.To[batchv1.PodReplacementPolicy]("Sometimes")
	}},
	{name: "managedBy not a domain path", cronJob: func(s *batchv1.CronJobSpec) { s.JobTemplate.Spec.ManagedBy = ptr.To("not a domain") }},
	{name: "pod label key", cronJob: func(s *batchv1.CronJobSpec) { s.JobTemplate.Spec.Template.Labels = map[string]string{"-bad": "x"} }},
	// The pod.
	{name: "restartPolicy Always", pod: func(p *corev1.PodSpec) { p.RestartPolicy = corev1.RestartPolicyAlways }},
	{name: "unknown restartPolicy", pod: func(p *corev1.PodSpec) { p.RestartPolicy = "Sometimes" }},
	{name: "no containers", pod: func(p *corev1.PodSpec) { p.Containers = nil }},
	{name: "duplicate container names", atElement: true, pod: func(p *corev1.PodSpec) { p.Containers = append(p.Containers, p.Containers[0]) }},
	{name: "init container named like a container", pod: func(p *corev1.PodSpec) { p.InitContainers = []corev1.Container{p.Containers[0]} }},
	{name: "init container without image", pod: func(p *corev1.PodSpec) { p.InitContainers = []corev1.Container{{Name: "init"}} }},
	{name: "node selector key", pod: func(p *corev1.PodSpec) { p.NodeSelector = map[string]string{"bad key": "x"} }},
	{name: "toleration operator", pod: func(p *corev1.PodSpec) { p.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Maybe"}} }},
	{name: "toleration Exists with a value", pod: func(p *corev1.PodSpec) {
		p.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}}
	}},
	{name: "toleration effect", pod: func(p *corev1.PodSpec) { p.Tolerations = []corev1.Toleration{{Key: "k", Effect: "Sometimes"}} }},
	{name: "empty node selector terms", pod: func(p *corev1.PodSpec) {
		p.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}}
	}},
	{name: "pod affinity without topology key", pod: func(p *corev1.PodSpec) {
		p.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		}}}}
	}},
	{name: "topology spread maxSkew 0", pod: func(p *corev1.PodSpec) {
		p.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 0, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}}
	}},
	{name: "topology spread unknown action", pod: func(p *corev1.PodSpec) {
		p.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: "Sometimes"}}
	}},
	{name: "topology spread without key", pod: func(p *corev1.PodSpec) {
		p.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule}}
	}},
	{name: "unknown DNS policy", pod: func(p *corev1.PodSpec) { p.DNSPolicy = "Sometimes" }},
	{name: "DNS policy None without config", pod: func(p *corev1.PodSpec) { p.DNSPolicy = corev1.DNSNone }},
	{name: "four nameservers", pod: func(p *corev1.PodSpec) {
		p.DNSPolicy = corev1.DNSNone
		p.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "1.0.0.1", "8.8.8.8", "8.8.4.4"}}
	}},
	{name: "hostname", pod: func(p *corev1.PodSpec) { p.Hostname = "Not_A_Name" }},
	{name: "subdomain", pod: func(p *corev1.PodSpec) { p.Subdomain = "Not_A_Name" }},
	{name: "service account name", pod: func(p *corev1.PodSpec) { p.ServiceAccountName = "Not A Name" }},
	{name: "pod active deadline 0", pod: func(p *corev1.PodSpec) { p.ActiveDeadlineSeconds = ptr.To[int64](0) }},
	{name: "runtime class name", pod: func(p *corev1.PodSpec) { p.RuntimeClassName = ptr.To("Not A Name") }},
	{name: "OS name", pod: func(p *corev1.PodSpec) { p.OS = &corev1.PodOS{Name: "plan9"} }},
	{name: "preemption policy", pod: func(p *corev1.PodSpec) { p.PreemptionPolicy = ptr.To[corev1.PreemptionPolicy]("Sometimes") }},
	{name: "host alias IP", pod: func(p *corev1.PodSpec) {
		p.HostAliases = []corev1.HostAlias{{IP: "not-an-ip", Hostnames: []string{"a"}}}
	}},
	{name: "readiness gate", pod: func(p *corev1.PodSpec) { p.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "bad type!"}} }},
	{name: "sysctl name", pod: func(p *corev1.PodSpec) {
		p.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "not a sysctl", Value: "1"}}}
	}},
	{name: "fsGroupChangePolicy", pod: func(p *corev1.PodSpec) {
		p.SecurityContext = &corev1.PodSecurityContext{FSGroupChangePolicy: ptr.To[corev1.PodFSGroupChangePolicy]("Sometimes")}
	}},
	{name: "pod runAsUser negative", pod: func(p *corev1.PodSpec) { p.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](-1)} }},
	{name: "seccomp type", pod: func(p *corev1.PodSpec) {
		p.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: "Sometimes"}}
	}},
	{name: "volume name", pod: func(p *corev1.PodSpec) {
		p.Volumes = []corev1.Volume{{Name: "Bad_Name", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}},
	{name: "duplicate volume names", atElement: true, pod: func(p *corev1.PodSpec) {
		v := corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
		p.Volumes = []corev1.Volume{v, v}
	}},
	{name: "volume with two sources", pod: func(p *corev1.PodSpec) {
		p.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/tmp"}}}}
	}},
	{name: "hostPath without path", pod: func(p *corev1.PodSpec) {
		p.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{}}}}
	}},
	{name: "secret volume without name", pod: func(p *corev1.PodSpec) {
		p.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}}}
	}},
	{name: "emptyDir negative size", pod: func(p *corev1.PodSpec) {
		p.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("-1Gi"))}}}}
	}},
	{name: "pod overhead without runtime class", pod: func(p *corev1.PodSpec) {
		p.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}
	}},
	// The first container.
	{name: "container without name", container: func(c *corev1.Container) { c.Name = "" }},
	{name: "container name", container: func(c *corev1.Container) { c.Name = "Main" }},
	{name: "container without image", container: func(c *corev1.Container) { c.Image = "" }},
	{name: "pull policy", container: func(c *corev1.Container) { c.ImagePullPolicy = "Sometimes" }},
	{name: "termination message policy", container: func(c *corev1.Container) { c.TerminationMessagePolicy = "Sometimes" }},
	{name: "port 0", container: func(c *corev1.Container) { c.Ports = []corev1.ContainerPort{{ContainerPort: 0}} }},
	{name: "port 70000", container: func(c *corev1.Container) { c.Ports = []corev1.ContainerPort{{ContainerPort: 70000}} }},
	{name: "port protocol", container: func(c *corev1.Container) { c.Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "XTP"}} }},
	{name: "duplicate port names", container: func(c *corev1.Container) {
		c.Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: 80}, {Name: "web", ContainerPort: 81}}
	}},
	{name: "port name", container: func(c *corev1.Container) { c.Ports = []corev1.ContainerPort{{Name: "Not A Name", ContainerPort: 80}} }},
	{name: "env name", container: func(c *corev1.Container) { c.Env = []corev1.EnvVar{{Name: ""}} }},
	{name: "env value and valueFrom", container: func(c *corev1.Container) {
		c.Env = []corev1.EnvVar{{Name: "A", Value: "x", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	}},
	{name: "env field path", container: func(c *corev1.Container) {
		c.Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nothing"}}}}
	}},
	{name: "envFrom prefix", container: func(c *corev1.Container) {
		c.EnvFrom = []corev1.EnvFromSource{{Prefix: "=", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}}
	}},
	{name: "requests above limits", container: func(c *corev1.Container) {
		c.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}, Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	}},
	{name: "negative request", container: func(c *corev1.Container) {
		c.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1Mi")}}
	}},
	{name: "unqualified resource name", container: func(c *corev1.Container) {
		c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"gpus": resource.MustParse("1")}}
	}},
	{name: "volume mount of no volume", container: func(c *corev1.Container) {
		c.VolumeMounts = []corev1.VolumeMount{{Name: "nothing", MountPath: "/data"}}
	}},
	{name: "liveness probe without handler", container: func(c *corev1.Container) { c.LivenessProbe = &corev1.Probe{} }},
	{name: "probe with negative period", container: func(c *corev1.Container) {
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: -1}
	}},
	{name: "lifecycle without handler", container: func(c *corev1.Container) {
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{}}
	}},
	{name: "container runAsUser negative", container: func(c *corev1.Container) {
		c.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](-1)}
	}},
	{name: "privileged without escalation", container: func(c *corev1.Container) {
		c.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false)}
	}},
	{name: "procMount", container: func(c *corev1.Container) {
		c.SecurityContext = &corev1.SecurityContext{ProcMount: ptr.To[corev1.ProcMountType]("Sometimes")}
	}},
	{name: "resize policy", container: func(c *corev1.Container) {
		c.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: "Sometimes"}}
	}},
}

func validCronJobSpec() batchv1.CronJobSpec {
	return batchv1.CronJobSpec{
		Schedule: "*/5 * * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
		}}}},
	}
}

func (m cronJobMutation) apply(spec *batchv1.CronJobSpec) {
	if m.cronJob != nil {
		m.cronJob(spec)
	}
	if m.pod != nil {
		m.pod(&spec.JobTemplate.Spec.Template.Spec)
	}
	if m.container != nil {
		m.container(&spec.JobTemplate.Spec.Template.Spec.Containers[0])
	}
}

// scheduledJobWith is the ScheduledJob whose spec is the CronJob spec.
func scheduledJobWith(name string, spec batchv1.CronJobSpec) *v1alpha1.ScheduledJob {
	return &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1alpha1.ScheduledJobSpec{
			Schedule:                   spec.Schedule,
			TimeZone:                   spec.TimeZone,
			StartingDeadlineSeconds:    spec.StartingDeadlineSeconds,
			ConcurrencyPolicy:          v1alpha1.ConcurrencyPolicy(spec.ConcurrencyPolicy),
			Suspend:                    spec.Suspend,
			JobTemplate:                spec.JobTemplate,
			SuccessfulJobsHistoryLimit: spec.SuccessfulJobsHistoryLimit,
			FailedJobsHistoryLimit:     spec.FailedJobsHistoryLimit,
		},
	}
}

// refusedFields is the sorted, deduplicated field paths of a refusal.
func refusedFields(err error) []string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var fields []string
	for _, cause := range status.Status().Details.Causes {
		fields = append(fields, cause.Field)
	}
	slices.Sort(fields)
	return slices.Compact(fields)
}

// TestAdmissionParityWithCronJob: every spec the API server refuses for a
// CronJob, it refuses for the ScheduledJob with the same spec, at the same
// field paths.
func TestAdmissionParityWithCronJob(t *testing.T) {
	if len(malformedSpecs) < 80 {
		t.Fatalf("%d malformed specs; the table promises at least 80", len(malformedSpecs))
	}
	ctx := context.Background()
	for i, m := range malformedSpecs {
		t.Run(m.name, func(t *testing.T) {
			spec := validCronJobSpec()
			m.apply(&spec)
			name := fmt.Sprintf("parity-%d", i)
			cronJobErr := apiClient.Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: spec}, client.DryRunAll)
			if cronJobErr == nil {
				t.Fatal("the API server accepts this CronJob: not a malformed spec")
			}
			sjErr := apiClient.Create(ctx, scheduledJobWith(name, spec), client.DryRunAll)
			if sjErr == nil {
				t.Fatalf("ScheduledJob accepted; the CronJob was refused: %v", cronJobErr)
			}
			want := refusedFields(cronJobErr)
			if m.atElement {
				for i, path := range want {
					want[i] = strings.TrimSuffix(path, ".name")
				}
			}
			if got := refusedFields(sjErr); !slices.Equal(want, got) {
				t.Errorf("ScheduledJob refused at %q, CronJob at %q\n  ScheduledJob: %v\n  CronJob: %v", got, want, sjErr, cronJobErr)
			}
		})
	}
}
