package spread

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A Balanced group's placements are kept in one ConfigMap, the group's
// ledger: ontime-spread-<group> in the controller's namespace, one data
// entry per ScheduledJob (namespace_name: a JSON LedgerEntry) and the
// number of rebalances in an annotation. The controller writes an entry
// when it places a ScheduledJob; ontime spread rebalance rewrites them all.

// GroupLabel marks a ledger ConfigMap with its group.
const GroupLabel = "ontime.dev/spread-group"

// EpochAnnotation on a ledger counts its rebalances.
const EpochAnnotation = "ontime.dev/spread-epoch"

// LedgerName is the ConfigMap that holds a group's placements.
func LedgerName(group string) string { return "ontime-spread-" + group }

// LedgerEntry is one ScheduledJob's placement in its group's ledger.
type LedgerEntry struct {
	Schedule string `json:"schedule"`
	TimeZone string `json:"timeZone,omitempty"`
	// DSTPolicy is the ScheduledJob's spec.dstPolicy ("" for the default).
	DSTPolicy string `json:"dstPolicy,omitempty"`
	Weight    int64  `json:"weight"`
	// Span is how many minutes one run counts in (spec.spread.runDuration
	// in minutes); 0 or 1 counts its start's minute.
	Span    int   `json:"span,omitempty"`
	Choices []int `json:"choices"`
	Epoch   int64 `json:"epoch"`
	// Placed is when the entry was written; entries of ScheduledJobs
	// that no longer exist are dropped only after a grace period.
	Placed metav1.Time `json:"placed"`
}

// LedgerKey is a ScheduledJob's key in a ledger's data: namespace_name,
// which is unambiguous (neither may contain "_") and a valid data key.
func LedgerKey(namespace, name string) string { return namespace + "_" + name }

// ParseLedgerKey is the ScheduledJob a ledger key names.
func ParseLedgerKey(key string) (types.NamespacedName, bool) {
	namespace, name, ok := strings.Cut(key, "_")
	return types.NamespacedName{Namespace: namespace, Name: name}, ok
}

// ReadLedger decodes a ledger's entries and epoch.
func ReadLedger(cm *corev1.ConfigMap) (map[string]LedgerEntry, int64, error) {
	entries := make(map[string]LedgerEntry, len(cm.Data))
	for key, value := range cm.Data {
		var entry LedgerEntry
		if err := json.Unmarshal([]byte(value), &entry); err != nil {
			return nil, 0, fmt.Errorf("ConfigMap %s/%s, key %s: %w", cm.Namespace, cm.Name, key, err)
		}
		entries[key] = entry
	}
	return entries, epochOf(cm), nil
}

// ReadEntry decodes one entry of a ledger and the ledger's epoch, without
// decoding the others: what a reconcile needs on every run.
func ReadEntry(cm *corev1.ConfigMap, key string) (entry LedgerEntry, epoch int64, ok bool, err error) {
	epoch = epochOf(cm)
	value, ok := cm.Data[key]
	if !ok {
		return entry, epoch, false, nil
	}
	if err := json.Unmarshal([]byte(value), &entry); err != nil {
		return entry, epoch, false, fmt.Errorf("ConfigMap %s/%s, key %s: %w", cm.Namespace, cm.Name, key, err)
	}
	return entry, epoch, true, nil
}

// epochOf is the ledger's count of rebalances (0 before the first).
func epochOf(cm *corev1.ConfigMap) int64 {
	epoch, _ := strconv.ParseInt(cm.Annotations[EpochAnnotation], 10, 64)
	return epoch
}

// WriteLedger encodes entries and epoch into cm.
func WriteLedger(cm *corev1.ConfigMap, entries map[string]LedgerEntry, epoch int64) error {
	cm.Data = make(map[string]string, len(entries))
	for key, entry := range entries {
		value, err := json.Marshal(entry)
		if err != nil {
			return err
		}
		cm.Data[key] = string(value)
	}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[EpochAnnotation] = strconv.FormatInt(epoch, 10)
	return nil
}

// Members turns ledger entries into the balancer's members, reading their
// schedules with read.
func Members(entries map[string]LedgerEntry, read ScheduleReader) ([]Member, error) {
	members := make([]Member, 0, len(entries))
	for key, entry := range entries {
		m, err := MemberOf(key, entry, read)
		if err != nil {
			return nil, err
		}
		members = append(members, m)
	}
	return members, nil
}

// LedgerLoad adds up the starts of a ledger's entries (LoadOf of their
// Members).
func LedgerLoad(entries map[string]LedgerEntry, now time.Time, read ScheduleReader) (*Load, error) {
	members, err := Members(entries, read)
	if err != nil {
		return nil, err
	}
	return LoadOf(members, now)
}

// MemberOf is the balancer's member for a ledger entry, a ScheduledJob's.
func MemberOf(key string, entry LedgerEntry, read ScheduleReader) (Member, error) {
	nn, _ := ParseLedgerKey(key)
	m := Member{Key: nn.Namespace + "/" + nn.Name, Schedule: entry.Schedule, Weight: entry.Weight, Span: entry.Span, Choices: entry.Choices}
	parser, err := read(KindScheduledJob, m.Key, entry.TimeZone, entry.DSTPolicy)
	if err != nil {
		return m, fmt.Errorf("%s: %w", key, err)
	}
	m.Parser = parser
	return m, nil
}

// RebalanceLedger places every entry again (Rebalance) and returns the
// entries of the next epoch.
func RebalanceLedger(entries map[string]LedgerEntry, epoch int64, now time.Time, read ScheduleReader) (map[string]LedgerEntry, int64, error) {
	members, err := Members(entries, read)
	if err != nil {
		return nil, 0, err
	}
	rebalanced, err := Rebalance(members, now)
	if err != nil {
		return nil, 0, err
	}
	out := make(map[string]LedgerEntry, len(entries))
	for _, m := range rebalanced {
		namespace, name, _ := strings.Cut(m.Key, "/")
		key := LedgerKey(namespace, name)
		entry := entries[key]
		entry.Choices, entry.Epoch, entry.Placed = m.Choices, epoch+1, metav1.NewTime(now)
		out[key] = entry
	}
	return out, epoch + 1, nil
}
