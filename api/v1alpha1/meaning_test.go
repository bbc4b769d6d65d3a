package v1alpha1

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ontime-dev/ontime/pkg/cron"
)

func mustTime(value string) time.Time {
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		panic(err)
	}
	return t
}

// TestMeaning: what a ScheduledJob's spec means to every side, as one
// table: the zone, the dialect and DST policy, the hash key and a
// placement's choices, and the errors that name their field.
func TestMeaning(t *testing.T) {
	tests := map[string]struct {
		spec      ScheduledJobSpec
		unnamed   bool // generateName "gen-" instead of the name "report"
		choices   []int
		now       string
		next      string // the next run after now
		effective string
		errors    []string // SpecErrors, in order
	}{
		"UTC by default":   {spec: ScheduledJobSpec{Schedule: "0 9 * * *"}, now: "2026-11-25T10:00:00Z", next: "2026-11-26T09:00:00Z", effective: "0 9 * * *"},
		"extended dialect": {spec: ScheduledJobSpec{Schedule: "0 0 L * 7"}, now: "2026-11-25T00:00:00Z", next: "2026-11-29T00:00:00Z"},
		"zone":             {spec: ScheduledJobSpec{Schedule: "0 9 * * *", TimeZone: ptr.To("Asia/Tokyo")}, now: "2026-11-25T10:00:00Z", next: "2026-11-26T00:00:00Z"},
		// 02:30 does not exist in New York on 2026-03-08: Cron runs it at
		// 03:00, Kubernetes skips it.
		"DST policy Cron": {spec: ScheduledJobSpec{Schedule: "30 2 * * *", TimeZone: ptr.To("America/New_York")},
			now: "2026-03-08T05:00:00Z", next: "2026-03-08T07:00:00Z"},
		"DST policy Kubernetes": {spec: ScheduledJobSpec{Schedule: "30 2 * * *", TimeZone: ptr.To("America/New_York"), DSTPolicy: DSTKubernetes},
			now: "2026-03-08T05:00:00Z", next: "2026-03-09T06:30:00Z"},
		"H from the hash key": {spec: ScheduledJobSpec{Schedule: "H * * * *"}, now: "2026-11-25T10:00:00Z", next: "2026-11-25T10:12:00Z", effective: "12 * * * *"},
		"H with a placement":  {spec: ScheduledJobSpec{Schedule: "H * * * *"}, choices: []int{7}, now: "2026-11-25T10:00:00Z", next: "2026-11-25T10:07:00Z", effective: "7 * * * *"},
		"H before a name":     {spec: ScheduledJobSpec{Schedule: "H * * * *"}, unnamed: true, now: "2026-11-25T10:00:00Z", next: "2026-11-25T10:43:00Z"},
		"legacy TZ prefix":    {spec: ScheduledJobSpec{Schedule: "TZ=Asia/Tokyo 0 9 * * *"}, now: "2026-11-25T10:00:00Z", next: "2026-11-26T00:00:00Z"},
		"runAt":               {spec: ScheduledJobSpec{RunAt: &metav1.Time{Time: mustTime("2026-12-01T00:00:00Z")}}, now: "2026-11-25T10:00:00Z", next: "2026-12-01T00:00:00Z"},
		"unknown zone and bad schedule": {spec: ScheduledJobSpec{Schedule: "61 * * * *", TimeZone: ptr.To("Mars/Olympus")},
			errors: []string{`spec.timeZone "Mars/Olympus": unknown time zone`, `spec.schedule "61 * * * *": minute "61": 61 is above the maximum 59`}},
		"Local zone": {spec: ScheduledJobSpec{Schedule: "* * * * *", TimeZone: ptr.To("Local")},
			errors: []string{`spec.timeZone "Local": must be an explicit IANA time zone such as Europe/Amsterdam, not Local`}},
		"sub-minute @every": {spec: ScheduledJobSpec{Schedule: "@every 30s"},
			errors: []string{`spec.schedule "@every 30s": @every runs less than a minute apart would share a Job name (names have minute resolution); use @every 1m or more`}},
		"never fires": {spec: ScheduledJobSpec{Schedule: "0 0 30 2 *"}, errors: []string{`spec.schedule "0 0 30 2 *": never fires: no allowed month has an allowed day`}},
		// 2026-11-27 is a Friday: at 23:40 the weekday entry's next run is
		// 23:45, the weekend one's Saturday 00:00.
		"schedules: the earliest of the entries": {spec: ScheduledJobSpec{Schedules: []string{"*/15 * * * 1-5", "0 * * * 0,6"}},
			now: "2026-11-27T23:40:00Z", next: "2026-11-27T23:45:00Z", effective: "*/15 * * * 1-5; 0 * * * 0,6"},
		"schedules: H in an entry, in the zone": {spec: ScheduledJobSpec{Schedules: []string{"H 9 * * *", "0 18 * * *"}, TimeZone: ptr.To("Asia/Tokyo")},
			now: "2026-11-25T10:00:00Z", next: "2026-11-26T00:12:00Z", effective: "12 9 * * *; 0 18 * * *"},
		"schedules: each bad entry named": {spec: ScheduledJobSpec{Schedules: []string{"0 9 * * *", "61 * * * *", "@every 2h", "TZ=UTC 0 1 * * *"}},
			errors: []string{`spec.schedules[1] "61 * * * *": minute "61": 61 is above the maximum 59`,
				`spec.schedules[2] "@every 2h": @every is not allowed in spec.schedules: its runs count from the last run, which a list does not keep per entry; write it as a calendar schedule, or use spec.schedule`,
				`spec.schedules[3] "TZ=UTC 0 1 * * *": cannot use TZ or CRON_TZ in a list entry: every entry runs in spec.timeZone`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sj := &ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "report"}, Spec: tc.spec}
			if tc.unnamed {
				sj.Name, sj.GenerateName = "", "gen-"
			}
			m, err := sj.Meaning(tc.choices)
			errs := SpecErrors(err)
			if len(errs) != len(tc.errors) {
				t.Fatalf("errors %v, want %q", err, tc.errors)
			}
			for i, e := range errs {
				if e.Error() != tc.errors[i] {
					t.Errorf("error %d: %q, want %q", i, e, tc.errors[i])
				}
			}
			if len(tc.errors) > 0 {
				return
			}
			runs := m.Runs(mustTime("2026-01-01T00:00:00Z"))
			if got := runs.Next(mustTime(tc.now)); !got.Equal(mustTime(tc.next)) {
				t.Errorf("next run %v, want %s", got.UTC(), tc.next)
			}
			if tc.effective != "" && m.Effective() != tc.effective {
				t.Errorf("effective %q, want %q", m.Effective(), tc.effective)
			}
		})
	}
}

// TestMeaningOfAnErrorKeepsItsCause: a schedule's error unwraps to the
// engine's ParseError, whose Kind tells a schedule that never fires from
// one that does not parse.
func TestMeaningOfAnErrorKeepsItsCause(t *testing.T) {
	_, err := (&ScheduledJob{Spec: ScheduledJobSpec{Schedule: "0 0 30 2 *"}}).Meaning(nil)
	var parseErr *cron.ParseError
	if !errors.As(err, &parseErr) || parseErr.Kind != cron.ErrNeverFires {
		t.Errorf("error %v, want a ParseError of kind ErrNeverFires", err)
	}
	if errs := SpecErrors(err); len(errs) != 1 || errs[0].Reason != ReasonInvalidSchedule {
		t.Errorf("errors %v, want one with reason InvalidSchedule", errs)
	}
}

func TestWarmUpSettings(t *testing.T) {
	tests := map[string]struct {
		warmUp WarmUp
		want   WarmUpSettings
	}{
		"defaults": {warmUp: WarmUp{Lead: FixedLead(time.Minute)},
			want: WarmUpSettings{Strategy: WarmUpPlaceholder, Lead: time.Minute, MinLead: DefaultMinLead, MaxLead: DefaultMaxLead,
				PriorityClassName: DefaultPlaceholderPriorityClass, Image: DefaultPlaceholderImage, Hold: DefaultHoldAfterSchedule}},
		"Auto, bounded": {warmUp: WarmUp{Lead: Lead{Auto: true}, MinLead: &metav1.Duration{Duration: time.Minute}, MaxLead: &metav1.Duration{Duration: 5 * time.Minute}},
			want: WarmUpSettings{Strategy: WarmUpPlaceholder, AutoLead: true, Lead: 5 * time.Minute, MinLead: time.Minute, MaxLead: 5 * time.Minute,
				PriorityClassName: DefaultPlaceholderPriorityClass, Image: DefaultPlaceholderImage, Hold: DefaultHoldAfterSchedule}},
		"set, hold capped": {warmUp: WarmUp{Lead: time10m(), Strategy: WarmUpEarlyStart, Placeholder: &PlaceholderWarmUp{
			PriorityClassName: "warm", Image: "mirror.example/pause:3.10", HoldAfterSchedule: &metav1.Duration{Duration: time.Hour}}},
			want: WarmUpSettings{Strategy: WarmUpEarlyStart, Lead: 10 * time.Minute, MinLead: DefaultMinLead, MaxLead: DefaultMaxLead, PriorityClassName: "warm",
				Image: "mirror.example/pause:3.10", Hold: MaxHoldAfterSchedule}},
	}
	for name, tc := range tests {
		if got := tc.warmUp.Settings(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
	// The controller's --placeholder-image and --placeholder-priority-class
	// replace the API's defaults, not what the spec names.
	mirror := ControllerDefaults{PlaceholderImage: "mirror.example/pause:3.10", PlaceholderPriorityClass: "batch-low"}
	if got := (&WarmUp{Lead: time10m()}).SettingsWith(mirror); got.Image != mirror.PlaceholderImage || got.PriorityClassName != "batch-low" {
		t.Errorf("image %q, class %q without them in the spec, want the controller's %q, %q",
			got.Image, got.PriorityClassName, mirror.PlaceholderImage, mirror.PlaceholderPriorityClass)
	}
	named := &WarmUp{Lead: time10m(), Placeholder: &PlaceholderWarmUp{Image: "team.example/pause:3.10", PriorityClassName: "team-low"}}
	if got := named.SettingsWith(mirror); got.Image != "team.example/pause:3.10" || got.PriorityClassName != "team-low" {
		t.Errorf("image %q, class %q with them in the spec, want the spec's", got.Image, got.PriorityClassName)
	}
	cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
	cj.Annotations = map[string]string{WarmUpLeadAnnotation: "10m"}
	if m, err := CronJobMeaning(cj, mirror); err != nil || m.WarmUp.Image != mirror.PlaceholderImage || m.WarmUp.PriorityClassName != "batch-low" {
		t.Errorf("a CronJob's placeholders %+v (%v), want the controller's image and class", m.WarmUp, err)
	}
	sj := &ScheduledJob{Spec: ScheduledJobSpec{Schedule: "* * * * *", WarmUp: &WarmUp{Lead: time10m()}}}
	if m, _ := sj.Meaning(nil); m.WarmUp == nil || m.WarmUp.Lead != 10*time.Minute {
		t.Errorf("Meaning's warm-up %+v", m.WarmUp)
	}
}

func time10m() Lead { return FixedLead(10 * time.Minute) }

// TestCronJobMeaning: a CronJob's runs as the CronJob controller computes
// them: robfig's daylight-saving behavior in spec.timeZone, @every from
// the anchor; and its warm-up from the annotation.
func TestCronJobMeaning(t *testing.T) {
	tests := map[string]struct {
		schedule, zone string
		now, next      string
	}{
		// 2026-03-08 02:30 does not exist in New York: robfig skips it.
		"DST gap skipped": {schedule: "30 2 * * *", zone: "America/New_York", now: "2026-03-08T05:00:00Z", next: "2026-03-09T06:30:00Z"},
		// 01:30 happens twice on 2026-11-01: robfig runs both.
		"DST repeat run twice": {schedule: "30 1 * * *", zone: "America/New_York", now: "2026-11-01T05:31:00Z", next: "2026-11-01T06:30:00Z"},
		"UTC when unset":       {schedule: "0 9 * * 1-5", now: "2026-11-27T10:00:00Z", next: "2026-11-30T09:00:00Z"},
		"@every from anchor":   {schedule: "@every 90m", now: "2026-11-24T09:00:00Z", next: "2026-11-24T09:40:00Z"},
		"legacy TZ= prefix":    {schedule: "TZ=Asia/Tokyo 0 9 * * *", now: "2026-11-24T01:00:00Z", next: "2026-11-25T00:00:00Z"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: tc.schedule}}
			cj.Annotations = map[string]string{WarmUpLeadAnnotation: "10m"}
			if tc.zone != "" {
				cj.Spec.TimeZone = ptr.To(tc.zone)
			}
			m, err := CronJobMeaning(cj, ControllerDefaults{})
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Runs(mustTime("2026-11-24T08:10:00Z")).Next(mustTime(tc.now)); !got.Equal(mustTime(tc.next)) {
				t.Errorf("next run %v, want %v", got, tc.next)
			}
		})
	}
	for value, want := range map[string]string{
		"10m":  "",
		"1m":   "",
		"10s":  `metadata.annotations[warmup.ontime.dev/lead]: Invalid value: "10s": must be from 30s to 24h0m0s`,
		"soon": `metadata.annotations[warmup.ontime.dev/lead]: Invalid value: "soon": not a duration such as 10m`,
		"Auto": `metadata.annotations[warmup.ontime.dev/lead]: Invalid value: "Auto": a CronJob's lead is a duration such as 10m; Auto needs a ScheduledJob, whose status it learns in`,
	} {
		cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
		cj.Annotations = map[string]string{WarmUpLeadAnnotation: value}
		m, err := CronJobMeaning(cj, ControllerDefaults{})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want || (want == "" && (m.WarmUp == nil || m.WarmUp.Strategy != WarmUpPlaceholder)) {
			t.Errorf("%q: warm-up %+v, error %q; want %q", value, m.WarmUp, got, want)
		}
	}
	if m, err := CronJobMeaning(&batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "not read"}}, ControllerDefaults{}); err != nil || m.WarmUp != nil {
		t.Errorf("a CronJob without the annotation: %+v, %v; want no warm-up and nothing read", m.WarmUp, err)
	}
}

// TestCronJobStrategyAnnotation: Placeholder by default, CapacityBuffer on
// request; EarlyStart and anything else are refused by name.
func TestCronJobStrategyAnnotation(t *testing.T) {
	for value, want := range map[string]string{
		"":               "Placeholder",
		"Placeholder":    "Placeholder",
		"CapacityBuffer": "CapacityBuffer",
		"EarlyStart":     `metadata.annotations[warmup.ontime.dev/strategy]: Invalid value: "EarlyStart": must be Placeholder or CapacityBuffer (EarlyStart needs a ScheduledJob)`,
		"buffer":         `metadata.annotations[warmup.ontime.dev/strategy]: Invalid value: "buffer": must be Placeholder or CapacityBuffer (EarlyStart needs a ScheduledJob)`,
	} {
		cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
		cj.Annotations = map[string]string{WarmUpLeadAnnotation: "5m", WarmUpStrategyAnnotation: value}
		got := ""
		if m, err := CronJobMeaning(cj, ControllerDefaults{}); err != nil {
			got = err.Error()
		} else {
			got = string(m.WarmUp.Strategy)
		}
		if got != want {
			t.Errorf("strategy annotation %q: %q, want %q", value, got, want)
		}
	}
}

// TestLeadJSON: a lead is written as a duration or "Auto", and read back.
func TestLeadJSON(t *testing.T) {
	for _, tc := range []struct {
		json string
		lead Lead
	}{{`"10m0s"`, FixedLead(10 * time.Minute)}, {`"Auto"`, Lead{Auto: true}}} {
		out, err := json.Marshal(tc.lead)
		if err != nil || string(out) != tc.json {
			t.Errorf("%+v written as %s (%v), want %s", tc.lead, out, err, tc.json)
		}
		var back Lead
		if err := json.Unmarshal([]byte(tc.json), &back); err != nil || back != tc.lead {
			t.Errorf("%s read as %+v (%v), want %+v", tc.json, back, err, tc.lead)
		}
	}
	var lead Lead
	if err := json.Unmarshal([]byte(`"soon"`), &lead); err == nil || !strings.Contains(err.Error(), `lead "soon"`) {
		t.Errorf("a lead of \"soon\": %v, want an error naming it", err)
	}
}

// TestScheduleParser: a schedule read without its object is read as its
// kind's Meaning reads it: a ScheduledJob's with H and its DST policy, a
// CronJob's in the Kubernetes dialect and DST policy; an unknown zone
// names the field.
func TestScheduleParser(t *testing.T) {
	sjParser, err := ScheduleParser(KindScheduledJob, "team/report", "Europe/Amsterdam", string(DSTKubernetes))
	if err != nil {
		t.Fatal(err)
	}
	if sjParser.Dialect != cron.Extended || sjParser.DSTPolicy != cron.DSTKubernetes || sjParser.HashKey != "team/report" || sjParser.Location.String() != "Europe/Amsterdam" {
		t.Errorf("a ScheduledJob's parser %+v", sjParser)
	}
	if p, _ := ScheduleParser(KindScheduledJob, "team/report", "", ""); p.DSTPolicy != cron.DSTCron || p.Location != nil {
		t.Errorf("defaults: %+v, want the default DST policy in UTC", p)
	}
	sj := &ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "report"},
		Spec: ScheduledJobSpec{Schedule: "H 2 * * *", TimeZone: ptr.To("Europe/Amsterdam"), DSTPolicy: DSTKubernetes}}
	meaning, err := sj.Meaning(nil)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := sjParser.Parse(sj.Spec.Schedule)
	if err != nil || parsed.Effective() != meaning.Schedule.Effective() || parsed.DSTPolicy() != meaning.Schedule.DSTPolicy() {
		t.Errorf("parsed %v (%v), want what Meaning reads: %v", parsed, err, meaning.Schedule)
	}
}

// TestScheduleParserOfACronJob: a CronJob's schedule is read as the
// CronJob controller reads it; an unknown zone names the field.
func TestScheduleParserOfACronJob(t *testing.T) {
	cjParser, err := ScheduleParser(KindCronJob, "team/report", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cjParser.Parse("H * * * *"); err == nil {
		t.Error("a CronJob's schedule read with H, which the CronJob controller refuses")
	}
	if cjParser.DSTPolicy != cron.DSTKubernetes {
		t.Errorf("a CronJob's DST policy %v, want the Kubernetes one", cjParser.DSTPolicy)
	}
	_, err = ScheduleParser(KindScheduledJob, "team/report", "Mars/Olympus", "")
	var specErr *SpecError
	if !errors.As(err, &specErr) || specErr.Field != "spec.timeZone" || specErr.Value != "Mars/Olympus" {
		t.Errorf("unknown zone: %v, want a SpecError naming spec.timeZone", err)
	}
}
