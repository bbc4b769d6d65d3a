package schedulecmd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// TestExplainScheduledJob: a live ScheduledJob is explained in its time
// zone, with each run's warm-up under a fixed lead, and under lead Auto
// the next warm-up as the controller planned it and how the lead was
// chosen.
func TestExplainScheduledJob(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "nightly", CreationTimestamp: metav1.NewTime(at.Add(-time.Hour))},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "0 * * * *", TimeZone: ptr.To("Europe/Amsterdam"), WarmUp: &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(10 * time.Minute)}}}
	e, err := explainScheduledJob(sj, at)
	if err != nil {
		t.Fatal(err)
	}
	if e.ScheduledJob != "reports/nightly" || e.TimeZone != "Europe/Amsterdam" || len(e.Next) != 5 || e.Next[0].Run != "2026-11-26T11:00:00+01:00" ||
		e.Next[0].WarmUp != "2026-11-26T10:50:00+01:00" || e.Next[4].WarmUp != "2026-11-26T14:50:00+01:00" {
		t.Errorf("fixed lead: %+v", e)
	}

	sj.Spec.WarmUp = &v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}, MaxLead: &metav1.Duration{Duration: 3 * time.Minute}}
	sj.Status.NextWarmUpTime = &metav1.Time{Time: time.Date(2026, 11, 26, 9, 58, 48, 0, time.UTC)}
	sj.Status.WarmUp = &v1alpha1.WarmUpStatus{ScheduledTime: metav1.NewTime(at.Add(-30 * time.Minute)), Lead: &v1alpha1.LeadStatus{
		Lead: metav1.Duration{Duration: 72 * time.Second}, Reason: v1alpha1.LeadLearned, MarginPercent: 120,
		Provisioning: &metav1.Duration{Duration: time.Minute}, SharedFrom: "reports/weekly"}}
	e, err = explainScheduledJob(sj, at)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printExplanation(&out, e)
	for _, want := range []string{
		"ScheduledJob reports/nightly, in Europe/Amsterdam:",
		"Warm-up lead Auto, from 30s to 3m0s; the warm-up for 2026-11-26T10:00:00+01:00 began 1m12s ahead (Learned: provisioning 1m0s × 120 %), learned from reports/weekly (its pods land on the same nodes).",
		"2026-11-26T11:00:00+01:00  Thu  warm-up from 2026-11-26T10:58:48+01:00",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q:\n%s", want, out.String())
		}
	}
	if e.Next[1].WarmUp != "" {
		t.Errorf("a later run's warm-up %q under lead Auto: it is not chosen yet", e.Next[1].WarmUp)
	}
}

// TestExplainScheduledJobWithSchedules: a live ScheduledJob with
// spec.schedules is explained as the union of its entries: both described,
// the next runs those of either, a time both have once.
func TestExplainScheduledJobWithSchedules(t *testing.T) {
	at := time.Date(2026, 11, 27, 22, 40, 0, 0, time.UTC) // a Friday
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "sync", CreationTimestamp: metav1.NewTime(at.Add(-time.Hour))},
		Spec: v1alpha1.ScheduledJobSpec{Schedules: []string{"*/30 * * * 1-5", "0 * * * *"}}}
	e, err := explainScheduledJob(sj, at)
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, run := range e.Next {
		runs = append(runs, run.Run)
	}
	want := []string{"2026-11-27T23:00:00Z", "2026-11-27T23:30:00Z", "2026-11-28T00:00:00Z", "2026-11-28T01:00:00Z", "2026-11-28T02:00:00Z"}
	if strings.Join(runs, " ") != strings.Join(want, " ") {
		t.Errorf("next runs %v, want %v", runs, want)
	}
	if !strings.Contains(e.Description, "; and ") {
		t.Errorf("description %q: want both entries described", e.Description)
	}
}

// TestLiveObjectArgument: sj/NAME names a ScheduledJob; schedules with
// slashes do not.
func TestLiveObjectArgument(t *testing.T) {
	for arg, live := range map[string]bool{
		"sj/nightly": true, "scheduledjob/nightly": true, "scheduledjobs.ontime.dev/a.b-c": true,
		"H/15": false, "*/5": false, "0/10": false, "sj/": false,
	} {
		if got := liveObject.MatchString(arg); got != live {
			t.Errorf("%q: live %v, want %v", arg, got, live)
		}
	}
}

// TestNextRunsOfAScheduledJob: ontime next sj/NAME reads runs as the
// controller does: @every from the last scheduled run (else the creation),
// in the ScheduledJob's time zone, stopping where a runAt does.
func TestNextRunsOfAScheduledJob(t *testing.T) {
	created := time.Date(2026, 11, 26, 8, 10, 0, 0, time.UTC)
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	lastRun := metav1.NewTime(time.Date(2026, 11, 26, 9, 25, 0, 0, time.UTC))
	for _, tc := range []struct {
		name string
		spec v1alpha1.ScheduledJobSpec
		last *metav1.Time
		want []string
	}{
		{"every from creation", v1alpha1.ScheduledJobSpec{Schedule: "@every 1h"}, nil,
			[]string{"2026-11-26T10:10:00Z", "2026-11-26T11:10:00Z"}},
		{"every from the last run", v1alpha1.ScheduledJobSpec{Schedule: "@every 1h"}, &lastRun,
			[]string{"2026-11-26T10:25:00Z", "2026-11-26T11:25:00Z"}},
		{"time zone", v1alpha1.ScheduledJobSpec{Schedule: "0 12 * * *", TimeZone: ptr.To("Asia/Tokyo")}, nil,
			[]string{"2026-11-27T12:00:00+09:00", "2026-11-28T12:00:00+09:00"}},
		{"run once", v1alpha1.ScheduledJobSpec{RunAt: &metav1.Time{Time: at.Add(time.Hour)}}, nil,
			[]string{"2026-11-26T10:30:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "nightly", CreationTimestamp: metav1.NewTime(created)},
				Spec: tc.spec, Status: v1alpha1.ScheduledJobStatus{LastScheduleTime: tc.last}}
			m, err := meaningOfLive(sj)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, run := range nextRuns(sj, m, at, 2) {
				got = append(got, run.Format(time.RFC3339))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("next runs %v, want %v", got, tc.want)
			}
		})
	}
}

// TestExplainRecentStarts: explain lists the recent runs' starts with
// their phases and, for a run late by a phase of 5 s or more, the change
// that would have prevented it, which depends on the phase and the spec.
func TestExplainRecentStarts(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	run := func(minutes int, phases ...v1alpha1.RunPhase) v1alpha1.RunStart {
		scheduled := at.Add(time.Duration(-minutes) * time.Minute)
		var late time.Duration
		for _, p := range phases {
			late += p.Duration.Duration
		}
		return v1alpha1.RunStart{ScheduledTime: metav1.NewTime(scheduled), StartTime: metav1.NewTime(scheduled.Add(late)),
			Lateness: metav1.Duration{Duration: late}, Phases: phases}
	}
	phase := func(name v1alpha1.RunPhaseName, seconds int) v1alpha1.RunPhase {
		return v1alpha1.RunPhase{Name: name, Duration: metav1.Duration{Duration: time.Duration(seconds) * time.Second}}
	}
	for _, tc := range []struct {
		name   string
		warmUp *v1alpha1.WarmUp
		group  *v1alpha1.ConcurrencyGroupRef
		start  v1alpha1.RunStart
		want   string // in the advice; "" for none
	}{
		{"on time", nil, nil, run(1, phase(v1alpha1.PhaseJobController, 1), phase(v1alpha1.PhaseImagePull, 2)), ""},
		{"a new node without warm-up", nil, nil, run(1, phase(v1alpha1.PhaseNode, 62), phase(v1alpha1.PhaseImagePull, 1)),
			"waited 1m2s for a new node: warm-up is off; spec.warmUp with lead Auto"},
		{"a new node after too short a lead", &v1alpha1.WarmUp{Lead: v1alpha1.FixedLead(30 * time.Second)}, nil, run(1, phase(v1alpha1.PhaseNode, 40)),
			"its node took about 1m10s to come up; set the warm-up's lead to at least 1m10s, or to Auto"},
		{"a new node beyond maxLead", &v1alpha1.WarmUp{Lead: v1alpha1.Lead{Auto: true}, MaxLead: &metav1.Duration{Duration: time.Minute}}, nil, run(1, phase(v1alpha1.PhaseNode, 40)),
			"more than maxLead (1m0s); raise the warm-up's maxLead"},
		{"a full group", nil, &v1alpha1.ConcurrencyGroupRef{Kind: v1alpha1.KindConcurrencyGroup, Name: "warehouse"}, run(1, phase(v1alpha1.PhaseConcurrencyGroup, 90)),
			`waited 1m30s in ConcurrencyGroup "warehouse", at its limit`},
		{"a crowded minute", nil, nil, run(1, phase(v1alpha1.PhaseController, 8)), `"H * * * *" gives it a minute of its own`},
		{"an image pull", nil, nil, run(1, phase(v1alpha1.PhaseImagePull, 47)), "47s went to pulling images"},
		{"init containers", nil, nil, run(1, phase(v1alpha1.PhaseInitContainers, 20)), "its init containers ran 20s after its time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "nightly", CreationTimestamp: metav1.NewTime(at.Add(-time.Hour))},
				Spec:   v1alpha1.ScheduledJobSpec{Schedule: "0 * * * *", WarmUp: tc.warmUp, ConcurrencyGroup: tc.group},
				Status: v1alpha1.ScheduledJobStatus{LastRunStart: &tc.start, RecentRunStarts: []v1alpha1.RunStart{tc.start}}}
			if tc.warmUp != nil && !tc.warmUp.Lead.Auto {
				sj.Status.WarmUp = &v1alpha1.WarmUpStatus{ScheduledTime: tc.start.ScheduledTime, Lead: &v1alpha1.LeadStatus{Lead: metav1.Duration{Duration: 30 * time.Second}}}
			}
			e, err := explainScheduledJob(sj, at)
			if err != nil {
				t.Fatal(err)
			}
			if len(e.RecentRuns) != 1 {
				t.Fatalf("recent runs %+v, want one", e.RecentRuns)
			}
			got := e.RecentRuns[0]
			if tc.want == "" && got.Advice != "" || !strings.Contains(got.Advice, tc.want) {
				t.Errorf("advice %q, want it to say %q", got.Advice, tc.want)
			}
			var out bytes.Buffer
			printExplanation(&out, e)
			if !strings.Contains(out.String(), "Recent runs, when they started:\n  2026-11-30T09:29:00Z  "+tc.start.Lateness.Duration.String()+" late") {
				t.Errorf("printed:\n%s", out.String())
			}
		})
	}
}

// TestExplainStartsOfAnOlderController: a status written before phases
// were recorded (lastRunStart only) is still shown, without phases.
func TestExplainStartsOfAnOlderController(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	start := v1alpha1.RunStart{ScheduledTime: metav1.NewTime(at.Add(-30 * time.Minute)), StartTime: metav1.NewTime(at.Add(-29 * time.Minute)), Lateness: metav1.Duration{Duration: time.Minute}}
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "nightly"},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "0 * * * *"}, Status: v1alpha1.ScheduledJobStatus{LastRunStart: &start}}
	e, err := explainScheduledJob(sj, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.RecentRuns) != 1 || e.RecentRuns[0].Lateness != "1m0s" || e.RecentRuns[0].Phases != nil || e.RecentRuns[0].Advice != "" {
		t.Errorf("recent runs %+v, want the one run, 1m0s late, without phases", e.RecentRuns)
	}
}

// TestExplainCronJob: an annotated CronJob is explained from its schedule
// (the CronJob controller's dialect), its warm-up annotation and its state
// annotation, with its recent runs' phases; the advice for a crowded minute
// names a ScheduledJob's H form (a CronJob has no H). A CronJob without the
// warm-up annotation is refused, naming it.
func TestExplainCronJob(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	run := at.Add(-30 * time.Minute)
	start := v1alpha1.RunStart{ScheduledTime: metav1.NewTime(run), StartTime: metav1.NewTime(run.Add(12 * time.Second)), Lateness: metav1.Duration{Duration: 12 * time.Second},
		Phases: []v1alpha1.RunPhase{{Name: v1alpha1.PhaseController, Duration: metav1.Duration{Duration: 11 * time.Second}}, {Name: v1alpha1.PhaseImagePull, Duration: metav1.Duration{Duration: time.Second}}}}
	state, err := json.Marshal(v1alpha1.CronJobWarmUpState{LastRunStart: &start, RecentRunStarts: []v1alpha1.RunStart{start}})
	if err != nil {
		t.Fatal(err)
	}
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "backup", CreationTimestamp: metav1.NewTime(at.Add(-24 * time.Hour)),
		Annotations: map[string]string{v1alpha1.WarmUpLeadAnnotation: "5m", v1alpha1.WarmUpStateAnnotation: string(state)}},
		Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
	e, err := explainCronJob(cj, at)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printExplanation(&out, e)
	for _, want := range []string{
		"CronJob reports/backup, in UTC:",
		"Warm-up begins 5m0s before each run.",
		"2026-11-30T10:00:00Z  Mon  warm-up from 2026-11-30T09:55:00Z",
		"2026-11-30T09:00:00Z  12s late: Controller 11s, ImagePull 1s",
		`a ScheduledJob with "H * * * *" gives it a minute of its own`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q:\n%s", want, out.String())
		}
	}
	delete(cj.Annotations, v1alpha1.WarmUpLeadAnnotation)
	if _, err := explainCronJob(cj, at); err == nil || !strings.Contains(err.Error(), "has no "+v1alpha1.WarmUpLeadAnnotation+" annotation") {
		t.Errorf("without warm-up: %v, want a refusal naming the annotation", err)
	}
}

// TestExplainStartObjective: explain sj/NAME says how the runs met the
// start objective, or that none is counted yet.
func TestExplainStartObjective(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	objective := &v1alpha1.StartObjective{Within: metav1.Duration{Duration: 30 * time.Second}, Percent: "99.5", WindowDays: 14}
	for name, tc := range map[string]struct {
		status *v1alpha1.StartObjectiveStatus
		want   string
	}{
		"missed":     {&v1alpha1.StartObjectiveStatus{Runs: 144, OnTime: 142, Attainment: "98.61"}, "Start objective 99.5% within 30s over 14d: 98.61% of 144 runs on time, missed.\n"},
		"met":        {&v1alpha1.StartObjectiveStatus{Runs: 10, OnTime: 10, Attainment: "100.00", Met: true}, "Start objective 99.5% within 30s over 14d: 100.00% of 10 runs on time, met.\n"},
		"no run yet": {nil, "Start objective 99.5% within 30s over 14d: no run counted yet.\n"},
	} {
		t.Run(name, func(t *testing.T) {
			sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "nightly", CreationTimestamp: metav1.NewTime(at.Add(-time.Hour))},
				Spec:   v1alpha1.ScheduledJobSpec{Schedule: "0 * * * *", StartObjective: objective},
				Status: v1alpha1.ScheduledJobStatus{StartObjective: tc.status}}
			e, err := explainScheduledJob(sj, at)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			printExplanation(&out, e)
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("explain printed\n%s\nwant it to contain %q", out.String(), tc.want)
			}
		})
	}
}

// TestExplainDeadline: explain sj/NAME says the deadline and the
// controller's verdict on the latest run.
func TestExplainDeadline(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "nightly", CreationTimestamp: metav1.NewTime(at.Add(-time.Hour))},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "0 2 * * *", Deadline: &v1alpha1.Deadline{At: "07:00"}},
		Status: v1alpha1.ScheduledJobStatus{Conditions: []metav1.Condition{{Type: v1alpha1.ConditionDeadlineAtRisk, Status: metav1.ConditionTrue,
			Reason: v1alpha1.ReasonDeadlineAtRisk, Message: "the run of 2026-11-30T02:00:00Z is predicted to succeed at 2026-11-30T07:20:00Z, after its deadline"}}}}
	e, err := explainScheduledJob(sj, at)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printExplanation(&out, e)
	if want := "Deadline by 07:00: the run of 2026-11-30T02:00:00Z is predicted to succeed at 2026-11-30T07:20:00Z, after its deadline.\n"; !strings.Contains(out.String(), want) {
		t.Errorf("explain printed\n%s\nwant it to contain %q", out.String(), want)
	}
	sj.Status.Conditions = nil
	e, _ = explainScheduledJob(sj, at)
	if e.Deadline == nil || e.Deadline.Message != "" {
		t.Errorf("deadline %+v without a condition", e.Deadline)
	}
}
