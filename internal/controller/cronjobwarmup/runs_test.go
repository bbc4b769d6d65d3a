package cronjobwarmup

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

func mustTime(value string) time.Time {
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		panic(err)
	}
	return t
}

// TestRunsOfACronJob: runs as the CronJob controller computes them:
// robfig's daylight-saving behavior in spec.timeZone, @every from the last
// run.
func TestRunsOfACronJob(t *testing.T) {
	tests := map[string]struct {
		schedule, zone string
		last           string // status.lastScheduleTime
		now, next      string
	}{
		// 2026-03-08 02:30 does not exist in New York: robfig skips it.
		"DST gap skipped": {schedule: "30 2 * * *", zone: "America/New_York", now: "2026-03-08T05:00:00Z", next: "2026-03-09T06:30:00Z"},
		// 01:30 happens twice on 2026-11-01: robfig runs both.
		"DST repeat run twice": {schedule: "30 1 * * *", zone: "America/New_York", now: "2026-11-01T05:31:00Z", next: "2026-11-01T06:30:00Z"},
		"UTC when unset":       {schedule: "0 9 * * 1-5", now: "2026-11-27T10:00:00Z", next: "2026-11-30T09:00:00Z"},
		"@every from the last": {schedule: "@every 90m", last: "2026-11-24T08:10:00Z", now: "2026-11-24T09:00:00Z", next: "2026-11-24T09:40:00Z"},
		"legacy TZ= prefix":    {schedule: "TZ=Asia/Tokyo 0 9 * * *", now: "2026-11-24T01:00:00Z", next: "2026-11-25T00:00:00Z"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(mustTime("2026-01-01T00:00:00Z"))},
				Spec: batchv1.CronJobSpec{Schedule: tc.schedule}}
			if tc.zone != "" {
				cj.Spec.TimeZone = ptr.To(tc.zone)
			}
			if tc.last != "" {
				cj.Status.LastScheduleTime = &metav1.Time{Time: mustTime(tc.last)}
			}
			runs, err := runsOf(cj)
			if err != nil {
				t.Fatal(err)
			}
			if got := runs.Next(mustTime(tc.now)); !got.Equal(mustTime(tc.next)) {
				t.Errorf("next run %v, want %v", got, tc.next)
			}
		})
	}
	bad := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "0 0 * * *", TimeZone: ptr.To("Mars/Olympus")}}
	if _, err := runsOf(bad); err == nil || err.Error() != `cannot read the CronJob's schedule: spec.timeZone "Mars/Olympus": unknown time zone` {
		t.Errorf("unknown zone: %v", err)
	}
}

func TestLeadOf(t *testing.T) {
	for value, want := range map[string]string{
		"10m":  "",
		"1m":   "",
		"10s":  `annotation warmup.ontime.dev/lead "10s": must be from 30s to 24h0m0s`,
		"soon": `annotation warmup.ontime.dev/lead "soon": not a duration such as 10m`,
	} {
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1alpha1.WarmUpLeadAnnotation: value}}}
		_, ok, err := leadOf(cj)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if !ok || got != want {
			t.Errorf("%q: ok %v, error %q; want %q", value, ok, got, want)
		}
	}
	if _, ok, _ := leadOf(&batchv1.CronJob{}); ok {
		t.Error("a CronJob without the annotation asks for warm-up")
	}
}

// TestWhetherTheCurrentRunStarts: its Job exists, or the CronJob
// controller may still create it; not under Forbid with an active Job, nor
// past the deadline, nor suspended.
func TestWhetherTheCurrentRunStarts(t *testing.T) {
	run := mustTime("2026-11-24T10:00:00Z")
	base := func() *batchv1.CronJob {
		return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", CreationTimestamp: metav1.NewTime(run.Add(-24 * time.Hour))},
			Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
	}
	tests := map[string]struct {
		change func(*batchv1.CronJob)
		jobs   []*batchv1.Job
		starts bool
	}{
		"its Job exists":       {jobs: []*batchv1.Job{{ObjectMeta: metav1.ObjectMeta{Name: "nightly-" + v1alpha1.RunLabelValue(run)}}}, starts: true},
		"the Job may yet come": {starts: true},
		"Forbid with an active": {change: func(cj *batchv1.CronJob) {
			cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
			cj.Status.Active = []corev1.ObjectReference{{Name: "x"}}
		}},
		"past the deadline": {change: func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](5) }},
		"suspended":         {change: func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cj := base()
			if tc.change != nil {
				tc.change(cj)
			}
			runs, _ := runsOf(cj)
			in := warmUpInput(cj, runs, tc.jobs, run.Add(10*time.Second))
			if !in.Current.Equal(run) || in.CurrentStarts != tc.starts {
				t.Errorf("current %v starts %v, want %v starts %v", in.Current, in.CurrentStarts, run, tc.starts)
			}
		})
	}
}
