package spread

import (
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"
)

const orgCronJobs = `# Index builders, one per organization (document 003).
apiVersion: batch/v1
kind: CronJob
metadata:
  name: index-builder-7   # organization 7
  namespace: indexing
spec:
  schedule: "H/30 * * * *"  # about every half hour
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: builder
            image: builder:1
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: index-builder-20
  namespace: indexing
spec:
  schedule: "H/30 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: builder
            image: builder:1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: untouched
data:
  schedule: "H * * * *"
`

const fixedCronJob = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
  namespace: indexing
spec:
  schedule: "0,30 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: c
            image: busybox
`

const hourlyScheduledJob = `apiVersion: ontime.dev/v1alpha1
kind: ScheduledJob
metadata:
  name: report
spec:
  schedule: "H * * * *"
  timeZone: Europe/Amsterdam
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: c
            image: busybox
`

func TestManifests(t *testing.T) {
	files := []ManifestFile{{Path: "orgs.yaml", Content: []byte(orgCronJobs)}, {Path: "fixed.yaml", Content: []byte(fixedCronJob)}, {Path: "sj.yaml", Content: []byte(hourlyScheduledJob)}}
	result, err := Manifests(files, ManifestOptions{Now: balanceNow, Read: testRead})
	if err != nil {
		t.Fatal(err)
	}
	changed, schedules := result.Changed, result.Schedules
	if len(changed) != 2 || changed[0].Path != "orgs.yaml" || changed[1].Path != "sj.yaml" {
		t.Fatalf("changed %v, want orgs.yaml and sj.yaml", paths(changed))
	}
	after := map[string]string{}
	for _, s := range schedules {
		after[s.Key] = s.After
	}
	checkSpreadSchedules(t, after)
	checkRewritten(t, string(changed[0].Content), after)

	// Run again on the written files: nothing moves.
	again := []ManifestFile{changed[0], files[1], changed[1]}
	resultAgain, err := Manifests(again, ManifestOptions{Now: balanceNow, Read: testRead})
	if err != nil {
		t.Fatal(err)
	}
	if len(resultAgain.Changed) != 0 {
		t.Errorf("a second run changed %v", paths(resultAgain.Changed))
	}
}

// checkSpreadSchedules: the fixed schedule stays; the two half-hourly
// builders and the fixed 0,30 take three different minutes of each half
// hour; the ScheduledJob loses its H.
func checkSpreadSchedules(t *testing.T, after map[string]string) {
	t.Helper()
	if after["indexing/nightly"] != "0,30 * * * *" {
		t.Errorf("the fixed schedule changed to %q", after["indexing/nightly"])
	}
	seen := map[string]string{}
	for _, key := range []string{"indexing/index-builder-7", "indexing/index-builder-20", "indexing/nightly"} {
		first := strings.SplitN(strings.Fields(after[key])[0], "-", 2)[0]
		first = strings.SplitN(first, ",", 2)[0]
		if other, ok := seen[first]; ok {
			t.Errorf("%s and %s both start at minute %s: %v", other, key, first, after)
		}
		seen[first] = key
	}
	if strings.Contains(after["default/report"], "H") {
		t.Errorf("the ScheduledJob kept H: %q", after["default/report"])
	}
}

// checkRewritten: the rewritten file has the new schedule, its comments,
// the untouched document, and none of kyaml's annotations.
func checkRewritten(t *testing.T, text string, after map[string]string) {
	t.Helper()
	if strings.Contains(text, "config.kubernetes.io") || strings.Contains(text, "internal.config") {
		t.Errorf("rewritten orgs.yaml carries kyaml's annotations:\n%s", text)
	}
	for _, want := range []string{"# Index builders, one per organization (document 003).", "# organization 7", "# about every half hour",
		`schedule: "` + after["indexing/index-builder-7"] + `"`, "kind: ConfigMap", `schedule: "H * * * *"`} {
		if !strings.Contains(text, want) {
			t.Errorf("rewritten orgs.yaml lacks %q:\n%s", want, text)
		}
	}
}

func TestManifestsAll(t *testing.T) {
	files := []ManifestFile{{Path: "fixed.yaml", Content: []byte(fixedCronJob)}}
	result, err := Manifests(files, ManifestOptions{All: true, Now: balanceNow, Read: testRead})
	if err != nil {
		t.Fatal(err)
	}
	got := result.Schedules[0].After
	if got == "0,30 * * * *" || !strings.HasSuffix(got, "-59/30 * * * *") {
		t.Errorf("with All, 0,30 became %q, want a hashed half-hourly schedule", got)
	}
}

func TestHashMinute(t *testing.T) {
	tests := map[string]string{
		"0 * * * *":       "H * * * *",
		"0,30 * * * *":    "H/30 * * * *",
		"*/15 * * * *":    "H/15 * * * *",
		"5-59/10 2 * * *": "H/10 2 * * *",
		"0,10 * * * *":    "0,10 * * * *", // not even over the hour
		"H * * * *":       "H * * * *",
		"@daily":          "@daily",
		"* * * * *":       "* * * * *",
	}
	for in, want := range tests {
		if got := HashMinute(in); got != want {
			t.Errorf("HashMinute(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestManifestsBadSchedule(t *testing.T) {
	bad := strings.Replace(fixedCronJob, `"0,30 * * * *"`, `"61 * * * *"`, 1)
	_, err := Manifests([]ManifestFile{{Path: "bad.yaml", Content: []byte(bad)}}, ManifestOptions{Now: balanceNow, Read: testRead})
	if err == nil || !strings.Contains(err.Error(), "bad.yaml: CronJob indexing/nightly: spec.schedule \"61 * * * *\"") {
		t.Errorf("error %v", err)
	}
}

func paths(files []ManifestFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// hourlyCronJob is an hourly H CronJob with these annotations (a YAML
// flow map).
func hourlyCronJob(name, annotations string) string {
	return `apiVersion: batch/v1
kind: CronJob
metadata:
  name: ` + name + `
  namespace: db
  annotations: ` + annotations + `
spec:
  schedule: "H * * * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: OnFailure, containers: [{name: c, image: busybox}]}}}}
`
}

// TestManifestsRunDurations: runs counted in every minute they are in
// flight. Two hourly CronJobs of 30 minutes (annotation) take the two
// halves of the hour; a ScheduledJob's spec.spread.runDuration counts; the
// others take the flag's duration; the result reports the busiest minute
// of runs in flight. A bad duration is refused naming its field.
func TestManifestsRunDurations(t *testing.T) {
	sj := strings.Replace(hourlyScheduledJob, "  timeZone: Europe/Amsterdam\n", "  spread: {runDuration: 10m}\n", 1)
	files := []ManifestFile{
		{Path: "a.yaml", Content: []byte(hourlyCronJob("long-a", `{ontime.dev/run-duration: 30m}`))},
		{Path: "b.yaml", Content: []byte(hourlyCronJob("long-b", `{ontime.dev/run-duration: 30m}`))},
		{Path: "c.yaml", Content: []byte(hourlyCronJob("short", `{}`))},
		{Path: "sj.yaml", Content: []byte(sj)},
	}
	result, err := Manifests(files, ManifestOptions{Now: balanceNow, Read: testRead, RunDuration: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	minutes, spans := map[string]int{}, map[string]int{}
	for _, s := range result.Schedules {
		minute, err := strconv.Atoi(strings.Fields(s.After)[0])
		if err != nil {
			t.Fatalf("%s: %q", s.Key, s.After)
		}
		minutes[s.Key], spans[s.Key] = minute, s.RunMinutes
	}
	if want := map[string]int{"db/long-a": 30, "db/long-b": 30, "db/short": 2, "default/report": 10}; !maps.Equal(spans, want) {
		t.Errorf("run minutes %v, want %v", spans, want)
	}
	if apart := (minutes["db/long-b"] - minutes["db/long-a"] + 60) % 60; apart != 30 {
		t.Errorf("the 30-minute runs start at :%02d and :%02d, so they overlap", minutes["db/long-a"], minutes["db/long-b"])
	}
	if result.Peak != 2 || result.Ideal != 2 {
		t.Errorf("busiest minute %d runs in flight (ideal %d), want 2 and 2: %v", result.Peak, result.Ideal, minutes)
	}

	bad := []ManifestFile{{Path: "bad.yaml", Content: []byte(hourlyCronJob("bad", `{ontime.dev/run-duration: forever}`))}}
	if _, err := Manifests(bad, ManifestOptions{Now: balanceNow, Read: testRead}); err == nil ||
		!strings.Contains(err.Error(), `bad.yaml: CronJob db/bad: metadata.annotations.ontime.dev/run-duration "forever": must be a duration above 0 and at most 24h`) {
		t.Errorf("error %v", err)
	}
}
