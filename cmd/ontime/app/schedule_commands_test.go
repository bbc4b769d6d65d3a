package app

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// runCLI runs the command line at a fixed "now" and returns stdout, stderr
// and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	saved := cli.Now
	cli.Now = func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }
	t.Cleanup(func() { cli.Now = saved })
	var stdout, stderr bytes.Buffer
	code := Run(args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func TestCLI(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stdout string // exact, unless empty
		stderr string // substring
		code   int
	}{
		{"next in a zone", []string{"next", "30 2 * * 1-5", "--time-zone", "Europe/Amsterdam", "--from", "2026-03-27T00:00:00Z", "--count", "3"},
			"2026-03-27T02:30:00+01:00\n2026-03-30T02:30:00+02:00\n2026-03-31T02:30:00+02:00\n", "", 0},
		{"next defaults: 5 times from now, UTC", []string{"next", "0 12 * * *"},
			"2026-11-22T12:00:00Z\n2026-11-23T12:00:00Z\n2026-11-24T12:00:00Z\n2026-11-25T12:00:00Z\n2026-11-26T12:00:00Z\n", "", 0},
		{"next DST cron policy", []string{"next", "30 2 * * *", "--time-zone", "America/New_York", "--from", "2026-03-07T12:00:00-05:00", "--count", "2"},
			"2026-03-08T03:00:00-04:00\n2026-03-09T02:30:00-04:00\n", "", 0},
		{"next DST kubernetes policy", []string{"next", "30 2 * * *", "--time-zone", "America/New_York", "--dst-policy", "kubernetes", "--from", "2026-03-07T12:00:00-05:00", "--count", "2"},
			"2026-03-09T02:30:00-04:00\n2026-03-10T02:30:00-04:00\n", "", 0},
		{"next json", []string{"next", "0 0 29 2 *", "--from", "2096-03-01T00:00:00Z", "--count", "2", "-o", "json"},
			"[\n  \"2104-02-29T00:00:00Z\",\n  \"2108-02-29T00:00:00Z\"\n]\n", "", 0},
		{"next unquoted @every", []string{"next", "@every", "90m", "--from", "2026-01-01T00:00:00Z", "--count", "1"},
			"2026-01-01T01:30:00Z\n", "", 0},
		{"next hashed", []string{"next", "H 9 * * *", "--hash-key", "my-job", "--from", "2026-01-01T00:00:00Z", "--count", "1"},
			"2026-01-01T09:18:00Z\n", "", 0},
		{"next extended by default", []string{"next", "0 0 L * *", "--from", "2026-02-01T00:00:00Z", "--count", "1"},
			"2026-02-28T00:00:00Z\n", "", 0},
		{"next --strict rejects extended", []string{"next", "0 0 L * *", "--strict"}, "", `ontime: cron: day-of-month "L": H, L, W and # are extended syntax`, 2},
		{"bad schedule", []string{"next", "61 * * * *"}, "", "ontime: cron: minute \"61\": 61 is above the maximum 59\n", 2},
		{"TZ= without schedule", []string{"next", "TZ=UTC"}, "", "must be followed by a space and the schedule", 2},
		{"bad zone", []string{"next", "* * * * *", "--time-zone", "Mars/Olympus"}, "", `--time-zone "Mars/Olympus": not an IANA time zone name`, 2},
		{"Local zone flag", []string{"next", "* * * * *", "--time-zone", "Local"}, "", `--time-zone "Local": "Local" is the zone of the machine evaluating the schedule, not a time zone`, 2},
		{"TZ=Local prefix", []string{"next", "TZ=Local 0 3 * * *"}, "", `time zone "Local": "Local" is the zone of the machine`, 2},
		{"bad from", []string{"next", "* * * * *", "--from", "yesterday"}, "", `--from "yesterday": not an RFC 3339 time`, 2},
		{"bad flag", []string{"next", "* * * * *", "--nope"}, "", "unknown flag: --nope", 2},
		{"missing schedule", []string{"next"}, "", "requires at least 1 arg", 2},
		{"bad policy", []string{"next", "* * * * *", "--dst-policy", "skip"}, "", `--dst-policy "skip"`, 2},
		{"explain", []string{"explain", "30 2 * * 1-5", "--time-zone", "Europe/Amsterdam"},
			"At 02:30, Monday through Friday (Europe/Amsterdam)\nNext runs:\n  2026-11-23T02:30:00+01:00  Mon\n  2026-11-24T02:30:00+01:00  Tue\n  2026-11-25T02:30:00+01:00  Wed\n  2026-11-26T02:30:00+01:00  Thu\n  2026-11-27T02:30:00+01:00  Fri\n", "", 0},
		{"next with warm-up", []string{"next", "30 2 * * *", "--time-zone", "America/New_York", "--from", "2026-03-07T12:00:00-05:00", "--count", "2", "--lead", "10m"},
			"2026-03-08T03:00:00-04:00  warm-up from 2026-03-08T01:50:00-05:00\n2026-03-09T02:30:00-04:00  warm-up from 2026-03-09T02:20:00-04:00\n", "", 0},
		{"next with warm-up, json", []string{"next", "0 0 * * *", "--from", "2026-01-01T12:00:00Z", "--count", "1", "--lead", "90s", "-o", "json"},
			"[\n  {\n    \"run\": \"2026-01-02T00:00:00Z\",\n    \"warmUp\": \"2026-01-01T23:58:30Z\"\n  }\n]\n", "", 0},
		{"lead too short", []string{"next", "* * * * *", "--lead", "10s"}, "", "--lead 10s: must be from 30s to 24h0m0s", 2},
		// kubectl's template forms of -o, wherever -o json is.
		{"next -o jsonpath: a list's elements are .items", []string{"next", "0 0 * * *", "--from", "2026-01-01T12:00:00Z", "--count", "3", "-o", "jsonpath={.items[2]}"},
			"2026-01-04T00:00:00Z", "", 0},
		{"next -o go-template", []string{"next", "0 0 * * *", "--from", "2026-01-01T12:00:00Z", "--count", "2", "--lead", "90s", "-o", `go-template={{range .items}}{{.warmUp}} {{end}}`},
			"2026-01-01T23:58:30Z 2026-01-02T23:58:30Z ", "", 0},
		{"next -o custom-columns", []string{"next", "0 0 * * *", "--from", "2026-01-01T12:00:00Z", "--count", "2", "--lead", "90s", "-o", "custom-columns=RUN:.run,WARM-UP:.warmUp,NONE:.missing"},
			"RUN                    WARM-UP                NONE\n2026-01-02T00:00:00Z   2026-01-01T23:58:30Z   <none>\n2026-01-03T00:00:00Z   2026-01-02T23:58:30Z   <none>\n", "", 0},
		{"version -o jsonpath on an object", []string{"version", "-o", "jsonpath={.go}"}, runtime.Version(), "", 0},
		{"-o jsonpath without its template", []string{"next", "* * * * *", "-o", "jsonpath"}, "", `-o "jsonpath": jsonpath needs its argument, as in -o jsonpath='{.items[0]}'`, 2},
		{"-o jsonpath that does not parse", []string{"next", "* * * * *", "-o", "jsonpath={.items["}, "", `-o "jsonpath={.items[": error parsing jsonpath`, 2},
		{"-o custom-columns without a path", []string{"next", "* * * * *", "-o", "custom-columns=RUN"}, "", `column "RUN": want HEADER:JSONPATH`, 2},
		{"-o a format the command does not have", []string{"explain", "* * * * *", "-o", "wide"}, "", `-o "wide": must be text, json, yaml, or jsonpath=, jsonpath-file=, go-template=, go-template-file=, custom-columns=`, 2},
		{"next -o wide of one schedule", []string{"next", "* * * * *", "-o", "wide"}, "", "-o wide adds the schedule and time zone to the list of ontime next sj", 2},
		{"--as-group with a comma, as ontime's own flag took it", []string{"trigger", "sj/nightly", "--as-group", "ops,admins"}, "", `--as-group "ops,admins": one group per flag, as in kubectl: --as-group ops --as-group admins`, 2},
		{"next -A with a schedule", []string{"next", "* * * * *", "-A"}, "", "-A lists the ScheduledJobs of every namespace: give the kind alone, as in ontime next sj -A", 2},
		{"next -n as the count, as scripts said before", []string{"next", "* * * * *", "-n", "3"}, "", "-n 3: -n is the namespace (of sj/NAME), as in kubectl; the number of times is --count: ontime next SCHEDULE --count 3", 2},
		{"next -n with a schedule", []string{"next", "* * * * *", "-n", "team-a"}, "", "-n team-a: a schedule has no namespace", 2},
		{"explain with warm-up", []string{"explain", "0 9 * * 1-5", "--lead", "15m"},
			"At 09:00, Monday through Friday (UTC)\nWarm-up begins 15m0s before each run.\nNext runs:\n  2026-11-23T09:00:00Z  Mon  warm-up from 2026-11-23T08:45:00Z\n  2026-11-24T09:00:00Z  Tue  warm-up from 2026-11-24T08:45:00Z\n  2026-11-25T09:00:00Z  Wed  warm-up from 2026-11-25T08:45:00Z\n  2026-11-26T09:00:00Z  Thu  warm-up from 2026-11-26T08:45:00Z\n  2026-11-27T09:00:00Z  Fri  warm-up from 2026-11-27T08:45:00Z\n", "", 0},
		{"wait: a time that has passed", []string{"wait", "--until", "2026-11-22T09:59:00Z"}, "waiting until 2026-11-22T09:59:00Z (0s from now)\nreleased\n", "", 0},
		{"wait: not a time", []string{"wait", "--until", "10am"}, "", `--until "10am": not an RFC 3339 time`, 2},
		{"prime", []string{"prime", "*/30 * * * 1-5", "--lead", "10m"}, "20 * * * 1-5\n50 0-22 * * 1-5\n50 23 * * 0-4\n", "", 0},
		{"prime needs extended", []string{"prime", "0 0 1 * *", "--lead", "10m"}, "", "rerun with --extended to print it", 2},
		{"prime extended", []string{"prime", "0 0 1 * *", "--lead", "10m", "--extended"}, "50 23 L * *\n", "", 0},
		{"prime impossible even extended", []string{"prime", "0 0 * 3 5", "--lead", "24h", "--extended"}, "", "no set of schedules fires exactly 24h before every run", 2},
		{"prime bad lead", []string{"prime", "0 0 * * *", "--lead", "90s"}, "", "whole number of minutes", 2},
		{"prime without lead", []string{"prime", "0 0 * * *"}, "", `required flag(s) "lead" not set`, 2},
		{"prime DST warning", []string{"prime", "30 2 * * *", "--lead", "1h", "--time-zone", "America/New_York"}, "30 1 * * *\n", "warning: in America/New_York, 4 of the 731 runs", 0},
		{"spread table", []string{"spread", "--every", "30m", "--keys", "7,20,863,195,81,3"},
			"KEY  SCHEDULE\n7    22,52 * * * *\n20   2,32 * * * *\n863  17,47 * * * *\n195  12,42 * * * *\n81   7,37 * * * *\n3    27,57 * * * *\n", "", 0},
		{"spread bad every", []string{"spread", "--every", "45m", "--keys", "a"}, "", "every 45m0s: one cron schedule fires exactly every D only when", 2},
		{"spread bad output", []string{"spread", "--every", "1h", "--keys", "a", "-o", "xml"}, "", `-o "xml"`, 2},
		{"version", []string{"version"}, "", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if tc.stdout != "" && stdout != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tc.stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tc.stderr)
			}
			if tc.code == exitBadInput && strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("invalid input must give one line on stderr, got %q", stderr)
			}
		})
	}
}

func TestSpreadJSON(t *testing.T) {
	stdout, _, code := runCLI(t, "spread", "--every", "1h", "--keys", "a,b,c", "--strategy", "hash", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var assignments []struct{ Key, Schedule string }
	if err := json.Unmarshal([]byte(stdout), &assignments); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	if len(assignments) != 3 {
		t.Fatalf("%d assignments, want one per key: %+v", len(assignments), assignments)
	}
	if first := assignments[0]; first.Key != "a" || !strings.HasSuffix(first.Schedule, " * * * *") {
		t.Errorf("first assignment %+v, want key a on an hourly schedule", first)
	}
}

func TestCommandLineErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"spread", "--keys", "a"}, {"version", "extra"}} {
		if _, stderr, code := runCLI(t, args...); code != exitBadInput {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
	}
}
