package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WarmUp says how to bring capacity up before each run.
type WarmUp struct {
	// lead is how long before each run warm-up begins, as a duration such
	// as "90s", "10m" or "1h". With lead 10m, warm-up for a 10:00 run
	// begins at 09:50 (in elapsed time: across a daylight-saving change
	// too). Choose at least the time your autoscaler takes to make a node
	// ready (Karpenter about 1 minute, cluster-autoscaler 2 to 5 minutes,
	// GPU nodes 10 minutes or more) plus a margin; capacity is held, and
	// paid for, from then until the run starts. From 30s to 24h. With
	// EarlyStart, lead must be shorter than the shortest interval between
	// runs; with Placeholder a longer lead is allowed but warm-up for a
	// run begins only once the run before it has started. "Auto" learns
	// the lead from the capacity-ready times ontime measures: the first
	// warm-up uses maxLead, later ones the last measured provisioning time
	// times a margin that grows by 25 points after a late run and shrinks
	// by a tenth after each run on time (from 125 %, between 120 % and
	// 300 %), within minLead and maxLead. ScheduledJobs with lead Auto
	// whose pods land on the same nodes (same nodeSelector, required node
	// affinity, tolerations and extended resources) share measurements:
	// the newest sets the next lead, so a new one starts from its pool's
	// lead. status.warmUp.lead says which lead was used and why. Auto is for Placeholder and EarlyStart: an
	// autoscaler's CapacityBuffer report does not say when nodes are
	// Ready.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(Auto|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	Lead Lead `json:"lead"`

	// minLead bounds an Auto lead from below, as a duration such as "30s".
	// Default 30s; from 30s to 24h.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	MinLead *metav1.Duration `json:"minLead,omitempty"`

	// maxLead bounds an Auto lead from above, and is the first warm-up's
	// lead, as a duration such as "30m". Default 30m; from minLead to
	// 24h. With EarlyStart it must be shorter than the shortest interval
	// between runs.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	MaxLead *metav1.Duration `json:"maxLead,omitempty"`

	// strategy is how capacity is brought up. Placeholder (default) creates
	// low-priority pods shaped like the run's pods at lead before the run;
	// the autoscaler adds nodes for them and the run's pods, created at the
	// scheduled time exactly as without warm-up, take their place.
	// EarlyStart creates the run's Job lead early and holds its pods until
	// the scheduled time: when every container names its command (and has
	// no liveness or startup probe, no postStart hook, and the pod no init
	// containers), the containers start during the lead and `ontime-wait`
	// execs their command at the scheduled time, within milliseconds;
	// otherwise an init container holds the pod and its containers start
	// a few seconds after the time. Choose it where placeholder pods are
	// not allowed, or to pull images ahead of the run. CapacityBuffer
	// creates, at lead before the run, a PodTemplate shaped like the run's
	// pods and a CapacityBuffer (autoscaling.x-k8s.io, SIG Autoscaling's
	// API) asking the autoscaler for that many pods' worth of capacity:
	// no pod runs, and the run's pods have nothing to preempt. It needs an
	// autoscaler that implements the API (Karpenter with the feature gate
	// CapacityBuffer=true, cluster-autoscaler with its capacity buffer
	// controller); where the API is not served, the CapacityReady
	// condition says so and runs start as without warm-up. See
	// docs/warmup.md for the trade-offs.
	// +kubebuilder:default=Placeholder
	// +optional
	Strategy WarmUpStrategy `json:"strategy,omitempty"`

	// placeholder tunes the Placeholder strategy, and the PodTemplate and
	// hold of CapacityBuffer.
	// +optional
	Placeholder *PlaceholderWarmUp `json:"placeholder,omitempty"`
}

// WarmUpStrategy is how capacity is brought up before a run.
// +kubebuilder:validation:Enum=Placeholder;EarlyStart;CapacityBuffer
type WarmUpStrategy string

const (
	// WarmUpPlaceholder creates placeholder pods shaped like the run's
	// pods, which the run's pods preempt.
	WarmUpPlaceholder WarmUpStrategy = "Placeholder"
	// WarmUpEarlyStart creates the run's Job early, its pods held until
	// the scheduled time by `ontime-wait`, in their containers or in an
	// init container.
	WarmUpEarlyStart WarmUpStrategy = "EarlyStart"
	// WarmUpCapacityBuffer asks the autoscaler for capacity with a
	// CapacityBuffer of a PodTemplate shaped like the run's pods.
	WarmUpCapacityBuffer WarmUpStrategy = "CapacityBuffer"
)

// PlaceholderWarmUp tunes placeholder pods.
type PlaceholderWarmUp struct {
	// priorityClassName is the PriorityClass of the placeholder pods.
	// Default: the controller's --placeholder-priority-class, itself
	// "ontime-placeholder" (value -5, preemptionPolicy Never, which
	// config/ and the chart install) unless set. Its value must be below the priority of the
	// run's pods, so that they preempt the placeholders, and not below
	// -10, or cluster-autoscaler treats the placeholders as expendable and
	// adds no node for them.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// image is what placeholder containers run. Default: the controller's
	// --placeholder-image, itself "registry.k8s.io/pause:3.10" unless set;
	// where nodes cannot reach registry.k8s.io, set the flag to a mirror
	// once for every ScheduledJob and annotated CronJob, or this field for
	// one ScheduledJob.
	// +optional
	Image string `json:"image,omitempty"`

	// holdAfterSchedule bounds how long placeholders (or the
	// CapacityBuffer) outlive the run's scheduled time while the run's pods
	// are still being placed, as a duration such as "2m". They are deleted
	// as soon as every pod of the run is ready or finished, and at the
	// latest holdAfterSchedule after the scheduled time. Default 2m; at
	// most 15m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	HoldAfterSchedule *metav1.Duration `json:"holdAfterSchedule,omitempty"`
}

// Defaults of PlaceholderWarmUp.
const (
	DefaultPlaceholderPriorityClass = "ontime-placeholder"
	DefaultPlaceholderImage         = "registry.k8s.io/pause:3.10"
	DefaultHoldAfterSchedule        = 2 * time.Minute
	// MaxHoldAfterSchedule bounds how long a placeholder outlives its run.
	MaxHoldAfterSchedule = 15 * time.Minute
	// MinWarmUpLead and MaxWarmUpLead bound spec.warmUp.lead.
	MinWarmUpLead = 30 * time.Second
	MaxWarmUpLead = 24 * time.Hour
)

// WarmUpStatus describes one warm-up.
type WarmUpStatus struct {
	// scheduledTime is the scheduled time of the run warmed up for.
	ScheduledTime metav1.Time `json:"scheduledTime"`

	// strategy is the strategy this warm-up used. The controller reads it
	// to clean up a CapacityBuffer after spec.warmUp.strategy changed.
	// +optional
	Strategy WarmUpStrategy `json:"strategy,omitempty"`

	// startTime is when warm-up began: the placeholder pods, the early
	// Job, or the CapacityBuffer were created.
	StartTime metav1.Time `json:"startTime"`

	// pods is how many pods the warm-up places: the run's parallelism,
	// bounded by its completions.
	Pods int32 `json:"pods"`

	// scheduledPods is how many of them had been given a node when last
	// observed.
	// +optional
	ScheduledPods int32 `json:"scheduledPods"`

	// readyTime is when every warm-up pod had a node, or (CapacityBuffer)
	// when the autoscaler reported the buffer's capacity in place: the
	// capacity was there. Unset until then.
	// +optional
	ReadyTime *metav1.Time `json:"readyTime,omitempty"`

	// late is true when the run started before its capacity was ready.
	// +optional
	Late bool `json:"late,omitempty"`

	// lead is the lead this warm-up began with and how it was chosen.
	// +optional
	Lead *LeadStatus `json:"lead,omitempty"`
}

// MaxRecentRunStarts is how many runs' starts a status keeps
// (recentRunStarts).
const MaxRecentRunStarts = 5

// RunStart says when a run actually started, and where its lateness went.
type RunStart struct {
	// scheduledTime is the run's scheduled time.
	ScheduledTime metav1.Time `json:"scheduledTime"`

	// startTime is when its first pod's first container started running.
	StartTime metav1.Time `json:"startTime"`

	// lateness is startTime minus scheduledTime, such as "1s" or "2m3s":
	// the time the run lost to Job creation, scheduling, node provisioning
	// and container start. Whole seconds, as the pod reports them.
	Lateness metav1.Duration `json:"lateness"`

	// phases split lateness by where it went, in the order a run goes
	// through them; only phases that took time are listed, and they add up
	// to lateness. Taken from the timestamps the Job, its first-started pod
	// and (when that pod waited for one) its node record, which are whole
	// seconds: a phase under a second may show as 0s or 1s. Unset for a run
	// measured before ontime split lateness.
	// +optional
	// +listType=atomic
	Phases []RunPhase `json:"phases,omitempty"`
}

// RunPhaseName names a phase of a run's start.
// +kubebuilder:validation:Enum=Controller;ConcurrencyGroup;JobController;Node;Scheduling;PodSandbox;ImagePull;InitContainers
type RunPhaseName string

const (
	// PhaseController is the wait for the run's Job to be created, from its
	// scheduled time, by ontime (or, for a CronJob, kube-controller-manager):
	// a controller down or busy, or a crowded minute.
	PhaseController RunPhaseName = "Controller"
	// PhaseConcurrencyGroup is the wait of a Job created suspended until
	// its concurrency group admitted it (the Job's status.startTime).
	PhaseConcurrencyGroup RunPhaseName = "ConcurrencyGroup"
	// PhaseJobController is the Job controller's time to create the pod,
	// from the Job's creation or admission.
	PhaseJobController RunPhaseName = "JobController"
	// PhaseNode is the pod's wait for a node that was created after the
	// pod: from the pod's creation until that node was Ready.
	PhaseNode RunPhaseName = "Node"
	// PhaseScheduling is the rest of the pod's wait to be scheduled: with
	// a node already there, or after the new node was Ready.
	PhaseScheduling RunPhaseName = "Scheduling"
	// PhasePodSandbox is the kubelet's start of the pod, until its sandbox
	// and network were ready (the pod's PodReadyToStartContainers
	// condition; counted in ImagePull where the condition is absent).
	PhasePodSandbox RunPhaseName = "PodSandbox"
	// PhaseImagePull is the rest of the kubelet's time before the first
	// container ran, besides running init containers: pulling images, and
	// creating containers, which takes well under a second. The pods'
	// status records no pull times, so a slow pull shows here.
	PhaseImagePull RunPhaseName = "ImagePull"
	// PhaseInitContainers is the time init containers ran, one after
	// another, before the first container started.
	PhaseInitContainers RunPhaseName = "InitContainers"
)

// RunPhases lists every phase, in the order a run goes through them.
var RunPhases = []RunPhaseName{PhaseController, PhaseConcurrencyGroup, PhaseJobController, PhaseNode,
	PhaseScheduling, PhasePodSandbox, PhaseImagePull, PhaseInitContainers}

// Spent returns how much of the run's lateness went to phase: 0 when it
// is not listed.
func (s RunStart) Spent(phase RunPhaseName) time.Duration {
	for _, p := range s.Phases {
		if p.Name == phase {
			return p.Duration.Duration
		}
	}
	return 0
}

// PhasesTotal returns the time the run's phases add up to: its lateness,
// for a run measured with phases.
func (s RunStart) PhasesTotal() time.Duration {
	var total time.Duration
	for _, p := range s.Phases {
		total += p.Duration.Duration
	}
	return total
}

// Dominant returns the phase the run's start spent most time in (the
// first of equals, in RunPhases order); false for a run measured without
// phases.
func (s RunStart) Dominant() (RunPhase, bool) {
	var dominant RunPhase
	for _, p := range s.Phases {
		if p.Duration.Duration > dominant.Duration.Duration {
			dominant = p
		}
	}
	return dominant, dominant.Name != ""
}

// RunPhase is the part of a run's lateness spent in one phase.
type RunPhase struct {
	// name is the phase.
	Name RunPhaseName `json:"name"`

	// duration is how much of the run's lateness it took, such as "42s".
	Duration metav1.Duration `json:"duration"`
}

// CronJobWarmUpState is what ontime records of an annotated CronJob's
// warm-up, as JSON in its warmup.ontime.dev/state annotation: what a
// ScheduledJob's status holds of its warm-up. Written by ontime only.
type CronJobWarmUpState struct {
	// warmUp is the warm-up of the latest run warmed up for, as a
	// ScheduledJob's status.warmUp.
	// +optional
	WarmUp *WarmUpStatus `json:"warmUp,omitempty"`

	// lastRunStart is the latest run whose start was measured.
	// +optional
	LastRunStart *RunStart `json:"lastRunStart,omitempty"`

	// recentRunStarts are the latest scheduled runs whose start was
	// measured, newest first (the first is lastRunStart), at most
	// MaxRecentRunStarts: enough to tell one late run from a pattern,
	// small enough to keep the object small. Every run is also in the
	// ontime_run_start_phase_seconds histogram.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5
	RecentRunStarts []RunStart `json:"recentRunStarts,omitempty"`

	// problem is why the CronJob's warm-up or group annotations or its
	// schedule cannot be followed; reported by one WarmUpFailed or
	// InvalidConcurrencyGroup event when it appears.
	// +optional
	Problem string `json:"problem,omitempty"`
}
