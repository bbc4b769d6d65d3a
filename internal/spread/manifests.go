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
}

// ManifestSchedule is one scheduled object's schedule before and after.
type ManifestSchedule struct {
	// Key is namespace/name, which seeds H.
	Key    string `json:"key"`
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Before string `json:"before"`
	After  string `json:"after"`
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
// in files, and returns the files it changed and every schedule it found,
// ordered by key.
func Manifests(files []ManifestFile, opts ManifestOptions) ([]ManifestFile, []ManifestSchedule, error) {
	docs := make([][]*yaml.RNode, len(files))
	var found []*scheduled
	for i, f := range files {
		nodes, err := (&kio.ByteReadWriter{Reader: bytes.NewReader(f.Content), PreserveSeqIndent: true}).Read()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		docs[i] = nodes
		objects, err := scheduledObjects(i, f.Path, nodes, opts)
		if err != nil {
			return nil, nil, err
		}
		found = append(found, objects...)
	}
	if err := placeManifests(found, opts.Now); err != nil {
		return nil, nil, err
	}
	changed, err := writeChanged(files, docs, found)
	if err != nil {
		return nil, nil, err
	}
	schedules := make([]ManifestSchedule, len(found))
	for i, s := range found {
		schedules[i] = s.info
	}
	return changed, schedules, nil
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
		s.member = Member{Key: s.info.Key, Schedule: source}
		parser, err := opts.Read(kind, s.info.Key, stringAt(node, "spec", "timeZone"), stringAt(node, "spec", "dstPolicy"))
		if err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", path, kind, s.info.Key, err)
		}
		s.member.Parser = parser
		out = append(out, s)
	}
	return out, nil
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
// of the others, and records each effective schedule.
func placeManifests(found []*scheduled, now time.Time) error {
	slices.SortStableFunc(found, func(a, b *scheduled) int { return cmp.Compare(a.info.Key, b.info.Key) })
	members := make([]Member, len(found))
	for i, s := range found {
		members[i] = s.member
		spec, err := s.member.Parse()
		if err != nil {
			return fmt.Errorf("%s: %s %s: spec.schedule %q: %w", s.info.Path, s.info.Kind, s.info.Key, s.member.Schedule, err)
		}
		if len(spec.HashTerms()) == 0 {
			members[i].Choices = []int{} // fixed: counts as load, is not placed
		}
	}
	placed, err := Place(members, now)
	if err != nil {
		return err
	}
	for i, s := range found {
		spec, err := placed[i].Parse()
		if err != nil {
			return err
		}
		s.info.After = spec.Effective()
		if len(spec.HashTerms()) == 0 {
			s.info.After = s.info.Before
		}
	}
	return nil
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
