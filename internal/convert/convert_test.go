package convert

import (
	"strings"
	"testing"
)

const cronJobs = `# Nightly reports.
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report # the team's
  namespace: reports
  annotations:
    warmup.ontime.dev/lead: 10m
    team: reports
spec:
  schedule: "30 2 * * *" # UTC
  timeZone: Europe/Amsterdam
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: report
              image: report:1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: untouched
data:
  schedule: "0 * * * *"
`

func TestCronJobToScheduledJobAndBack(t *testing.T) {
	scheduledJobs, converted, err := File("jobs.yaml", []byte(cronJobs), ToScheduledJob)
	if err != nil {
		t.Fatal(err)
	}
	out := string(scheduledJobs)
	for _, want := range []string{
		"# Nightly reports.", "name: report # the team's", `schedule: "30 2 * * *" # UTC`, // comments kept
		"apiVersion: ontime.dev/v1alpha1", "kind: ScheduledJob",
		"warmUp:\n    strategy: Placeholder\n    lead: 10m", "team: reports",
		"            - name: report", // the file's sequence indentation
		"kind: ConfigMap",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the ScheduledJob lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "warmup.ontime.dev/lead") {
		t.Errorf("the warm-up annotation stayed:\n%s", out)
	}
	if len(converted) != 1 || converted[0].Name != "report" || converted[0].To != "ScheduledJob" || converted[0].Note == "" {
		t.Errorf("converted %+v", converted)
	}

	back, converted, err := File("jobs.yaml", scheduledJobs, ToCronJob)
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != cronJobs && !sameExceptAnnotationOrder(string(back), cronJobs) {
		t.Errorf("the round trip changed the file:\n%s", back)
	}
	if len(converted) != 1 || !strings.Contains(converted[0].Note, "dstPolicy is Kubernetes") {
		t.Errorf("converted back %+v: the note should say the DST behavior changes", converted)
	}
}

// sameExceptAnnotationOrder: the warm-up annotation comes back after the
// other annotations.
func sameExceptAnnotationOrder(got, want string) bool {
	moved := strings.Replace(want, "    warmup.ontime.dev/lead: 10m\n    team: reports\n", "    team: reports\n    warmup.ontime.dev/lead: 10m\n", 1)
	return got == moved
}

func TestScheduledJobsACronJobCannotExpress(t *testing.T) {
	cases := map[string]string{
		"spec.schedule \"H 2 * * *\"":         `schedule: "H 2 * * *"`,
		"spec.schedule \"0 0 L * *\"":         `schedule: "0 0 L * *"`,
		"spec.runAt":                          "runAt: \"2026-12-01T00:00:00Z\"",
		"spec.spread":                         "schedule: \"H * * * *\"\n  spread: {strategy: Balanced}",
		"spec.suspendAfterFailures":           "schedule: \"0 2 * * *\"\n  suspendAfterFailures: 3",
		"spec.maxActive":                      "schedule: \"0 2 * * *\"\n  maxActive: 2",
		"spec.catchUp":                        "schedule: \"0 2 * * *\"\n  catchUp:\n    maxRuns: 3",
		"spec.schedules":                      "schedules: [\"0 2 * * *\", \"0 14 * * 6\"]",
		"spec.warmUp.strategy \"EarlyStart\"": "schedule: \"0 2 * * *\"\n  warmUp: {strategy: EarlyStart, lead: 5m}",
		"spec.warmUp.placeholder":             "schedule: \"0 2 * * *\"\n  warmUp: {lead: 5m, placeholder: {image: pause}}",
		"spec.warmUp.lead \"Auto\"":           "schedule: \"0 2 * * *\"\n  warmUp: {lead: Auto}",
	}
	for want, spec := range cases {
		manifest := "apiVersion: ontime.dev/v1alpha1\nkind: ScheduledJob\nmetadata:\n  name: odd\nspec:\n  " + spec + "\n  jobTemplate: {}\n"
		_, _, err := File("odd.yaml", []byte(manifest), ToCronJob)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "odd.yaml: ScheduledJob odd") {
			t.Errorf("%s: error %v, want one naming %s", spec, err, want)
		}
	}
}

func TestOtherFilesUntouched(t *testing.T) {
	content := "# just a Service\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
	out, converted, err := File("svc.yaml", []byte(content), ToScheduledJob)
	if err != nil || string(out) != content || len(converted) != 0 {
		t.Errorf("a file with nothing to convert changed: %v %q %v", err, out, converted)
	}
}

// TestCapacityBufferStrategyRoundTrip: a CronJob's strategy annotation
// becomes spec.warmUp.strategy, and comes back.
func TestCapacityBufferStrategyRoundTrip(t *testing.T) {
	cronJob := "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: report\n  annotations:\n    warmup.ontime.dev/lead: 5m\n    warmup.ontime.dev/strategy: CapacityBuffer\n" +
		"spec:\n  schedule: \"0 2 * * *\"\n  jobTemplate: {}\n"
	scheduledJob, _, err := File("report.yaml", []byte(cronJob), ToScheduledJob)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(scheduledJob), "warmUp:\n    strategy: CapacityBuffer\n    lead: 5m") || strings.Contains(string(scheduledJob), "warmup.ontime.dev") {
		t.Errorf("the ScheduledJob:\n%s", scheduledJob)
	}
	back, _, err := File("report.yaml", scheduledJob, ToCronJob)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"warmup.ontime.dev/lead: 5m", "warmup.ontime.dev/strategy: CapacityBuffer"} {
		if !strings.Contains(string(back), want) {
			t.Errorf("the CronJob lacks %q:\n%s", want, back)
		}
	}
}

// liveScheduledJobs is what kubectl get sj -A -o yaml prints: a List of
// objects as the API server has them.
const liveScheduledJobs = `apiVersion: v1
items:
- apiVersion: ontime.dev/v1alpha1
  kind: ScheduledJob
  metadata:
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"ontime.dev/v1alpha1","kind":"ScheduledJob"}
    creationTimestamp: "2026-11-27T02:00:00Z"
    generation: 3
    managedFields:
    - apiVersion: ontime.dev/v1alpha1
      manager: kubectl
      operation: Update
    name: nightly
    namespace: reports
    resourceVersion: "4711"
    uid: 0b6f7c1e-3f0e-4a51-9d7b-0c1d2e3f4a5b
  spec:
    schedule: 30 2 * * *
    jobTemplate:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: report
              image: report:1
  status:
    lastScheduleTime: "2026-11-27T02:30:00Z"
- apiVersion: ontime.dev/v1alpha1
  kind: ScheduledJob
  metadata:
    name: hourly
    namespace: reports
    resourceVersion: "4712"
  spec:
    schedule: 0 * * * *
    jobTemplate:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: hourly
              image: hourly:1
kind: List
metadata:
  resourceVersion: ""
`

// TestKubectlListToNewObjects: the documented uninstall recipe (kubectl
// get sj -A -o yaml | ontime convert -f - --to cronjob) converts every
// item of the List, and drops what the API server set (a create refuses a
// resourceVersion), the status and the last applied configuration of the
// old kind.
func TestKubectlListToNewObjects(t *testing.T) {
	out, converted, err := File("-", []byte(liveScheduledJobs), ToCronJob)
	if err != nil {
		t.Fatal(err)
	}
	if len(converted) != 2 {
		t.Fatalf("converted %+v, want both items", converted)
	}
	text := string(out)
	if strings.Count(text, "kind: CronJob") != 2 || strings.Contains(text, "kind: ScheduledJob") {
		t.Errorf("not every item became a CronJob:\n%s", text)
	}
	for _, gone := range []string{"resourceVersion: \"4711\"", "resourceVersion: \"4712\"", "uid:", "managedFields", "creationTimestamp", "generation:", "status:", "lastScheduleTime", "last-applied-configuration"} {
		if strings.Contains(text, gone) {
			t.Errorf("%q left in the converted objects:\n%s", gone, text)
		}
	}
	if !strings.Contains(text, "kind: List") || !strings.Contains(text, "name: nightly") {
		t.Errorf("the List or an object's name is lost:\n%s", text)
	}
}

// TestCronJobStateDropped: ontime's record of a CronJob's warm-up
// (warmup.ontime.dev/state) belongs to the CronJob, not to the
// ScheduledJob made from it.
func TestCronJobStateDropped(t *testing.T) {
	withState := strings.Replace(cronJobs, "    team: reports\n", "    team: reports\n    warmup.ontime.dev/state: '{\"problem\":\"x\"}'\n", 1)
	out, _, err := File("jobs.yaml", []byte(withState), ToScheduledJob)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "warmup.ontime.dev/state") || !strings.Contains(string(out), "team: reports") {
		t.Errorf("the state annotation is kept, or another is lost:\n%s", out)
	}
}
