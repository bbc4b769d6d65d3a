package warmup

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

func TestLeadPool(t *testing.T) {
	base := func() *corev1.PodSpec {
		return &corev1.PodSpec{
			NodeSelector: map[string]string{"karpenter.sh/nodepool": "batch", "kubernetes.io/arch": "amd64"},
			Tolerations:  []corev1.Toleration{{Key: "batch", Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m")}}}},
		}
	}
	pool := LeadPool(base())
	tests := map[string]struct {
		change func(*corev1.PodSpec)
		same   bool
	}{
		"the same constraints": {change: func(*corev1.PodSpec) {}, same: true},
		"another CPU request and image": {change: func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
			s.Containers[0].Image = "other"
		}, same: true},
		"a preferred node affinity": {change: func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1}}}}
		}, same: true},
		"another node pool": {change: func(s *corev1.PodSpec) { s.NodeSelector["karpenter.sh/nodepool"] = "gpu" }},
		"a toleration more": {change: func(s *corev1.PodSpec) {
			s.Tolerations = append(s.Tolerations, corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists})
		}},
		"a GPU": {change: func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
		}},
		"a required node affinity": {change: func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := base()
			tc.change(spec)
			if got := LeadPool(spec); (got == pool) != tc.same {
				t.Errorf("pool %s, base %s: want same %v", got, pool, tc.same)
			}
		})
	}
}

func TestChooseSharedLead(t *testing.T) {
	opts := autoLead(30*time.Second, 10*time.Minute)
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	// warm is a warm-up under lead Auto for the run at run, begun lead
	// earlier (learned with margin 150 % from 60 s), ready after ready,
	// or late when ready is 0; with its run's start.
	warm := func(run time.Time, lead, ready time.Duration) (*v1alpha1.WarmUpStatus, *v1alpha1.RunStart) {
		s := &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(run), StartTime: metav1.NewTime(run.Add(-lead)),
			Lead: &v1alpha1.LeadStatus{Lead: metav1.Duration{Duration: lead}, Reason: v1alpha1.LeadLearned, MarginPercent: 150, Provisioning: &metav1.Duration{Duration: time.Minute}}}
		start := run
		if ready > 0 {
			s.ReadyTime = &metav1.Time{Time: run.Add(-lead + ready)}
		} else {
			s.Late, start = true, run.Add(30*time.Second)
		}
		return s, &v1alpha1.RunStart{ScheduledTime: metav1.NewTime(run), StartTime: metav1.NewTime(start)}
	}
	peer := func(name string, run time.Time, lead, ready time.Duration) Peer {
		last, start := warm(run, lead, ready)
		return Peer{Name: "team/" + name, Last: last, LastStart: start}
	}
	ownLast, ownStart := warm(at, 90*time.Second, time.Minute)
	now := at.Add(time.Hour)
	tests := map[string]struct {
		opts       Options
		last       *v1alpha1.WarmUpStatus
		lastStart  *v1alpha1.RunStart
		peers      []Peer
		now        time.Time
		lead       time.Duration
		sharedFrom string
	}{
		"fixed: no sharing": {opts: (&v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(5 * time.Minute)}).Settings(),
			peers: []Peer{peer("a", at, 90*time.Second, time.Minute)}, now: now, lead: 5 * time.Minute},
		"first run, no peer: maxLead": {opts: opts, now: now, lead: 10 * time.Minute},
		"first run: the pool's lead": {opts: opts, peers: []Peer{peer("a", at, 90*time.Second, time.Minute)}, now: now,
			lead: 81 * time.Second, sharedFrom: "team/a"},
		"a peer's newer measurement, late: longer": {opts: opts, last: ownLast, lastStart: ownStart,
			peers: []Peer{peer("a", at.Add(30*time.Minute), 90*time.Second, 0)}, now: now,
			lead: 210 * time.Second, sharedFrom: "team/a"},
		"a peer's older measurement: its own": {opts: opts, last: ownLast, lastStart: ownStart,
			peers: []Peer{peer("a", at.Add(-30*time.Minute), 90*time.Second, 0)}, now: now, lead: 81 * time.Second},
		"a peer's measurement for the same run: its own": {opts: opts, last: ownLast, lastStart: ownStart,
			peers: []Peer{peer("a", at, 90*time.Second, 0)}, now: now, lead: 81 * time.Second},
		"the newest of two peers": {opts: opts, last: ownLast, lastStart: ownStart,
			peers: []Peer{peer("a", at.Add(40*time.Minute), 150*time.Second, 2*time.Minute), peer("b", at.Add(20*time.Minute), 90*time.Second, 0)}, now: now,
			lead: 162 * time.Second, sharedFrom: "team/a"},
		"a peer whose capacity was in place teaches nothing": {opts: opts, last: ownLast, lastStart: ownStart,
			peers: []Peer{peer("a", at.Add(30*time.Minute), 90*time.Second, 3*time.Second)}, now: now, lead: 81 * time.Second},
		"a peer's run that has not come": {opts: opts, last: ownLast, lastStart: ownStart,
			peers: []Peer{peer("a", at.Add(2*time.Hour), 90*time.Second, time.Minute)}, now: now, lead: 81 * time.Second},
		"a warm-up in progress keeps its lead": {opts: opts, last: ownLast, lastStart: nil,
			peers: []Peer{peer("a", at.Add(-time.Minute), 90*time.Second, 0)}, now: at.Add(-time.Second), lead: 90 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ChooseSharedLead(tc.opts, tc.last, tc.lastStart, tc.peers, tc.now)
			if got.Lead.Duration != tc.lead || got.SharedFrom != tc.sharedFrom {
				t.Errorf("lead %v (%s, margin %d%%, shared from %q), want %v shared from %q",
					got.Lead.Duration, got.Reason, got.MarginPercent, got.SharedFrom, tc.lead, tc.sharedFrom)
			}
		})
	}
}
