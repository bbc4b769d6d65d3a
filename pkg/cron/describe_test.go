package cron

import "testing"

func TestDescribe(t *testing.T) {
	amsterdam := mustLoad(t, "Europe/Amsterdam")
	tests := []struct {
		spec   string
		parser Parser
		want   string
	}{
		{"30 2 * * 1-5", Parser{Location: amsterdam}, "At 02:30, Monday through Friday (Europe/Amsterdam)"},
		{"* * * * *", Parser{}, "Every minute (UTC)"},
		{"*/15 * * * *", Parser{}, "Every 15 minutes (UTC)"},
		{"5-55/10 * * * *", Parser{}, "Every 10 minutes from minute 5 through 55 (UTC)"},
		{"0 * * * *", Parser{}, "At minute 0 past every hour (UTC)"},
		{"@hourly", Parser{}, "At minute 0 past every hour (UTC)"},
		{"0 9-17 * * *", Parser{}, "At minute 0 past hours 9 through 17 (UTC)"},
		{"*/15 9-17 * * 1-5", Parser{}, "Every 15 minutes during hours 9 through 17, Monday through Friday (UTC)"},
		{"0 */2 * * *", Parser{}, "At minute 0 past every 2 hours (UTC)"},
		{"30 9,12,15 * * *", Parser{}, "At 09:30, 12:30 and 15:30 (UTC)"},
		{"0 0 1 * *", Parser{}, "At 00:00, on day 1 of the month (UTC)"},
		{"0 0 1,15 * *", Parser{}, "At 00:00, on day 1 and 15 of the month (UTC)"},
		{"0 0 13 * 5", Parser{}, "At 00:00, on day 13 of the month or on Friday (UTC)"},
		{"0 0 * * 0", Parser{}, "At 00:00, on Sunday (UTC)"},
		{"0 0 * * 1,3,5", Parser{}, "At 00:00, on Monday, Wednesday and Friday (UTC)"},
		{"@yearly", Parser{}, "At 00:00, on day 1 of the month, in January (UTC)"},
		{"0 12 * 1-3 *", Parser{}, "At 12:00, in January through March (UTC)"},
		{"50 23 L * *", Parser{Dialect: Extended}, "At 23:50, on the last day of the month (UTC)"},
		{"0 0 * 2 1#5", Parser{Dialect: Extended}, "At 00:00, on the fifth Monday of the month, in February (UTC)"},
		{"0 0 LW * 5L", Parser{Dialect: Extended}, "At 00:00, on the last weekday of the month or on the last Friday of the month (UTC)"},
		{"@every 1h30m", Parser{}, "Every 1h30m, counted from when the schedule starts (UTC)"},
	}
	for _, tc := range tests {
		s, err := tc.parser.Parse(tc.spec)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.spec, err)
		}
		if got := s.Describe(); got != tc.want {
			t.Errorf("Describe(%q)\n got %q\nwant %q", tc.spec, got, tc.want)
		}
	}
}
