package waitcmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// TestOntimeWaitIsEarlyWait: `ontime wait` hands its command line to
// internal/earlywait as ontime-wait gets it (a command only after --, its
// own flags untouched) and makes its usage errors the user's (exit 2).
func TestOntimeWaitIsEarlyWait(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		wantStdout string
		wantErr    string
		wantInput  bool
	}{
		{args: []string{"--until", "2026-11-22T09:00:00Z"}, wantStdout: "waiting until 2026-11-22T09:00:00Z (0s from now)\nreleased\n"},
		{args: []string{"--until", "tomorrow"}, wantErr: `--until "tomorrow": not an RFC 3339 time`, wantInput: true},
		{args: []string{"--until", "2026-11-22T09:00:00Z", "--no-such-flag"}, wantErr: "unknown flag: --no-such-flag"},
		{args: []string{"--until", "2026-11-22T09:00:00Z", "--", "no-such-command-here", "--until", "x"}, wantErr: `command "no-such-command-here"`, wantInput: true},
		{args: []string{"--until", "2026-11-22T09:00:00Z", "report"}, wantErr: "goes after --", wantInput: true},
	} {
		cmd := NewCommand(func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) })
		var stdout, stderr bytes.Buffer
		cmd.SetArgs(tc.args)
		cmd.SetOut(&stdout)
		cmd.SetErr(&stderr)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.ExecuteContext(context.Background())
		if tc.wantErr == "" {
			if err != nil || stdout.String() != tc.wantStdout {
				t.Errorf("%q: %v, stdout %q; want %q", tc.args, err, stdout.String(), tc.wantStdout)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.As(err, new(cli.InputError)) != tc.wantInput {
			t.Errorf("%q: error %v; want one containing %q, the user's: %v", tc.args, err, tc.wantErr, tc.wantInput)
		}
	}
}
