package webhook

import (
	"strconv"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/spread"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// TestStartsIndex: after each informer event, the index's load is the
// load computed from scratch from the objects then in the cache, without
// the admitted object's own starts, at the zones' offsets of the moment.
func TestStartsIndex(t *testing.T) {
	type object struct {
		key, expression string
		timeZone        *string
	}
	january := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	july := time.Date(2026, 7, 15, 12, 0, 0, 0, time.UTC) // New York on daylight saving time
	sj := func(name string) objectRef { return objectRef{namespace: "a", name: name} }
	cronJob := func(name string) objectRef { return objectRef{cronJob: true, namespace: "a", name: name} }
	steps := []struct {
		name    string
		set     map[objectRef]object // added or updated
		remove  []objectRef
		now     time.Time
		without objectRef // the object being admitted
		// noAdmission: the step only feeds events
		noAdmission bool
	}{
		{name: "first objects", now: january, set: map[objectRef]object{
			sj("every-hour"):  {key: "a/every-hour", expression: "7 * * * *"},
			sj("hashed"):      {key: "a/hashed", expression: "H 3 * * *"},
			sj("new-york"):    {key: "a/new-york", expression: "30 2 * * *", timeZone: ptr.To("America/New_York")},
			sj("run-once"):    {key: "a/run-once", expression: ""},
			sj("bad"):         {key: "a/bad", expression: "61 * * * *"},
			cronJob("hashed"): {key: "a/hashed", expression: "7 3 * * *"}, // a CronJob may share a ScheduledJob's name
		}},
		{name: "admitting an update leaves its own starts out", now: january, without: sj("every-hour")},
		{name: "a status write changes nothing", now: january, set: map[objectRef]object{
			sj("hashed"): {key: "a/hashed", expression: "H 3 * * *"},
		}},
		{name: "a schedule changes", now: january, set: map[objectRef]object{
			sj("every-hour"): {key: "a/every-hour", expression: "8 * * * *"},
		}},
		{name: "a bad schedule is fixed", now: january, set: map[objectRef]object{
			sj("bad"): {key: "a/bad", expression: "1 * * * *"},
		}},
		{name: "deletions", now: january, remove: []objectRef{sj("hashed"), sj("never-seen")}},
		{name: "New York changes its offset", now: july, without: cronJob("hashed")},
		{name: "a new zoned object in summer", now: july, set: map[objectRef]object{
			cronJob("new-york"): {key: "a/new-york", expression: "0 2 * * *", timeZone: ptr.To("America/New_York")},
		}},
		{name: "and back in winter", now: january.AddDate(1, 0, 0)},
		{name: "an object added in summer with no admission until winter", now: july.AddDate(1, 0, 0), noAdmission: true, set: map[objectRef]object{
			sj("summer"): {key: "a/summer", expression: "0 4 * * *", timeZone: ptr.To("America/New_York")},
		}},
		{name: "the next winter", now: january.AddDate(2, 0, 0)},
	}
	index := newStartsIndex()
	if _, ok := index.othersLoad(objectRef{}, january); ok {
		t.Fatal("a load before any informer was watched")
	}
	synced := false
	index.synced = []func() bool{func() bool { return synced }}
	cache := map[objectRef]object{}
	for _, step := range steps {
		for ref, o := range step.set {
			index.set(ref, memberOf(kindOf(ref), o.key, o.expression, o.timeZone, ""), step.now)
			cache[ref] = o
		}
		for _, ref := range step.remove {
			index.remove(ref)
			delete(cache, ref)
		}
		if step.noAdmission {
			continue
		}
		if _, ok := index.othersLoad(step.without, step.now); ok != synced {
			t.Fatalf("%s: a load %v while the informers have synced %v", step.name, ok, synced)
		}
		synced = true
		var members []spread.Member
		for ref, o := range cache {
			if m := memberOf(kindOf(ref), o.key, o.expression, o.timeZone, ""); m.ok && ref != step.without {
				if _, err := m.member.Parse(); err == nil {
					members = append(members, m.member)
				}
			}
		}
		want, err := spread.LoadOf(members, step.now)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := index.othersLoad(step.without, step.now); *got != *want {
			t.Errorf("%s: the index's load (total %d) differs from the computed one (total %d)", step.name, got.Total(), want.Total())
		}
	}
}

// TestMinuteSet: a set adds its minutes, the first and last of the day
// and either side of a word's boundary too, and no other.
func TestMinuteSet(t *testing.T) {
	for _, minutes := range [][]int{nil, {0}, {spread.MinutesPerDay - 1}, {0, 63, 64, 127, 128, 1439}} {
		set := newMinuteSet(minutes)
		var got, want spread.Load
		set.addTo(&got, 2)
		want.AddStarts(minutes, 2)
		if got != want {
			t.Errorf("%v: the set adds other minutes", minutes)
		}
	}
}

// BenchmarkCrowdedMinuteCheck is the warning's cost per admission with
// 10,000 ScheduledJobs indexed (a tenth in a daylight-saving zone), and an
// informer event's cost to keep the index current.
func BenchmarkCrowdedMinuteCheck(b *testing.B) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	index := newStartsIndex()
	index.synced = []func() bool{func() bool { return true }}
	for i := range 10_000 {
		var zone *string
		if i%10 == 0 {
			zone = ptr.To("Europe/Amsterdam")
		}
		index.set(objectRef{namespace: "bench", name: strconv.Itoa(i)}, memberOf(v1alpha1.KindScheduledJob, "bench/"+strconv.Itoa(i), strconv.Itoa(i%60)+" * * * *", zone, ""), now)
	}
	admitted := memberOf(v1alpha1.KindScheduledJob, "bench/new", "17 * * * *", nil, "").member
	b.Run("admission", func(b *testing.B) {
		for b.Loop() {
			load, _ := index.othersLoad(objectRef{namespace: "bench", name: "new"}, now)
			if _, err := load.Shared(admitted, now); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("schedule change", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			index.set(objectRef{namespace: "bench", name: "7"}, memberOf(v1alpha1.KindScheduledJob, "bench/7", strconv.Itoa(i%60)+" * * * *", nil, ""), now)
		}
	})
}

// kindOf is the kind of the object ref names.
func kindOf(ref objectRef) string {
	if ref.cronJob {
		return v1alpha1.KindCronJob
	}
	return v1alpha1.KindScheduledJob
}

// TestMembersReadAsTheirKind: the crowded-minute index reads a CronJob's
// schedule as the CronJob controller does (no H, which it refuses), a
// ScheduledJob's with H, each in its zone.
func TestMembersReadAsTheirKind(t *testing.T) {
	if m := memberOf(v1alpha1.KindCronJob, "a/x", "H * * * *", nil, ""); m.ok {
		if _, err := m.member.Parse(); err == nil {
			t.Error("a CronJob's H schedule has starts; the CronJob controller never runs it")
		}
	}
	m := memberOf(v1alpha1.KindScheduledJob, "a/x", "H * * * *", ptr.To("Europe/Amsterdam"), string(v1alpha1.DSTKubernetes))
	if !m.ok || m.member.Location().String() != "Europe/Amsterdam" || m.member.Parser.DSTPolicy != cron.DSTKubernetes {
		t.Fatalf("a ScheduledJob's member %+v", m)
	}
	if _, err := m.member.Parse(); err != nil {
		t.Errorf("a ScheduledJob's H schedule: %v", err)
	}
	if m := memberOf(v1alpha1.KindScheduledJob, "a/x", "0 * * * *", ptr.To("Mars/Olympus"), ""); m.ok {
		t.Error("a member in an unknown zone has starts")
	}
}
