//go:build integration

package webhook

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/internal/validation"
)

// The suite installs the CRD and the generated webhook configuration into a
// real API server and serves the Validator on envtest's local endpoint, so
// every request goes through admission as it would in a cluster.
var (
	apiClient client.Client
	warnings  = &warningRecorder{}
	testEnv   *envtest.Environment
)

type warningRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, message string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, message)
}

func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.seen
	w.seen = nil
	return seen
}

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	var config *rest.Config
	var err error
	testEnv, config, err = testenv.StartWith(testenv.Options{CRDDirs: []string{"config/crd/bases"}, WebhookDirs: []string{"config/webhook"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = testEnv.Stop() }()
	scheme := ontimescheme.New()
	server := testEnv.WebhookInstallOptions
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:        scheme,
		Metrics:       metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{Host: server.LocalServingHost, Port: server.LocalServingPort, CertDir: server.LocalServingCertDir}),
	})
	if err == nil {
		err = NewValidator(mgr.GetClient(), testCrowdThreshold).Register(mgr)
	}
	if err == nil {
		err = NewBackfillValidator(mgr.GetAPIReader()).Register(mgr)
	}
	if err == nil {
		err = RegisterGroupValidators(mgr)
	}
	if err == nil {
		// The CronJob validator, counting the CronJobs it is called for.
		err = ctrl.NewWebhookManagedBy(mgr, &batchv1.CronJob{}).WithValidator(cronJobCalls).Complete()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()
	if err := waitForServer(net.JoinHostPort(server.LocalServingHost, strconv.Itoa(server.LocalServingPort))); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	withWarnings := rest.CopyConfig(config)
	withWarnings.WarningHandler = warnings
	if apiClient, err = client.New(withWarnings, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// config/warmup's PriorityClass, as config/ installs it.
	if err := apiClient.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.DefaultPlaceholderPriorityClass},
		Value: -5, PreemptionPolicy: ptr.To(corev1.PreemptNever)}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func validScheduledJob(name string) *v1alpha1.ScheduledJob {
	return &v1alpha1.ScheduledJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1alpha1.ScheduledJobSpec{
			Schedule: "*/5 * * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
			}}}},
		},
	}
}

func TestAdmission(t *testing.T) {
	tests := []struct {
		name       string
		mutate     func(*v1alpha1.ScheduledJob)
		message    string // empty: accepted
		warning    string
		noWarnings bool
	}{
		{name: "valid", mutate: func(*v1alpha1.ScheduledJob) {}},
		{name: "valid with zone and extras", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.TimeZone = ptr.To("Europe/Amsterdam")
			sj.Spec.DSTPolicy = v1alpha1.DSTKubernetes
			sj.Spec.StartingDeadlineSeconds = ptr.To[int64](300)
		}},
		{name: "run once", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = ""
			sj.Spec.RunAt = &metav1.Time{Time: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
		}},
		{name: "bad minute", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "61 * * * *" },
			message: `spec.schedule: Invalid value: "61 * * * *": minute "61": 61 is above the maximum 59`},
		{name: "never fires", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "0 0 30 2 *" },
			message: `spec.schedule: Invalid value: "0 0 30 2 *": never fires: no allowed month has an allowed day`},
		{name: "extended syntax", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "0 0 L * 7" }, noWarnings: true},
		{name: "H", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "H/15 H(9-17) * * 1-5" }, noWarnings: true},
		{name: "H with generateName", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Name, sj.GenerateName = "", "gen-"; sj.Spec.Schedule = "H * * * *" }, noWarnings: true},
		{name: "H range outside the field", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "H(50-70) * * * *" },
			message: `spec.schedule: Invalid value: "H(50-70) * * * *": minute "H(50-70)": range must lie within 0-59 and start before it ends`},
		{name: "Balanced spread", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "H * * * *"
			sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, Group: "reports"}
		}, noWarnings: true},
		{name: "spread without H", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "0 * * * *"
			sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced}
		}, warning: `spec.spread: spec.schedule "0 * * * *" has no H field, so there is nothing to spread; write H where any value will do, such as "H * * * *"`},
		{name: "Balanced spread with a run duration", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "H * * * *"
			sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, RunDuration: &metav1.Duration{Duration: 20 * time.Minute}}
		}, noWarnings: true},
		{name: "spread run duration of 0", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "H * * * *"
			sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, RunDuration: &metav1.Duration{}}
		}, message: `spec.spread.runDuration: Invalid value: "0s": must be above 0 and at most 24h0m0s`},
		{name: "spread run duration over a day", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "H * * * *"
			sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, RunDuration: &metav1.Duration{Duration: 25 * time.Hour}}
		}, message: `spec.spread.runDuration: Invalid value: "25h0m0s": must be above 0 and at most 24h0m0s`},
		{name: "group member balanced by starts", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "H * * * *"
			sj.Spec.ConcurrencyGroup = &v1alpha1.ConcurrencyGroupRef{Name: "db"}
			sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced}
		}, warning: `spec.spread: the ScheduledJob joins concurrency group "db", which caps runs in flight, but is balanced by its starts; set spec.spread.runDuration to its typical run`},
		{name: "spread run duration with Hash", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "H * * * *"
			sj.Spec.Spread = &v1alpha1.Spread{RunDuration: &metav1.Duration{Duration: 20 * time.Minute}}
		}, warning: `spec.spread.runDuration: has no effect with strategy Hash: only a Balanced spread counts runs in flight`},
		{name: "spread group not a DNS label (schema)", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "H * * * *"
			sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, Group: "Nightly_Batch"}
		}, message: "spec.spread.group: Invalid value: \"Nightly_Batch\""},
		{name: "spread strategy (schema)", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "H * * * *"
			sj.Spec.Spread = &v1alpha1.Spread{Strategy: "Random"}
		}, message: `spec.spread.strategy: Unsupported value: "Random"`},
		{name: "TZ in schedule", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "TZ=UTC 0 0 * * *" },
			message: "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"},
		{name: "sub-minute every", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "@every 30s" },
			message: "use @every 1m or more"},
		{name: "unknown zone", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.TimeZone = ptr.To("Mars/Olympus") },
			message: `spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone`},
		{name: "Local zone", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.TimeZone = ptr.To("Local") },
			message: "timeZone must be an explicit time zone"},
		{name: "both schedule and runAt", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.RunAt = &metav1.Time{Time: time.Now()}
		}, message: "spec.runAt: Invalid value: "},
		{name: "neither schedule nor runAt", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedule = "" },
			message: "spec.schedule: Required value: set schedule, schedules or runAt"},
		{name: "schedules", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule, sj.Spec.Schedules = "", []string{"*/15 * * * 1-5", "H * * * 0,6"}
		}, noWarnings: true},
		{name: "schedule and schedules", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.Schedules = []string{"0 * * * *"} },
			message: `spec.schedules: Invalid value: ["0 * * * *"]: set schedule or schedules, not both`},
		{name: "schedules with a bad entry", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule, sj.Spec.Schedules = "", []string{"0 * * * *", "0 25 * * *"}
		}, message: `spec.schedules[1]: Invalid value: "0 25 * * *": hour "25": 25 is above the maximum 23`},
		{name: "schedules with @every", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule, sj.Spec.Schedules = "", []string{"@every 2h"}
		}, message: `spec.schedules[0]: Invalid value: "@every 2h": @every is not allowed in spec.schedules`},
		{name: "schedules with a Balanced spread", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule, sj.Spec.Schedules = "", []string{"H * * * *"}
			sj.Spec.Spread = &v1alpha1.Spread{Strategy: v1alpha1.SpreadBalanced, Group: "reports"}
		}, message: `spec.spread.strategy: Invalid value: "Balanced": not with spec.schedules`},
		{name: "21 schedules (schema)", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule, sj.Spec.Schedules = "", slices.Repeat([]string{"0 * * * *"}, 21)
		}, message: "spec.schedules: Too many: 21: must have at most 20 items"},
		{name: "runAt before 1970", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = ""
			sj.Spec.RunAt = &metav1.Time{Time: time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC)}
		}, message: `spec.runAt: Invalid value: "1969-12-31T23:59:00Z": must be from 1970-01-01T00:00:00Z to before 2100-01-01T00:00:00Z`},
		{name: "runAt in 2100", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = ""
			sj.Spec.RunAt = &metav1.Time{Time: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}
		}, message: `spec.runAt: Invalid value: "2100-01-01T00:00:00Z": must be from`},
		{name: "activeDeadlineSeconds 0", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.JobTemplate.Spec.ActiveDeadlineSeconds = ptr.To[int64](0)
		}, message: "spec.jobTemplate.spec.activeDeadlineSeconds: Invalid value: 0: must be greater than 0"},
		{name: "Indexed without completions (CronJob dry run)", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.JobTemplate.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}, message: "spec.jobTemplate.spec.completions: Required value: when completion mode is Indexed"},
		{name: "negative deadline (schema)", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) },
			message: "spec.startingDeadlineSeconds"},
		{name: "bad policy (schema)", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.ConcurrencyPolicy = "Sometimes" },
			message: `spec.concurrencyPolicy: Unsupported value: "Sometimes"`},
		{name: "container without image (dry run)", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = ""
		}, message: "spec.jobTemplate.spec.template.spec.containers[0].image: Required value"},
		{name: "restartPolicy Always (dry run)", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}, message: "spec.jobTemplate.spec.template.spec.restartPolicy"},
		{name: "selector", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
		}, message: "`selector` will be auto-generated"},
		{name: "name too long", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Name = strings.Repeat("a", 53) },
			message: "metadata.name: Invalid value: \"" + strings.Repeat("a", 53) + "\": must be no more than 52 characters"},
		{name: "suspendAfterFailures 0 (schema)", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.SuspendAfterFailures = ptr.To[int32](0) },
			message: "spec.suspendAfterFailures"},
		{name: "suspendAfterFailures, failed Jobs not kept", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.SuspendAfterFailures, sj.Spec.FailedJobsHistoryLimit = ptr.To[int32](3), ptr.To[int32](0)
		}, warning: "spec.suspendAfterFailures: with failedJobsHistoryLimit 0 the failed Jobs are deleted"},
		{name: "tiny deadline", mutate: func(sj *v1alpha1.ScheduledJob) { sj.Spec.StartingDeadlineSeconds = ptr.To[int64](0) },
			warning: "startingDeadlineSeconds: 0 leaves almost no time"},
		{name: "warm-up", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "0 * * * *"
			sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: minutes(10)}
		}, noWarnings: true},
		{name: "warm-up lead too short", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(10 * time.Second)}
		}, message: `spec.warmUp.lead: Invalid value: "10s": must be from 30s to 24h0m0s`},
		{name: "warm-up hold too long", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: minutes(1), Placeholder: &v1alpha1.PlaceholderWarmUp{HoldAfterSchedule: &metav1.Duration{Duration: time.Hour}}}
		}, message: `spec.warmUp.placeholder.holdAfterSchedule: Invalid value: "1h0m0s": must be above 0 and at most 15m0s`},
		{name: "EarlyStart lead not shorter than the interval", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: minutes(10), Strategy: v1alpha1.WarmUpEarlyStart}
		}, message: `spec.warmUp.lead: Invalid value: "10m0s": with strategy EarlyStart, lead must be shorter than the shortest interval between runs (5m0s)`},
		{name: "EarlyStart lead not shorter than an H/n interval", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "H/5 * * * *"
			sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: minutes(10), Strategy: v1alpha1.WarmUpEarlyStart}
		}, message: `spec.warmUp.lead: Invalid value: "10m0s": with strategy EarlyStart, lead must be shorter than the shortest interval between runs (5m0s)`},
		{name: "Placeholder lead longer than the interval", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: minutes(10)}
		}, warning: "spec.warmUp.lead: 10m0s is not shorter than the shortest interval between runs (5m0s)"},
		{name: "placeholder PriorityClass missing", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "0 * * * *"
			sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: minutes(10), Placeholder: &v1alpha1.PlaceholderWarmUp{PriorityClassName: "no-such-class"}}
		}, warning: `spec.warmUp.placeholder.priorityClassName: PriorityClass "no-such-class" cannot be read`},
		{name: "run not above the placeholders", mutate: func(sj *v1alpha1.ScheduledJob) {
			sj.Spec.Schedule = "0 * * * *"
			sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: minutes(10)}
			sj.Spec.JobTemplate.Spec.Template.Spec.PriorityClassName = v1alpha1.DefaultPlaceholderPriorityClass
		}, warning: "the run's pods have priority -5, not above the placeholders' -5"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sj := validScheduledJob("sj-" + strconv.Itoa(i))
			tc.mutate(sj)
			warnings.take()
			err := apiClient.Create(context.Background(), sj)
			switch {
			case tc.message == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.message != "" && (err == nil || !strings.Contains(err.Error(), tc.message)):
				t.Fatalf("got %v, want an error containing\n  %s", err, tc.message)
			}
			seen := warnings.take()
			if tc.warning != "" && !strings.Contains(strings.Join(seen, "\n"), tc.warning) {
				t.Errorf("no warning containing %q in %q", tc.warning, seen)
			}
			if tc.noWarnings && len(seen) > 0 {
				t.Errorf("warnings %q, want none", seen)
			}
		})
	}
}

// testCrowdThreshold is high enough that TestAdmission's ScheduledJobs
// never crowd a minute, so only TestCrowdedMinuteWarning sees the warning.
const testCrowdThreshold = 20

// TestCrowdedMinuteWarning: a schedule starting in a minute with
// testCrowdThreshold other schedules is admitted with a warning proposing
// H; with H, or in a quiet minute, there is none.
func TestCrowdedMinuteWarning(t *testing.T) {
	ctx := context.Background()
	for i := range testCrowdThreshold {
		cronJob := &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "crowd-" + strconv.Itoa(i)},
			Spec:       batchv1.CronJobSpec{Schedule: "17 * * * *", JobTemplate: validScheduledJob("x").Spec.JobTemplate},
		}
		if err := apiClient.Create(ctx, cronJob); err != nil {
			t.Fatal(err)
		}
	}
	want := `spec.schedule: "17 3 * * *" starts in a minute in which 20 other ScheduledJobs and CronJobs start; write "H 3 * * *" to give it a minute of its own`
	crowded := validScheduledJob("crowded")
	crowded.Spec.Schedule = "17 3 * * *"
	// Each try is an admission with two dry runs; with the other packages'
	// tests on the same two cores, a few of them can take seconds.
	var seen []string
	testenv.Eventually(t, 30*time.Second, "the warning (the webhook's index to hold every CronJob)", func() bool {
		warnings.take()
		if err := apiClient.Create(ctx, crowded.DeepCopy(), client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		seen = warnings.take()
		return strings.Contains(strings.Join(seen, "\n"), want)
	})
	for _, schedule := range []string{"H 3 * * *", "18 * * * *"} {
		quiet := validScheduledJob("quiet")
		quiet.Spec.Schedule = schedule
		warnings.take()
		if err := apiClient.Create(ctx, quiet, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if seen := warnings.take(); len(seen) > 0 {
			t.Errorf("%q: warnings %q, want none", schedule, seen)
		}
	}
}

func minutes(n int) v1alpha1.Lead { return v1alpha1.FixedLead(time.Duration(n) * time.Minute) }

func TestUpdateKeepsLegacyTZButNotBoth(t *testing.T) {
	errs, _ := validation.Validate(&v1alpha1.ScheduledJob{Spec: v1alpha1.ScheduledJobSpec{Schedule: "TZ=UTC 0 1 * * *"}},
		&v1alpha1.ScheduledJob{Spec: v1alpha1.ScheduledJobSpec{Schedule: "TZ=UTC 0 0 * * *"}}, time.Now())
	if len(errs) != 0 {
		t.Errorf("editing an object that already had TZ: %v", errs)
	}
	errs, _ = validation.Validate(&v1alpha1.ScheduledJob{Spec: v1alpha1.ScheduledJobSpec{Schedule: "TZ=UTC 0 1 * * *", TimeZone: ptr.To("UTC")}},
		&v1alpha1.ScheduledJob{Spec: v1alpha1.ScheduledJobSpec{Schedule: "TZ=UTC 0 0 * * *"}}, time.Now())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "cannot use both timeZone field and TZ") {
		t.Errorf("TZ and timeZone: %v", errs)
	}
	// A zone is checked when it changes, so an object stays editable.
	old := validScheduledJob("x")
	old.Spec.TimeZone = ptr.To("Gone/Zone")
	edited := old.DeepCopy()
	edited.Spec.Suspend = ptr.To(true)
	if errs, _ := validation.Validate(edited, old, time.Now()); len(errs) != 0 {
		t.Errorf("unchanged zone re-validated: %v", errs)
	}
}

// TestKubectlExplain: every field is documented for kubectl explain.
func TestKubectlExplain(t *testing.T) {
	user, err := testEnv.AddUser(envtest.User{Name: "explainer", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := user.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{
		"scheduledjobs.spec":                                      "spec says when to run the Job and how",
		"sj.spec.startingDeadlineSeconds":                         "how late, in seconds, a run may still",
		"sj.spec.dstPolicy":                                       "daylight-saving change",
		"sj.spec.suspendAfterFailures":                            "once that many of its runs have failed in a row",
		"sj.status.failures.countedThrough":                       "the scheduled time of the latest run counted",
		"sj.spec.maxActive":                                       "the most runs that may be",
		"sj.spec.schedules":                                       "time that several entries have is one run",
		"sj.spec.catchUp.maxRuns":                                 "the most missed runs started",
		"sj.status.catchUp.dropped":                               "older missed runs it does not start",
		"sj.spec.runAt":                                           "runs the Job once",
		"sj.status.lastMissedTime":                                "most recent run that did",
		"sj.status.nextScheduleTime":                              "scheduled time of the next run",
		"sj.spec.warmUp.lead":                                     "warm-up for a 10:00 run begins at 09:50",
		"sj.spec.warmUp.strategy":                                 "EarlyStart creates the run's Job lead early",
		"sj.spec.warmUp.placeholder.holdAfterSchedule":            "at the latest holdAfterSchedule",
		"sj.status.warmUp.readyTime":                              "every warm-up pod had a node",
		"sj.status.lastRunStart.lateness":                         "startTime minus scheduledTime",
		"sj.spec.jobTemplate.metadata.labels":                     "Map of string keys and values",
		"sj.spec.jobTemplate.spec.template.spec.containers.image": "Container image name",
		"backfills.spec":                                          "which past runs of a ScheduledJob to run now, how many at once",
		"backfill.spec.redo":                                      "Failed also reruns the times whose Job failed",
		"backfill.spec.maxActive":                                 "how many of the backfill's runs may be active at once",
		"backfill.status.next":                                    "earliest time not yet started nor skipped",
		"sj.spec.concurrencyGroup.priority":                       "orders this member's waiting runs",
		"cg.spec.maxActive":                                       "the most runs of the group's members that may be active",
		"cg.spec.limitPerLabelValue.key":                          "the label's key",
		"cg.status.oldestWaitingSince":                            "when the run that has waited longest began",
		"ccg.spec":                                                "bounds how many runs of the group's members are active",
		"ccg.spec.namespaceSelector":                              "selects by their labels the namespaces whose ScheduledJobs and CronJobs may join",
	} {
		stdout, stderr, err := kubectl.Run("explain", field)
		if err != nil {
			t.Fatalf("kubectl explain %s: %v %s", field, err, readAll(stderr))
		}
		if out := readAll(stdout); !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("kubectl explain %s:\n%s\nwant it to mention %q", field, out, want)
		}
	}
}

// TestPriorityWarningsUseTheControllersClass: a ScheduledJob that names no
// placeholder PriorityClass gets the controller's --placeholder-priority-class,
// and admission checks that one.
func TestPriorityWarningsUseTheControllersClass(t *testing.T) {
	v := NewValidator(apiClient, 0).WithDefaults(v1alpha1.ControllerDefaults{PlaceholderPriorityClass: "policy-allowed-low"})
	sj := validScheduledJob("controller-class")
	sj.Spec.Schedule = "0 * * * *"
	sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: minutes(10)}
	want := `spec.warmUp.placeholder.priorityClassName: PriorityClass "policy-allowed-low" cannot be read`
	if got := v.priorityWarnings(context.Background(), sj); !strings.Contains(strings.Join(got, "\n"), want) {
		t.Errorf("warnings %q, want one containing %q", got, want)
	}
	sj.Spec.WarmUp.Placeholder = &v1alpha1.PlaceholderWarmUp{PriorityClassName: v1alpha1.DefaultPlaceholderPriorityClass}
	if got := v.priorityWarnings(context.Background(), sj); len(got) != 0 {
		t.Errorf("the spec names an existing class: warnings %q, want none", got)
	}
}

// TestMessagesOfInputATypedClientCannotSend: what a user's YAML can say
// and a typed client cannot, through the API server and the webhook, with
// the message the user sees: each names the field and shows the value. A
// deadline's at that is not HH:MM is refused by the CRD's pattern, before
// the webhook (docs/observability.md quotes this message).
func TestMessagesOfInputATypedClientCannotSend(t *testing.T) {
	for name, tc := range map[string]struct {
		set  map[string]any
		want string
	}{
		"runAt's offset out of range": {map[string]any{"schedule": nil, "runAt": "2026-01-01T00:00:00+25:00"},
			`spec.runAt: Invalid value: "2026-01-01T00:00:00+25:00": must be an RFC 3339 time such as 2026-01-01T00:00:00Z: time zone offset hour out of range`},
		"a deadline's at not HH:MM": {map[string]any{"deadline": map[string]any{"at": "7:00"}},
			`spec.deadline.at: Invalid value: "7:00": spec.deadline.at in body should match '^([01][0-9]|2[0-3]):[0-5][0-9]$'`},
		"an empty deadline": {map[string]any{"deadline": map[string]any{}},
			`spec.deadline: Required value: set after (such as 4h after each run's time) or at (a time of day such as 07:00)`},
	} {
		t.Run(name, func(t *testing.T) {
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(validScheduledJob("raw"))
			if err != nil {
				t.Fatal(err)
			}
			obj := &unstructured.Unstructured{Object: content}
			obj.SetAPIVersion(v1alpha1.GroupVersion.String())
			obj.SetKind("ScheduledJob")
			spec := content["spec"].(map[string]any)
			for key, value := range tc.set {
				if value == nil {
					delete(spec, key)
				} else {
					spec[key] = value
				}
			}
			err = apiClient.Create(context.Background(), obj)
			if err == nil {
				_ = apiClient.Delete(context.Background(), obj)
				t.Fatalf("accepted; want refused with %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("refused with:\n%v\nwant it to say:\n%s", err, tc.want)
			}
		})
	}
}
