package webhook

import (
	"context"
	"fmt"
	"math/bits"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/spread"
)

// startsIndex is the cluster's load for the crowded-minute warning: for
// every ScheduledJob and CronJob in the manager's cache, the minutes of the
// UTC day in which it starts, and their sum per minute. The informers'
// event handlers keep it current, so a warning costs the same with ten
// thousand schedules as with ten; listing and adding them all on every
// admission slowed creating 10,000 ScheduledJobs from about 170 to 60 a
// second (docs/performance.md).
type startsIndex struct {
	mu      sync.Mutex
	load    spread.Load
	entries map[objectRef]*startsEntry
	// zones are the UTC offsets with which each zone's entries were last
	// computed; a daylight-saving change recomputes that zone's entries.
	zones map[string]zoneOffset
	// synced reports whether the handlers have seen every object that was
	// in the cache when they were added; until then the load is partial.
	synced []func() bool
}

// objectRef names a ScheduledJob or a CronJob: they may share a name.
type objectRef struct {
	cronJob         bool
	namespace, name string
}

// startsEntry is one object's starts, and what they were computed from.
type startsEntry struct {
	member  spread.Member
	offset  int // the zone's UTC offset in seconds when computed
	minutes minuteSet
}

type zoneOffset struct {
	location *time.Location
	offset   int
	// mixed: an entry was computed with another offset (added in summer
	// while the others are from winter), so the next look recomputes
	// even if the offset has changed back.
	mixed bool
}

// minuteSet is a set of minutes of the day: 180 bytes for any schedule,
// where a list of the 1,440 minutes of "* * * * *" would take 11 KiB.
type minuteSet [(spread.MinutesPerDay + 63) / 64]uint64

func newMinuteSet(minutes []int) minuteSet {
	var set minuteSet
	for _, m := range minutes {
		set[m/64] |= 1 << (m % 64)
	}
	return set
}

// addTo adds weight to load in each minute of the set.
func (s *minuteSet) addTo(load *spread.Load, weight int64) {
	for word, w := range s {
		for w != 0 {
			load[word*64+bits.TrailingZeros64(w)] += weight
			w &= w - 1
		}
	}
}

func newStartsIndex() *startsIndex {
	return &startsIndex{entries: map[objectRef]*startsEntry{}, zones: map[string]zoneOffset{}}
}

// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch

// watch feeds the index from c's ScheduledJob and CronJob informers. It
// does not wait for them to sync: the webhook may register after the
// manager started, and a warning is never worth blocking admission.
func (ix *startsIndex) watch(ctx context.Context, c cache.Cache) error {
	for _, obj := range []client.Object{&v1alpha1.ScheduledJob{}, &batchv1.CronJob{}} {
		informer, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watching %T for the crowded-minute warning: %w", obj, err)
		}
		registration, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { ix.setObject(obj, time.Now()) },
			UpdateFunc: func(_, obj any) { ix.setObject(obj, time.Now()) },
			DeleteFunc: ix.removeObject,
		})
		if err != nil {
			return fmt.Errorf("watching %T for the crowded-minute warning: %w", obj, err)
		}
		ix.mu.Lock()
		ix.synced = append(ix.synced, registration.HasSynced)
		ix.mu.Unlock()
	}
	return nil
}

// setObject indexes a ScheduledJob at its effective schedule, or a CronJob.
func (ix *startsIndex) setObject(obj any, now time.Time) {
	switch o := obj.(type) {
	case *v1alpha1.ScheduledJob:
		if o.DecodeError != "" {
			// Its schedule is unknown (ScheduledJob.UnmarshalJSON).
			ix.removeObject(o)
			return
		}
		expression := o.Spec.Schedule
		if o.Status.EffectiveSchedule != "" {
			expression = o.Status.EffectiveSchedule
		}
		if len(o.Spec.Schedules) > 0 {
			expression = "" // a list is not counted (docs/spreading.md)
		}
		ix.set(objectRef{namespace: o.Namespace, name: o.Name}, memberOf(v1alpha1.KindScheduledJob, o.HashKey(), expression, o.Spec.TimeZone, string(o.Spec.DSTPolicy)), now)
	case *batchv1.CronJob:
		ix.set(objectRef{cronJob: true, namespace: o.Namespace, name: o.Name}, memberOf(v1alpha1.KindCronJob, o.Namespace+"/"+o.Name, o.Spec.Schedule, o.Spec.TimeZone, ""), now)
	}
}

func (ix *startsIndex) removeObject(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	switch o := obj.(type) {
	case *v1alpha1.ScheduledJob:
		ix.remove(objectRef{namespace: o.Namespace, name: o.Name})
	case *batchv1.CronJob:
		ix.remove(objectRef{cronJob: true, namespace: o.Namespace, name: o.Name})
	}
}

// set indexes ref's schedule, read as its kind is read (memberOf). A
// schedule that does not parse (a runAt, an object admitted before a rule
// changed) has no starts.
func (ix *startsIndex) set(ref objectRef, found readMember, now time.Time) {
	member, ok := found.member, found.ok
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old := ix.entries[ref]
	if ok && old != nil && sameSchedule(old.member, member) && old.offset == offsetAt(member.Location(), now) {
		return // a status write or a label: the same starts
	}
	ix.removeLocked(ref)
	if !ok {
		return
	}
	entry := &startsEntry{member: member}
	if !entry.compute(now) {
		return
	}
	entry.minutes.addTo(&ix.load, 1)
	ix.entries[ref] = entry
	if name := zoneName(member.Location()); name != "" {
		zone, known := ix.zones[name]
		if !known {
			zone = zoneOffset{location: member.Location(), offset: entry.offset}
		}
		zone.mixed = zone.mixed || zone.offset != entry.offset
		ix.zones[name] = zone
	}
}

func (ix *startsIndex) remove(ref objectRef) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeLocked(ref)
}

func (ix *startsIndex) removeLocked(ref objectRef) {
	if old := ix.entries[ref]; old != nil {
		old.minutes.addTo(&ix.load, -1)
		delete(ix.entries, ref)
	}
}

// compute sets the entry's minutes for the zone's offset at now; false if
// the schedule does not parse.
func (e *startsEntry) compute(now time.Time) bool {
	minutes, err := e.member.UTCMinutes(now)
	if err != nil {
		return false
	}
	e.minutes, e.offset = newMinuteSet(minutes), offsetAt(e.member.Location(), now)
	return true
}

func sameSchedule(a, b spread.Member) bool {
	return a.Key == b.Key && a.Schedule == b.Schedule && zoneName(a.Location()) == zoneName(b.Location())
}

func zoneName(loc *time.Location) string {
	if loc == nil {
		return ""
	}
	return loc.String()
}

func offsetAt(loc *time.Location, now time.Time) int {
	if loc == nil {
		return 0
	}
	_, offset := now.In(loc).Zone()
	return offset
}

// othersLoad is the load of every indexed schedule but ref's own, at now's
// zone offsets; false until the informers have delivered every object.
func (ix *startsIndex) othersLoad(ref objectRef, now time.Time) (*spread.Load, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.synced) == 0 {
		return nil, false
	}
	for _, synced := range ix.synced {
		if !synced() {
			return nil, false
		}
	}
	ix.followOffsetChanges(now)
	load := ix.load
	if own := ix.entries[ref]; own != nil {
		own.minutes.addTo(&load, -1)
	}
	return &load, true
}

// followOffsetChanges recomputes the entries of each zone whose UTC offset
// changed since they were computed: about twice a year per daylight-saving
// zone, the only times an admission walks every entry.
func (ix *startsIndex) followOffsetChanges(now time.Time) {
	for name, zone := range ix.zones {
		offset := offsetAt(zone.location, now)
		if offset == zone.offset && !zone.mixed {
			continue
		}
		for _, entry := range ix.entries {
			if zoneName(entry.member.Location()) != name || entry.offset == offset {
				continue
			}
			entry.minutes.addTo(&ix.load, -1)
			entry.compute(now) // it parsed before; only the offset differs
			entry.minutes.addTo(&ix.load, 1)
		}
		ix.zones[name] = zoneOffset{location: zone.location, offset: offset}
	}
}
