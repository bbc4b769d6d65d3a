package app

import (
	"strings"
	"testing"
)

// TestControllerScopeFlags: a bad scope is refused, naming the flag and the
// value, before the controller looks for a cluster.
func TestControllerScopeFlags(t *testing.T) {
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--job-cache", "mine"}, `ontime: --job-cache "mine": want "all" or "owned"`},
		{[]string{"--job-cache", "owned"}, "--job-cache=owned hides plain CronJobs' Jobs from the CronJob warm-up controller: add --cronjob-warmup=false"},
		{[]string{"--scheduledjob-selector", "shard in (a"}, `ontime: --scheduledjob-selector "shard in (a": `},
		{[]string{"--namespaces", "team-a,Team_B"}, `ontime: --namespaces: "Team_B" is not a namespace name`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := append([]string{"controller", "--kubeconfig", "/nonexistent"}, c.args...)
			_, stderr, code := runCLI(t, args...)
			if code != 2 || !strings.Contains(stderr, c.stderr) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, c.stderr)
			}
		})
	}
}
