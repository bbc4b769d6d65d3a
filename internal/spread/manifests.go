package spread

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/ontime-dev/ontime/pkg/cron"
)

// Spreading manifests, for GitOps: the CronJobs and ScheduledJobs of a set
// of files are one balanced group. Schedules with H are placed where the
// fewest of the others start and written back as concrete schedules (in
// place, keeping comments), so a CronJob, which does not know H, gets
// one; schedules without H stay and count as load. Written back, the
// placement is stable: a later run places only the H schedules added
// since, on top of the concrete ones.

// ManifestFile is one YAML file, one or more documents.
type ManifestFile struct {
	Path    string
	Content []byte
}

// ManifestOptions tune Manifests.
type ManifestOptions struct {
	// All spreads every schedule, not only those with H: a fixed minute
	// becomes H, an evenly stepped minute field (*/15, 0,30) H/n.
	All bool
	// Namespace is the namespace of objects that name none.
	Namespace string
	// Now fixes the zones' UTC offsets.
	Now time.Time
	// Read says how each object's schedule is read (its kind's way, except
	// that a CronJob's may hold H, which Manifests replaces).
	Read ScheduleReader
	// RunDuration, when set, is how long the runs of objects that give no
	// duration of their own last: each run then counts in every minute it
	// is in flight, so the group is balanced by runs in flight, as a
	// concurrency group's limit counts them. A CronJob gives its own with
	// the RunDurationAnnotation, a ScheduledJob with
	// spec.spread.runDuration.
	RunDuration time.Duration
}

// RunDurationAnnotation on a CronJob manifest tells ontime spread -f how
// long its runs last (a Go duration, such as 20m), as a ScheduledJob's
// spec.spread.runDuration does.
const RunDurationAnnotation = "ontime.dev/run-duration"

// ManifestResult is what Manifests did.
type ManifestResult struct {
	// Changed are the files with a schedule written back.
	Changed []ManifestFile
	// Schedules are every schedule found, ordered by key.
	Schedules []ManifestSchedule
	// Peak is the busiest minute of the day (UTC) after placement: the
	// most starts in one minute, or runs in flight for objects with a run
	// duration; PeakMinute is the first minute of the day that holds it,
	// Ideal the lowest peak any placement could reach.
	Peak, Ideal int64
	PeakMinute  int
}

// ManifestSchedule is one scheduled object's schedule before and after.
type ManifestSchedule struct {
	// Key is namespace/name, which seeds H.
	Key    string `json:"key"`
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Before string `json:"before"`
	After  string `json:"after"`
	// RunMinutes is how many minutes one run counts in: 1 counts its
	// start only.
	RunMinutes int `json:"runMinutes"`
}

// scheduled is a CronJob or ScheduledJob found in a file.
type scheduled struct {
	file     int
	node     *yaml.RNode
	schedule *yaml.RNode
	info     ManifestSchedule
	member   Member
}

// Manifests balances the schedules of the CronJobs and ScheduledJobs
// in files, and returns the files it changed and every schedule it found.
func Manifests(files []ManifestFile, opts ManifestOptions) (*ManifestResult, error) {
	docs := make([][]*yaml.RNode, len(files))
	var found []*scheduled
	for i, f := range files {
		nodes, err := (&kio.ByteReadWriter{Reader: bytes.NewReader(f.Content), PreserveSeqIndent: true}).Read()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		docs[i] = nodes
		objects, err := scheduledObjects(i, f.Path, nodes, opts)
		if err != nil {
			return nil, err
		}
		found = append(found, objects...)
	}
	load, err := placeManifests(found, opts.Now)
	if err != nil {
		return nil, err
	}
	result := &ManifestResult{Peak: load.Peak(), Ideal: load.Ideal(), PeakMinute: slices.Index(load[:], load.Peak())}
	if result.Changed, err = writeChanged(files, docs, found); err != nil {
		return nil, err
	}
	for _, s := range found {
		result.Schedules = append(result.Schedules, s.info)
	}
	return result, nil
}

// scheduledObjects finds the CronJobs and ScheduledJobs among nodes.
func scheduledObjects(file int, path string, nodes []*yaml.RNode, opts ManifestOptions) ([]*scheduled, error) {
	var out []*scheduled
	for _, node := range nodes {
		kind, apiVersion := node.GetKind(), node.GetApiVersion()
		isCronJob := kind == "CronJob" && strings.HasPrefix(apiVersion, "batch/")
		isScheduledJob := kind == "ScheduledJob" && strings.HasPrefix(apiVersion, "ontime.dev/")
		if !isCronJob && !isScheduledJob {
			continue
		}
		schedule, err := node.Pipe(yaml.Lookup("spec", "schedule"))
		if err != nil || schedule == nil {
			continue // a runAt ScheduledJob, or no schedule at all
		}
		namespace := cmp.Or(node.GetNamespace(), opts.Namespace, "default")
		s := &scheduled{file: file, node: node, schedule: schedule,
			info: ManifestSchedule{Key: namespace + "/" + node.GetName(), Path: path, Kind: kind, Before: schedule.YNode().Value}}
		source := s.info.Before
		if opts.All {
			source = HashMinute(source)
		}
		span, err := runMinutes(node, isScheduledJob, opts.RunDuration)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", path, kind, s.info.Key, err)
		}
		s.member = Member{Key: s.info.Key, Schedule: source, Span: span}
		s.info.RunMinutes = span
		parser, err := opts.Read(kind, s.info.Key, stringAt(node, "spec", "timeZone"), stringAt(node, "spec", "dstPolicy"))
		if err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", path, kind, s.info.Key, err)
		}
		s.member.Parser = parser
		out = append(out, s)
	}
	return out, nil
}

// runMinutes is how many minutes of the day an object's runs count in: a
// ScheduledJob's spec.spread.runDuration (as the controller reads it), a
// CronJob's RunDurationAnnotation, else fallback, in whole minutes rounded
// up; 1 if none is given.
func runMinutes(node *yaml.RNode, isScheduledJob bool, fallback time.Duration) (int, error) {
	value, field := node.GetAnnotations()[RunDurationAnnotation], "metadata.annotations."+RunDurationAnnotation
	if isScheduledJob {
		value, field = stringAt(node, "spec", "spread", "runDuration"), "spec.spread.runDuration"
	}
	d := fallback
	if value != "" {
		var err error
		if d, err = time.ParseDuration(value); err != nil || d <= 0 || d > MinutesPerDay*time.Minute {
			return 0, fmt.Errorf("%s %q: must be a duration above 0 and at most 24h, such as 20m", field, value)
		}
	}
	return int(max((d+time.Minute-1)/time.Minute, 1)), nil
}

// stringAt is the string at path in node, "" if there is none.
func stringAt(node *yaml.RNode, path ...string) string {
	if value, _ := node.Pipe(yaml.Lookup(path...)); value != nil {
		return value.YNode().Value
	}
	return ""
}

// HashMinute turns a schedule's minute field into H: one value becomes
// H, values evenly stepped through the hour (*/15, 0,30, 5-59/10) H/n.
// Other schedules stay as they are.
func HashMinute(schedule string) string {
	fields := strings.Fields(schedule)
	if len(fields) != 5 || strings.Contains(fields[0], "H") {
		return schedule
	}
	// Only the minute field, which holds no H here: any dialect reads it.
	minutes, err := cron.Parse(fields[0] + " * * * *")
	if err != nil {
		return schedule
	}
	step, ok := evenStep(minutes.MinutesOfDay())
	if !ok {
		return schedule
	}
	replacement := "H"
	if step < 60 {
		replacement = fmt.Sprintf("H/%d", step)
	}
	return strings.Join(append([]string{replacement}, fields[1:]...), " ")
}

// evenStep reports the step of minutes of an hour (the first hour of
// MinutesOfDay) that repeat evenly through it, 60 for a single minute.
func evenStep(minutesOfDay []int) (int, bool) {
	var minutes []int
	for _, m := range minutesOfDay {
		if m < 60 {
			minutes = append(minutes, m)
		}
	}
	// Every minute stays every minute: H/1 would be one minute an hour.
	if len(minutes) == 0 || len(minutes) == 60 || 60%len(minutes) != 0 {
		return 0, false
	}
	step := 60 / len(minutes)
	for i, m := range minutes {
		if m != minutes[0]+i*step {
			return 0, false
		}
	}
	return step, true
}

// placeManifests places the H schedules, in key order, on top of the load
// of the others, records each effective schedule, and returns the load of
// them all.
func placeManifests(found []*scheduled, now time.Time) (*Load, error) {
	slices.SortStableFunc(found, func(a, b *scheduled) int { return cmp.Compare(a.info.Key, b.info.Key) })
	members := make([]Member, len(found))
	for i, s := range found {
		members[i] = s.member
		spec, err := s.member.Parse()
		if err != nil {
			return nil, fmt.Errorf("%s: %s %s: spec.schedule %q: %w", s.info.Path, s.info.Kind, s.info.Key, s.member.Schedule, err)
		}
		if len(spec.HashTerms()) == 0 {
			members[i].Choices = []int{} // fixed: counts as load, is not placed
		}
	}
	placed, err := Place(members, now)
	if err != nil {
		return nil, err
	}
	for i, s := range found {
		spec, err := placed[i].Parse()
		if err != nil {
			return nil, err
		}
		s.info.After = spec.Effective()
		if len(spec.HashTerms()) == 0 {
			s.info.After = s.info.Before
		}
	}
	return LoadOf(placed, now)
}

// writeChanged sets the new schedules and renders the files that changed.
func writeChanged(files []ManifestFile, docs [][]*yaml.RNode, found []*scheduled) ([]ManifestFile, error) {
	dirty := map[int]bool{}
	for _, s := range found {
		if s.info.After != s.info.Before {
			s.schedule.YNode().Value = s.info.After
			dirty[s.file] = true
		}
	}
	var changed []ManifestFile
	for i, f := range files {
		if !dirty[i] {
			continue
		}
		var out bytes.Buffer
		if err := (&kio.ByteReadWriter{Writer: &out, PreserveSeqIndent: true}).Write(docs[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		changed = append(changed, ManifestFile{Path: f.Path, Content: out.Bytes()})
	}
	return changed, nil
}
