// Package spreadledger keeps the Balanced spread groups' ledgers: where
// each ScheduledJob of a group is placed, in a ConfigMap per group in the
// controller's namespace (the format is internal/spread's), and what the
// ledgers say to Prometheus. The ScheduledJob controller asks it for a
// ScheduledJob's placement before it plans.
package spreadledger

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/spread"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// Balanced spreading places each ScheduledJob in its group's ledger
// (internal/spread: a ConfigMap per group in the controller's namespace).
// Every placement is a read-modify-write of the ledger guarded by its
// resourceVersion, so two ScheduledJobs placed at the same instant, by two
// workers or two replicas, cannot take the same decision from the same
// state: the second write conflicts, and is made again from the ledger that
// holds the first. The ledger survives restarts and leader changes; each
// ScheduledJob's status.spread mirrors its own entry, and restores it if
// the ledger is lost.

// The ledgers live in the controller's namespace, so the permission is a Role there.
// +kubebuilder:rbac:groups="",namespace=system,resources=configmaps,verbs=get;list;watch;create;update

// Cache limits the manager's ConfigMap cache to the ledgers, and
// hands them out without a deep copy: every reconcile of a Balanced
// ScheduledJob reads its entry from a ledger that holds the whole group
// (150 kB at a thousand members), and copying it each time made a burst of
// runs measurably later (docs/performance.md). Ledgers read from the cache
// are therefore never modified; changes go through update, which reads the
// ledger from the API server.
func Cache(namespace string) cache.ByObject {
	selector := labels.NewSelector()
	exists, _ := labels.NewRequirement(spread.GroupLabel, selection.Exists, nil)
	return cache.ByObject{Namespaces: map[string]cache.Config{namespace: {}}, Label: selector.Add(*exists), UnsafeDisableDeepCopy: ptr.To(true)}
}

// gracePeriod: an entry whose ScheduledJob the cache does not hold
// is dropped once it is older than this, so that a ScheduledJob deleted
// while no controller ran stops counting, and one just created that the
// cache has not seen yet keeps its place.
const gracePeriod = 5 * time.Minute

// updateBackoff bounds the read-modify-write attempts of one placement
// (8, about a second in all); the reconcile is retried after that.
var updateBackoff = wait.Backoff{Steps: 8, Duration: 10 * time.Millisecond, Factor: 1.5, Jitter: 0.1}

// Store places ScheduledJobs in their groups' ledgers.
type Store struct {
	// cached reads ledgers and ScheduledJobs from the manager's cache and
	// writes ledgers; apiReader reads a ledger before changing it.
	cached    client.Client
	apiReader client.Reader
	namespace string
	// locks serialize placements per group within this process, so that
	// workers do not conflict with each other; correctness rests on the
	// resourceVersion, not on these.
	locks sync.Map // group -> *sync.Mutex
}

// NewStore is the store of the ledgers in namespace.
func NewStore(cached client.Client, apiReader client.Reader, namespace string) *Store {
	return &Store{cached: cached, apiReader: apiReader, namespace: namespace}
}

// Placement returns where the ScheduledJob is placed for its current
// schedule under a Balanced spread (nil under Hash or for runAt), placing
// it first if needed, and removes it from groups it has left.
func (l *Store) Placement(ctx context.Context, sj *v1alpha1.ScheduledJob, now time.Time) (*v1alpha1.SpreadStatus, error) {
	settings := sj.SpreadOf()
	balanced := settings.Strategy == v1alpha1.SpreadBalanced && sj.Spec.Schedule != "" && sj.DeletionTimestamp == nil
	if left := sj.Status.Spread; left != nil && (!balanced || left.Group != settings.Group) {
		if err := l.forget(ctx, left.Group, spread.LedgerKey(sj.Namespace, sj.Name)); err != nil {
			return nil, err
		}
	}
	if !balanced {
		return nil, nil
	}
	var cm corev1.ConfigMap
	err := l.cached.Get(ctx, types.NamespacedName{Namespace: l.namespace, Name: spread.LedgerName(settings.Group)}, &cm)
	if err == nil {
		if placed := cachedPlacement(&cm, sj, settings); placed != nil {
			return placed, nil
		}
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	return l.place(ctx, sj, settings, now)
}

// cachedPlacement is the ScheduledJob's placement as the cached ledger
// holds it, if that is for its current schedule and span; nil if it must
// be placed (or its entry updated) through the API server.
func cachedPlacement(cm *corev1.ConfigMap, sj *v1alpha1.ScheduledJob, settings v1alpha1.Spread) *v1alpha1.SpreadStatus {
	entry, epoch, ok, err := spread.ReadEntry(cm, spread.LedgerKey(sj.Namespace, sj.Name))
	if err != nil || !ok || entry.Schedule != sj.Spec.Schedule || entry.Span != spanOf(settings) {
		return nil
	}
	// A cache behind a rebalance this ScheduledJob has already taken up
	// must not take it back.
	if last := sj.RecordedPlacement(); last != nil && last.Epoch > max(entry.Epoch, epoch) {
		return last
	}
	return statusOf(settings.Group, entry, epoch)
}

func statusOf(group string, entry spread.LedgerEntry, epoch int64) *v1alpha1.SpreadStatus {
	return &v1alpha1.SpreadStatus{Group: group, Schedule: entry.Schedule, Choices: entry.Choices, Epoch: max(entry.Epoch, epoch)}
}

// place writes the ScheduledJob's entry into its group's ledger: the one
// its status remembers if the ledger lost it, else a new placement.
func (l *Store) place(ctx context.Context, sj *v1alpha1.ScheduledJob, settings v1alpha1.Spread, now time.Time) (*v1alpha1.SpreadStatus, error) {
	lock := l.lock(settings.Group)
	lock.Lock()
	defer lock.Unlock()
	key := spread.LedgerKey(sj.Namespace, sj.Name)
	var placed *v1alpha1.SpreadStatus
	err := l.update(ctx, settings.Group, func(entries map[string]spread.LedgerEntry, epoch int64) (bool, error) {
		if entry, ok := entries[key]; ok && entry.Schedule == sj.Spec.Schedule {
			placed = statusOf(settings.Group, entry, epoch)
			if span := spanOf(settings); entry.Span != span {
				// A changed runDuration counts for the placements to
				// come; this ScheduledJob stays where it is.
				entry.Span = span
				entries[key] = entry
				return true, nil
			}
			return false, nil
		}
		l.dropGone(ctx, entries, now)
		delete(entries, key)
		entry, err := newEntry(sj, entries, epoch, now)
		if err != nil {
			return false, err
		}
		entries[key] = entry
		placed = statusOf(settings.Group, entry, epoch)
		return true, nil
	})
	return placed, err
}

// newEntry places sj among the others: where its status says, if that is
// a placement of its current schedule in this group (the ledger was lost),
// else where the balancer puts it.
func newEntry(sj *v1alpha1.ScheduledJob, others map[string]spread.LedgerEntry, epoch int64, now time.Time) (spread.LedgerEntry, error) {
	settings := sj.SpreadOf()
	entry := spread.LedgerEntry{Schedule: sj.Spec.Schedule, DSTPolicy: string(sj.Spec.DSTPolicy), Weight: weightOf(sj, settings.Weight),
		Span: spanOf(settings), Epoch: epoch, Placed: metav1.NewTime(now)}
	if sj.Spec.TimeZone != nil {
		entry.TimeZone = *sj.Spec.TimeZone
	}
	if last := sj.RecordedPlacement(); last != nil {
		entry.Choices, entry.Epoch = last.Choices, last.Epoch
		return entry, nil
	}
	load, err := spread.LedgerLoad(others, now, v1alpha1.ScheduleParser)
	if err != nil {
		return entry, err
	}
	newcomer, err := spread.MemberOf(spread.LedgerKey(sj.Namespace, sj.Name), entry, v1alpha1.ScheduleParser)
	if err != nil {
		return entry, err
	}
	entry.Choices, err = spread.Assign(load, newcomer, now)
	return entry, err
}

// spanOf is the span a ledger entry records: 0 for a run counted in its
// start's minute only (as entries written before spec.spread.runDuration
// record), else the minutes of spec.spread.runDuration.
func spanOf(settings v1alpha1.Spread) int {
	if span := settings.SpanMinutes(); span > 1 {
		return span
	}
	return 0
}

// weightOf is what one start of sj counts for: 1, or with weight CPU the
// millicores its run requests (each pod's effective request times the pods
// that run at once).
func weightOf(sj *v1alpha1.ScheduledJob, weight v1alpha1.SpreadWeight) int64 {
	if weight != v1alpha1.WeightCPU {
		return 1
	}
	job := &sj.Spec.JobTemplate.Spec
	cpu := warmup.EffectiveRequests(&job.Template.Spec)[corev1.ResourceCPU]
	return max(cpu.MilliValue()*int64(warmup.PodsPerRun(job)), 1)
}

// dropGone removes the entries of ScheduledJobs the cache does not hold,
// once they are past the grace period.
func (l *Store) dropGone(ctx context.Context, entries map[string]spread.LedgerEntry, now time.Time) {
	for key, entry := range entries {
		nn, ok := spread.ParseLedgerKey(key)
		if !ok || now.Sub(entry.Placed.Time) < gracePeriod {
			continue
		}
		if err := l.cached.Get(ctx, nn, &v1alpha1.ScheduledJob{}); apierrors.IsNotFound(err) {
			delete(entries, key)
		}
	}
}

// forget removes a ScheduledJob's entry from a group's ledger.
func (l *Store) forget(ctx context.Context, group, key string) error {
	lock := l.lock(group)
	lock.Lock()
	defer lock.Unlock()
	return l.update(ctx, group, func(entries map[string]spread.LedgerEntry, _ int64) (bool, error) {
		_, ok := entries[key]
		delete(entries, key)
		return ok, nil
	})
}

// ForgetDeleted removes a deleted ScheduledJob from every ledger that the
// cache shows holding it.
func (l *Store) ForgetDeleted(ctx context.Context, nn types.NamespacedName) error {
	var ledgers corev1.ConfigMapList
	if err := l.cached.List(ctx, &ledgers, client.InNamespace(l.namespace), client.HasLabels{spread.GroupLabel}); err != nil {
		return err
	}
	key := spread.LedgerKey(nn.Namespace, nn.Name)
	for _, cm := range ledgers.Items {
		if _, ok := cm.Data[key]; ok {
			if err := l.forget(ctx, cm.Labels[spread.GroupLabel], key); err != nil {
				return err
			}
		}
	}
	return nil
}

// update reads a group's ledger from the API server, lets change edit its
// entries, and writes it back if change says so, again from a fresh read
// when the write conflicts (retry.OnError, bounded by updateBackoff).
func (l *Store) update(ctx context.Context, group string, change func(map[string]spread.LedgerEntry, int64) (bool, error)) error {
	name := types.NamespacedName{Namespace: l.namespace, Name: spread.LedgerName(group)}
	changedMeanwhile := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	err := retry.OnError(updateBackoff, changedMeanwhile, func() error {
		cm := &corev1.ConfigMap{}
		err := l.apiReader.Get(ctx, name, cm)
		exists := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading spread group %q (ConfigMap %s): %w", group, name, err)
		}
		if !exists {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name, Labels: map[string]string{spread.GroupLabel: group}}}
		}
		entries, epoch, err := spread.ReadLedger(cm)
		if err != nil {
			return err
		}
		changed, err := change(entries, epoch)
		if err != nil || !changed {
			return err
		}
		if err := spread.WriteLedger(cm, entries, epoch); err != nil {
			return err
		}
		if exists {
			return l.cached.Update(ctx, cm)
		}
		return l.cached.Create(ctx, cm)
	})
	if changedMeanwhile(err) {
		return fmt.Errorf("spread group %q: ConfigMap %s kept changing; will retry: %w", group, name, err)
	}
	return err
}

func (l *Store) lock(group string) *sync.Mutex {
	lock, _ := l.locks.LoadOrStore(group, &sync.Mutex{})
	return lock.(*sync.Mutex)
}

// Members maps a rebalanced ledger to its members, so each picks up
// its new placement; ordinary placements change no other member and
// enqueue none.
func Members(_ context.Context, obj client.Object) []reconcile.Request {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil
	}
	requests := make([]reconcile.Request, 0, len(cm.Data))
	for key := range cm.Data {
		if nn, ok := spread.ParseLedgerKey(key); ok {
			requests = append(requests, reconcile.Request{NamespacedName: nn})
		}
	}
	return requests
}

// Rebalanced passes ledger updates that change the epoch.
var Rebalanced = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetAnnotations()[spread.EpochAnnotation] != e.ObjectNew.GetAnnotations()[spread.EpochAnnotation]
	},
}
