package warmup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// LeadPool names the nodes a run's pods land on, for sharing what lead
// Auto learns: owners whose pods have the same nodeSelector, required node
// affinity, tolerations and extended resources (GPUs and the like, which
// pick the instance type) are placed by the autoscaler on the same node
// pool and shape, and wait as long for a node. CPU and memory requests are
// left out: they change the node's size within a pool, seldom how long it
// takes to come. The name is a hash: equal for equal constraints.
func LeadPool(spec *corev1.PodSpec) string {
	key := struct {
		NodeSelector map[string]string    `json:"nodeSelector,omitempty"`
		Required     *corev1.NodeSelector `json:"required,omitempty"`
		Tolerations  []corev1.Toleration  `json:"tolerations,omitempty"`
		Extended     []string             `json:"extended,omitempty"`
	}{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations, Extended: extendedResources(spec)}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		key.Required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	// encoding/json sorts map keys: the same constraints, the same bytes.
	data, err := json.Marshal(key)
	if err != nil {
		return "" // cannot happen for these types; no pool, no sharing
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// extendedResources are the sorted names of the resources the pod's
// containers request other than CPU, memory and ephemeral storage.
func extendedResources(spec *corev1.PodSpec) []string {
	var names []string
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		for name := range c.Resources.Requests {
			switch name {
			case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
			default:
				names = append(names, string(name))
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Peer is another owner in the same LeadPool under lead Auto, and what its
// last warm-up measured.
type Peer struct {
	// Name is the owner's namespace/name.
	Name      string
	Last      *v1alpha1.WarmUpStatus
	LastStart *v1alpha1.RunStart
}

// ChooseSharedLead is ChooseLead with what the owner's peers measured: when
// a peer's last warm-up measured its pool's provisioning (it was late, or
// its capacity came, not found in place) for a run later than the owner's
// own last warm-up, the newest such measurement is the better guess, and
// the lead is learned from it (LeadStatus.SharedFrom names the peer). So a
// new owner starts from its pool's lead instead of maxLead, and a delay
// that grew for one owner lengthens the others' next leads before their
// own runs are late. A warm-up in progress keeps its lead.
func ChooseSharedLead(opts Options, last *v1alpha1.WarmUpStatus, lastStart *v1alpha1.RunStart, peers []Peer, now time.Time) v1alpha1.LeadStatus {
	own := ChooseLead(opts, last, lastStart, now)
	if !opts.AutoLead || own.Reason == v1alpha1.LeadFixed {
		return own
	}
	var since time.Time // the run the owner's own last warm-up was for
	if last != nil && last.Lead != nil && last.Lead.Reason != v1alpha1.LeadFixed {
		if _, _, judged := measuredProvisioning(last, lastStart, now); !judged {
			return own
		}
		since = last.ScheduledTime.Time
	}
	newest := newestMeasurement(peers, since, now)
	if newest == nil {
		return own
	}
	shared := ChooseLead(opts, newest.Last, newest.LastStart, now)
	shared.SharedFrom = newest.Name
	return shared
}

// newestMeasurement is the peer whose last warm-up measured provisioning
// for the latest run after since, or nil.
func newestMeasurement(peers []Peer, since, now time.Time) *Peer {
	var newest *Peer
	for i := range peers {
		p := &peers[i]
		if p.Last == nil || p.Last.Lead == nil || p.Last.Lead.Reason == v1alpha1.LeadFixed || !p.Last.ScheduledTime.After(since) {
			continue
		}
		provisioning, late, judged := measuredProvisioning(p.Last, p.LastStart, now)
		if !judged || (!late && provisioning < capacityInPlace) {
			continue
		}
		if newest == nil || p.Last.ScheduledTime.After(newest.Last.ScheduledTime.Time) {
			newest = p
		}
	}
	return newest
}
