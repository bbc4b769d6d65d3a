package v1alpha1

import (
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// ConcurrencyGroupSpec bounds how many runs of the group's members are
// active at once. Members join it by name: a ScheduledJob by
// spec.concurrencyGroup, a plain CronJob by the annotation
// ontime.dev/concurrency-group (ontime.dev/cluster-concurrency-group for a
// ClusterConcurrencyGroup).
type ConcurrencyGroupSpec struct {
	// maxActive is the most runs of the group's members that may be
	// active (started and not finished) at once. A member's run due while
	// that many are active waits, its Job created suspended, until one
	// finishes; waiting runs start in order of priority, then of
	// scheduled time. Lowering it stops admissions until fewer are
	// active; it never stops a run already started.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxActive int32 `json:"maxActive"`

	// limitPerLabelValue, when set, also bounds the active runs that share
	// a value of one label of their Jobs (a Job's labels are its
	// template's: a tenant, a database): at most its maxActive per value.
	// A run held by this limit does not hold up later runs of other
	// values. Jobs without the label share the value "".
	// +optional
	LimitPerLabelValue *LabelValueLimit `json:"limitPerLabelValue,omitempty"`
}

// LabelValueLimit is a limit for each value of a label.
type LabelValueLimit struct {
	// key is the label's key, as in a Job's metadata.labels.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	Key string `json:"key"`

	// maxActive is the most active runs with one value of the label.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxActive int32 `json:"maxActive"`
}

// ConcurrencyGroupStatus is what the group admitted and what waits. Every
// write is conditional on the resourceVersion it was planned from: a run is
// admitted here (listed in active) before its Job is released, so that no
// two controllers admit past the limit.
type ConcurrencyGroupStatus struct {
	// active are the runs admitted and not yet seen finished or gone; the
	// group admits a run only while fewer than spec.maxActive are listed
	// here or are otherwise running (a member's Job started by someone
	// else counts too).
	// +listType=atomic
	// +optional
	Active []GroupRun `json:"active,omitempty"`

	// activeCount is how many runs are active.
	// +optional
	ActiveCount int32 `json:"activeCount,omitempty"`

	// waiting is how many runs wait for room, as of the last write.
	// +optional
	Waiting int32 `json:"waiting,omitempty"`

	// oldestWaitingSince is when the run that has waited longest began
	// waiting (its scheduled time, or its Job's creation if later).
	// +optional
	OldestWaitingSince *metav1.Time `json:"oldestWaitingSince,omitempty"`

	// admitted counts the runs the group has admitted.
	// +optional
	Admitted int64 `json:"admitted,omitempty"`

	// typicalRunDuration is how long the group's runs take from admission
	// to finish, as a moving average: each run seen finishing moves it a
	// quarter of the way to its own duration (whole seconds). Unset until
	// the group has seen a run finish. It predicts admissions (queue).
	// +optional
	TypicalRunDuration *metav1.Duration `json:"typicalRunDuration,omitempty"`

	// queue is the head of the waiting runs, at most 100, in the order
	// the group admits them, each with its predicted admission.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Queue []QueuedRun `json:"queue,omitempty"`

	// newRunAdmission is when a run that joined the queue now, behind
	// every waiting run, is predicted to be admitted, as for queue (its
	// label value unknown: the group's slots alone). Unset while a new run
	// would be admitted at once, and without a typicalRunDuration.
	// Warm-up places the lead of a member's next run before it.
	// +optional
	NewRunAdmission *metav1.Time `json:"newRunAdmission,omitempty"`

	// upcoming are the members' next runs whose Jobs do not exist yet (a
	// ScheduledJob's, at its status.nextScheduleTime; an annotated
	// CronJob's, at the next time its schedule fires), at most 100, in the
	// order of their scheduled times, each with its predicted admission:
	// as for queue, behind every waiting run, and not before its time.
	// Members scheduled at the same minute thus learn who will wait.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Upcoming []QueuedRun `json:"upcoming,omitempty"`

	// conditions: Saturated (True while runs wait for room).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GroupRun is one admitted run: its Job.
type GroupRun struct {
	// namespace and name are the Job's.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// uid is the Job's: a Job of the same name created later is another
	// run.
	UID types.UID `json:"uid"`
	// labelValue is the Job's value of spec.limitPerLabelValue.key.
	// +optional
	LabelValue string `json:"labelValue,omitempty"`
	// admittedAt is when the group admitted it.
	AdmittedAt metav1.Time `json:"admittedAt"`
}

// QueuedRun is one waiting run: its Job, and when the group expects to
// admit it.
type QueuedRun struct {
	// namespace and name are the Job's.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// predictedAdmission is when the group expects to admit the run if
	// every active run takes typicalRunDuration from its admission, one
	// slot freeing per finish, taken in queue order (and within
	// spec.limitPerLabelValue). Unset without a typicalRunDuration. A time
	// already past: the runs ahead take longer than typical. Warm-up
	// places a member's lead before it.
	// +optional
	PredictedAdmission *metav1.Time `json:"predictedAdmission,omitempty"`
}

// PredictedAdmission is the group's prediction for the run whose Job is
// (or will be) namespace/name: its entry in queue, else in upcoming, else
// as a run that joined now (zero: none). Warm-up places a member's lead
// before it; a deadline's prediction starts a waiting run at it.
func (s *ConcurrencyGroupStatus) PredictedAdmission(namespace, name string) time.Time {
	for _, runs := range [][]QueuedRun{s.Queue, s.Upcoming} {
		for _, run := range runs {
			if run.Namespace == namespace && run.Name == name {
				if run.PredictedAdmission == nil {
					return time.Time{}
				}
				return run.PredictedAdmission.Time
			}
		}
	}
	if s.NewRunAdmission != nil {
		return s.NewRunAdmission.Time
	}
	return time.Time{}
}

// MaxQueueListed is how many waiting runs a group's status.queue lists.
const MaxQueueListed = 100

// The group's condition and its reasons, and the events of a group's runs.
const (
	GroupSaturated = "Saturated"

	ReasonRunsWaiting = "RunsWaiting"
	ReasonHasRoom     = "HasRoom"

	// ReasonAdmitted: a run that waited was started (on its owner).
	ReasonAdmitted = "AdmittedByGroup"
	// ReasonMissedInGroup: a run waited past its starting deadline and
	// was not run (on its owner).
	ReasonMissedInGroup = "MissedWaitingForGroup"
	// ReasonNotSelected: a run of a member in a namespace the cluster
	// group's namespaceSelector does not select was not run (on its
	// owner); also the reason of such a member's CapacityReady condition,
	// which warms none of its runs.
	ReasonNotSelected = "NotSelectedByGroup"
	// ReasonOverLimit: the group found more runs active than it allows,
	// started by someone else (on the group).
	ReasonOverLimit = "OverLimit"
	// ReasonWaitingForGroup: a ScheduledJob's condition Waiting while a
	// run of it waits for its group; ReasonNotWaiting once none does.
	ReasonWaitingForGroup = "WaitingForGroup"
	ReasonNotWaiting      = "NotWaiting"
	// ReasonInvalidGroupAnnotation: a CronJob's group annotations break
	// CronJobGroup's rules; the Job webhook refuses its runs until they
	// are fixed (on the CronJob, once per problem).
	ReasonInvalidGroupAnnotation = "InvalidConcurrencyGroup"
)

// ConditionWaiting is a group member ScheduledJob's condition: True while
// one of its runs waits for room in its group.
const ConditionWaiting = "Waiting"

// Labels and annotations of group members and their Jobs. A member's Jobs
// carry the group's label (its name as value), which the group lists them
// by; a plain CronJob joins by the annotation of the same key.
const (
	GroupLabel        = "ontime.dev/concurrency-group"
	ClusterGroupLabel = "ontime.dev/cluster-concurrency-group"
	// GroupPriorityAnnotation, on a CronJob and its Jobs: waiting runs of
	// higher priority start first (default 0).
	GroupPriorityAnnotation = "ontime.dev/concurrency-priority"
	// StartByAnnotation, on a member's Job: after this time (its scheduled
	// time plus its startingDeadlineSeconds) a waiting run is missed.
	StartByAnnotation = "ontime.dev/start-by"
	// MissedAnnotation, on a member's Job: it waited past its start-by
	// and will not run. Written on the suspended Job, conditional on the
	// resourceVersion that showed it waiting, so that it and the Job's
	// release exclude each other.
	MissedAnnotation = "ontime.dev/missed"
)

// Group kinds, as spec.concurrencyGroup.kind names them.
const (
	KindConcurrencyGroup        = "ConcurrencyGroup"
	KindClusterConcurrencyGroup = "ClusterConcurrencyGroup"
)

// ConcurrencyGroupRef names the group a ScheduledJob's runs count in.
type ConcurrencyGroupRef struct {
	// kind is ConcurrencyGroup (in the ScheduledJob's namespace, the
	// default) or ClusterConcurrencyGroup.
	// +kubebuilder:validation:Enum=ConcurrencyGroup;ClusterConcurrencyGroup
	// +kubebuilder:default=ConcurrencyGroup
	// +optional
	Kind string `json:"kind,omitempty"`

	// name is the group's name. Until the group exists, runs wait.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// priority orders this member's waiting runs against other members'
	// (higher first; then the earlier scheduled time). Default 0.
	// +kubebuilder:validation:Minimum=-1000
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Priority int32 `json:"priority,omitempty"`
}

// Label is the label a member's Jobs carry, with the group's name as value.
func (r ConcurrencyGroupRef) Label() string {
	if r.Kind == KindClusterConcurrencyGroup {
		return ClusterGroupLabel
	}
	return GroupLabel
}

// JoinGroup makes job a waiting run of the group: created suspended,
// labeled with the group, its priority and, when it has a starting
// deadline, the time after which it is missed.
func JoinGroup(job *batchv1.Job, ref ConcurrencyGroupRef, startBy *time.Time) {
	if job.Labels == nil {
		job.Labels = map[string]string{}
	}
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	job.Labels[ref.Label()] = ref.Name
	suspend := true
	job.Spec.Suspend = &suspend
	if ref.Priority != 0 {
		job.Annotations[GroupPriorityAnnotation] = strconv.Itoa(int(ref.Priority))
	}
	if startBy != nil {
		job.Annotations[StartByAnnotation] = startBy.UTC().Format(time.RFC3339)
	}
}

// GroupOf says which group a Job waits or runs in: its kind and name.
func GroupOf(job *batchv1.Job) (kind, name string, ok bool) {
	if name := job.Labels[ClusterGroupLabel]; name != "" {
		return KindClusterConcurrencyGroup, name, true
	}
	if name := job.Labels[GroupLabel]; name != "" {
		return KindConcurrencyGroup, name, true
	}
	return "", "", false
}

// Key is the object key of the group r names, for a member in namespace
// (a ClusterConcurrencyGroup has none).
func (r ConcurrencyGroupRef) Key(namespace string) types.NamespacedName {
	if r.Kind == KindClusterConcurrencyGroup {
		return types.NamespacedName{Name: r.Name}
	}
	return types.NamespacedName{Namespace: namespace, Name: r.Name}
}

// GroupIndexValue is the value under which the controllers index the
// members of the group of kind at key (a ScheduledJob by
// spec.concurrencyGroup, a CronJob by its annotation):
// "Kind/namespace/name", with no namespace for a cluster group.
func GroupIndexValue(kind string, key types.NamespacedName) string {
	if kind == "" {
		kind = KindConcurrencyGroup
	}
	return kind + "/" + key.Namespace + "/" + key.Name
}

// CronJobGroupRef is the concurrency group a CronJob joins by its
// annotation (ontime.dev/concurrency-group or
// ontime.dev/cluster-concurrency-group); ok is false for none. The Job
// webhook refuses a CronJob's Jobs while both are set, or either is not a
// name.
func CronJobGroupRef(annotations map[string]string) (ref ConcurrencyGroupRef, ok bool) {
	if name := annotations[ClusterGroupLabel]; name != "" {
		return ConcurrencyGroupRef{Kind: KindClusterConcurrencyGroup, Name: name}, true
	}
	if name := annotations[GroupLabel]; name != "" {
		return ConcurrencyGroupRef{Kind: KindConcurrencyGroup, Name: name}, true
	}
	return ConcurrencyGroupRef{}, false
}

// MissedInGroup reports whether a member's Job was found missed by its
// group, and its scheduled time (or when it was marked, if it has none).
func MissedInGroup(job *batchv1.Job) (time.Time, bool) {
	value, ok := job.Annotations[MissedAnnotation]
	if !ok {
		return time.Time{}, false
	}
	if scheduled, ok := ScheduledTime(job); ok {
		return scheduled, true
	}
	at, _ := time.Parse(time.RFC3339, value)
	return at, true
}

// ConcurrencyGroup bounds the active runs of the ScheduledJobs and CronJobs
// of its namespace that join it: at most spec.maxActive at once, the rest
// waiting in order, each at most its startingDeadlineSeconds. See
// docs/concurrency-groups.md.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=cg,categories=all
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="a group's name is a label value: at most 63 characters"
// +kubebuilder:printcolumn:name="Max",type=integer,JSONPath=`.spec.maxActive`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.activeCount`
// +kubebuilder:printcolumn:name="Waiting",type=integer,JSONPath=`.status.waiting`
// +kubebuilder:printcolumn:name="Oldest Wait",type=date,JSONPath=`.status.oldestWaitingSince`
// +kubebuilder:printcolumn:name="Admitted",type=integer,JSONPath=`.status.admitted`,priority=1
// +kubebuilder:printcolumn:name="Typical Run",type=string,JSONPath=`.status.typicalRunDuration`,priority=1
// +kubebuilder:printcolumn:name="Next Admission",type=string,JSONPath=`.status.queue[0].predictedAdmission`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ConcurrencyGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ConcurrencyGroupSpec   `json:"spec"`
	Status ConcurrencyGroupStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ConcurrencyGroupList is a list of ConcurrencyGroups.
type ConcurrencyGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ConcurrencyGroup `json:"items"`
}

// ClusterConcurrencyGroup is a ConcurrencyGroup whose members may live in
// any namespace: a platform team's cap on one shared database or license
// server across its tenants.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ccg
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="a group's name is a label value: at most 63 characters"
// +kubebuilder:printcolumn:name="Max",type=integer,JSONPath=`.spec.maxActive`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.activeCount`
// +kubebuilder:printcolumn:name="Waiting",type=integer,JSONPath=`.status.waiting`
// +kubebuilder:printcolumn:name="Oldest Wait",type=date,JSONPath=`.status.oldestWaitingSince`
// +kubebuilder:printcolumn:name="Admitted",type=integer,JSONPath=`.status.admitted`,priority=1
// +kubebuilder:printcolumn:name="Typical Run",type=string,JSONPath=`.status.typicalRunDuration`,priority=1
// +kubebuilder:printcolumn:name="Next Admission",type=string,JSONPath=`.status.queue[0].predictedAdmission`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterConcurrencyGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterConcurrencyGroupSpec `json:"spec"`
	Status ConcurrencyGroupStatus      `json:"status,omitempty"`
}

// ClusterConcurrencyGroupSpec bounds how many runs of the group's members
// are active at once, as a ConcurrencyGroup's does, and may restrict which
// namespaces' members join. Members join it by name: a ScheduledJob by
// spec.concurrencyGroup (kind ClusterConcurrencyGroup), a plain CronJob by
// the annotation ontime.dev/cluster-concurrency-group.
type ClusterConcurrencyGroupSpec struct {
	ConcurrencyGroupSpec `json:",inline"`

	// namespaceSelector, when set, selects by their labels the namespaces
	// whose ScheduledJobs and CronJobs may join the group (one namespace:
	// kubernetes.io/metadata.name). A member elsewhere never runs in the
	// group: admission refuses a ScheduledJob that joins from such a
	// namespace, and the group marks a waiting run from one missed
	// (event NotSelectedByGroup on its owner) instead of admitting it, so
	// that a tenant cannot take a platform team's slots. Runs already
	// active go on. Unset: members of every namespace may join; {}
	// selects every namespace too.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// Namespaces is the selector of the namespaces whose members the group
// takes, by their labels: every namespace without a namespaceSelector, or
// with {} (both Empty: callers need read no namespace).
func (s ClusterConcurrencyGroupSpec) Namespaces() (labels.Selector, error) {
	if s.NamespaceSelector == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s.NamespaceSelector)
}

// +kubebuilder:object:root=true

// ClusterConcurrencyGroupList is a list of ClusterConcurrencyGroups.
type ClusterConcurrencyGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterConcurrencyGroup `json:"items"`
}

func init() {
	register(&ConcurrencyGroup{}, &ConcurrencyGroupList{}, &ClusterConcurrencyGroup{}, &ClusterConcurrencyGroupList{})
}
