//go:build integration

package app

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/clitest"
)

// TestKubectlFlagsAndCompletion: against a real API server, the commands
// that read a ScheduledJob take kubectl's flags (k8s.io/cli-runtime's
// ConfigFlags: --server overrides the kubeconfig's, -n the context's
// namespace), print through kubectl's templates, and complete sj/NAME
// from the namespace -n names, -n from the cluster's namespaces and
// --context from the kubeconfig.
func TestKubectlFlagsAndCompletion(t *testing.T) {
	c, kubeconfig := clitest.StartAPIServerKubeconfig(t, "config/crd/bases")
	ctx := context.Background()
	podSpec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox:1.37.0"}}}
	for _, o := range [][3]string{{"reports", "nightly", "30 2 * * *"}, {"reports", "hourly", "0 * * * *"}, {"default", "elsewhere", "30 2 * * *"}, {"default", "paused", "* * * * *"}} {
		if o[0] != "default" {
			_ = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o[0]}})
		}
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: o[0], Name: o[1]},
			Spec: v1alpha1.ScheduledJobSpec{Schedule: o[2], Suspend: ptr.To(o[1] == "paused"), JobTemplate: batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec}}}}}
		if err := c.Create(ctx, sj); err != nil {
			t.Fatal(err)
		}
	}

	checkFlagsAndTemplates(t, kubeconfig)
	checkEveryScheduledJob(t, kubeconfig)
	checkCompletion(t, kubeconfig)
	checkExplainCronJob(t, c, kubeconfig)
	checkReport(t, c, kubeconfig)
}

// checkReport: ontime report ranks the ScheduledJobs with a start
// objective, worst first (those without one are left out), names the
// dominant phase of the latest late start, and exits 1 when one misses
// its objective; -A adds the namespace; a namespace where every one meets
// it exits 0.
func checkReport(t *testing.T, c client.Client, kubeconfig string) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []string{"slo", "slo-ok"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	late := v1alpha1.RunStart{ScheduledTime: metav1.NewTime(time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)), StartTime: metav1.NewTime(time.Date(2026, 11, 29, 2, 1, 34, 0, time.UTC)),
		Lateness: metav1.Duration{Duration: 94 * time.Second}, Phases: []v1alpha1.RunPhase{
			{Name: v1alpha1.PhaseConcurrencyGroup, Duration: metav1.Duration{Duration: 80 * time.Second}},
			{Name: v1alpha1.PhaseImagePull, Duration: metav1.Duration{Duration: 14 * time.Second}}}}
	for _, o := range []struct {
		namespace, name string
		runs, onTime    int32
		recent          []v1alpha1.RunStart
	}{
		{"slo", "comfortable", 200, 200, nil},
		{"slo", "missing", 100, 90, []v1alpha1.RunStart{late}},
		{"slo", "close", 100, 99, nil},
		{"slo", "new", 0, 0, nil},
		{"slo-ok", "fine", 10, 10, nil},
	} {
		sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: o.namespace, Name: o.name},
			Spec: v1alpha1.ScheduledJobSpec{Schedule: "0 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox:1.37.0"}}}}}},
				StartObjective: &v1alpha1.StartObjective{Within: metav1.Duration{Duration: 30 * time.Second}, Percent: "99"}}}
		if err := c.Create(ctx, sj); err != nil {
			t.Fatal(err)
		}
		if o.runs > 0 {
			attained := float64(o.onTime) / float64(o.runs)
			sj.Status.StartObjective = &v1alpha1.StartObjectiveStatus{Runs: o.runs, OnTime: o.onTime,
				Attainment: strconv.FormatFloat(100*attained, 'f', 2, 64), Met: attained >= 0.99}
			sj.Status.RecentRunStarts = o.recent
			if err := c.Status().Update(ctx, sj); err != nil {
				t.Fatal(err)
			}
		}
	}
	stdout, stderr, code := runCLI(t, "report", "--kubeconfig", kubeconfig, "-n", "slo")
	want := `NAME          OBJECTIVE                ATTAINMENT   RUNS   LATE   MET   LAST LATE START
missing       99% within 30s over 7d   90.00%       100    10     no    1m34s (ConcurrencyGroup 1m20s)
close         99% within 30s over 7d   99.00%       100    1      yes   -
comfortable   99% within 30s over 7d   100.00%      200    0      yes   -
new           99% within 30s over 7d   -            0      0      yes   -
1 of 4 ScheduledJobs with a start objective miss it (4 listed).
`
	if code != 1 || stdout != want || !strings.Contains(stderr, "misses its start objective: 1 of 4") {
		t.Errorf("report -n slo: exit %d, stdout\n%s\nstderr %q; want exit 1 and\n%s", code, stdout, stderr, want)
	}
	stdout, _, code = runCLI(t, "report", "-A", "--kubeconfig", kubeconfig, "-o", `jsonpath={range .items[*]}{.namespace}/{.name} {.met}{"\n"}{end}`)
	if want := "slo/missing false\nslo/close true\nslo/comfortable true\nslo-ok/fine true\nslo/new true\n"; code != 1 || stdout != want {
		t.Errorf("report -A -o jsonpath: exit %d, stdout %q, want %q", code, stdout, want)
	}
	if stdout, stderr, code := runCLI(t, "report", "--kubeconfig", kubeconfig, "-n", "slo-ok"); code != 0 || !strings.Contains(stdout, "0 of 1 ScheduledJobs with a start objective miss it") {
		t.Errorf("report -n slo-ok: exit %d, stdout %q, stderr %q; want exit 0", code, stdout, stderr)
	}
}

// checkExplainCronJob: explain cj/NAME reads an annotated CronJob from the
// cluster, with -n, and prints its recorded starts; -o jsonpath reads them.
func checkExplainCronJob(t *testing.T, c client.Client, kubeconfig string) {
	t.Helper()
	start := `{"lastRunStart":{"scheduledTime":"2026-11-29T02:00:00Z","startTime":"2026-11-29T02:01:05Z","lateness":"1m5s",` +
		`"phases":[{"name":"Node","duration":"1m3s"},{"name":"ImagePull","duration":"2s"}]}}`
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "backup",
		Annotations: map[string]string{v1alpha1.WarmUpLeadAnnotation: "30s", v1alpha1.WarmUpStateAnnotation: start}},
		Spec: batchv1.CronJobSpec{Schedule: "0 2 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox:1.37.0"}}}}}}}}
	if err := c.Create(context.Background(), cj); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "explain", "cj/backup", "--kubeconfig", kubeconfig, "-n", "reports")
	if want := "2026-11-29T02:00:00Z  1m5s late: Node 1m3s, ImagePull 2s\n    it waited 1m3s for a new node after a warm-up begun 30s ahead: its node took about 1m33s to come up"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("explain cj/backup: exit %d, stdout %q (stderr %q), want it to contain %q", code, stdout, stderr, want)
	}
	stdout, stderr, code = runCLI(t, "explain", "cronjob/backup", "--kubeconfig", kubeconfig, "-n", "reports", "-o", "jsonpath={.recentRuns[0].dominant}")
	if code != 0 || stdout != "Node" {
		t.Errorf("explain cronjob/backup -o jsonpath: exit %d, stdout %q (stderr %q), want Node", code, stdout, stderr)
	}
}

// checkFlagsAndTemplates: -n and a jsonpath template on sj/NAME; --server
// overrides the kubeconfig's cluster.
func checkFlagsAndTemplates(t *testing.T, kubeconfig string) {
	t.Helper()
	stdout, stderr, code := runCLI(t, "next", "sj/nightly", "--kubeconfig", kubeconfig, "-n", "reports", "--count", "2",
		"--from", "2026-11-29T00:00:00Z", "-o", "jsonpath={.items[1]}")
	if code != 0 || stdout != "2026-11-30T02:30:00Z" {
		t.Errorf("next -o jsonpath: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// --server is kubectl's: it overrides the kubeconfig's cluster.
	if _, stderr, code := runCLI(t, "next", "sj/nightly", "--kubeconfig", kubeconfig, "-n", "reports", "--server", "https://127.0.0.1:1"); code == 0 || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("--server https://127.0.0.1:1: exit %d, stderr %q; want the request sent there", code, stderr)
	}
}

// checkEveryScheduledJob: ontime next sj, -A and -o wide.
func checkEveryScheduledJob(t *testing.T, kubeconfig string) {
	t.Helper()
	// sj alone: every ScheduledJob's next runs, merged; -A: of every
	// namespace. A suspended one has none.
	stdout, stderr, code := runCLI(t, "next", "sj", "--kubeconfig", kubeconfig, "-n", "reports", "--count", "3", "--from", "2026-11-29T00:00:00Z")
	if want := "NAME      RUN                    WARM-UP FROM\nhourly    2026-11-29T01:00:00Z   -\nhourly    2026-11-29T02:00:00Z   -\nnightly   2026-11-29T02:30:00Z   -\n"; code != 0 || stdout != want {
		t.Errorf("next sj -n reports: exit %d, stdout %q (stderr %q), want %q", code, stdout, stderr, want)
	}
	stdout, stderr, code = runCLI(t, "next", "sj", "--kubeconfig", kubeconfig, "-n", "reports", "--count", "1", "--from", "2026-11-29T00:00:00Z", "-o", "wide")
	if want := "NAME     RUN                    WARM-UP FROM   SCHEDULE    TIME ZONE\nhourly   2026-11-29T01:00:00Z   -              0 * * * *   UTC\n"; code != 0 || stdout != want {
		t.Errorf("next sj -o wide: exit %d, stdout %q (stderr %q), want %q", code, stdout, stderr, want)
	}
	stdout, stderr, code = runCLI(t, "next", "sj", "-A", "--kubeconfig", kubeconfig, "--count", "4", "--from", "2026-11-29T01:30:00Z",
		"-o", `jsonpath={range .items[*]}{.namespace}/{.name} {.run}{"\n"}{end}`)
	if want := "reports/hourly 2026-11-29T02:00:00Z\ndefault/elsewhere 2026-11-29T02:30:00Z\nreports/nightly 2026-11-29T02:30:00Z\nreports/hourly 2026-11-29T03:00:00Z\n"; code != 0 || stdout != want {
		t.Errorf("next sj -A: exit %d, stdout %q (stderr %q), want %q", code, stdout, stderr, want)
	}

}

// checkCompletion: sj/NAME from -n's namespace, -n from the cluster's
// namespaces, --context from the kubeconfig.
func checkCompletion(t *testing.T, kubeconfig string) {
	t.Helper()
	// Each command line ends with the word being completed.
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"next", "-n", "reports", "sj/"}, []string{"sj/hourly", "sj/nightly"}},
		{[]string{"explain", "-n", "reports", "sj/n"}, []string{"sj/nightly"}},
		{[]string{"trigger", ""}, []string{"sj/elsewhere", "sj/paused"}},
		{[]string{"backfill", "--namespace", "reports", ""}, []string{"sj/hourly", "sj/nightly"}},
		{[]string{"next", "sj/nightly", "-n", "rep"}, []string{"reports"}},
		{[]string{"next", "sj/nightly", "--context", ""}, []string{"envtest"}},
	} {
		args := append([]string{"__complete", tc.args[0], "--kubeconfig", kubeconfig}, tc.args[1:]...)
		stdout, stderr, code := runCLI(t, args...)
		if got := completions(stdout); code != 0 || !slices.Equal(got, tc.want) {
			t.Errorf("ontime %q: exit %d, completions %q (stderr %q), want %q", args, code, got, stderr, tc.want)
		}
	}
}

// completions reads cobra's __complete output: one candidate per line,
// then the directive (":4"); the required flags cobra offers beside the
// arguments are left out.
func completions(stdout string) []string {
	var got []string
	for line := range strings.SplitSeq(strings.TrimSpace(stdout), "\n") {
		if !strings.HasPrefix(line, ":") && !strings.HasPrefix(line, "-") && line != "" {
			got = append(got, line)
		}
	}
	slices.Sort(got)
	return got
}
