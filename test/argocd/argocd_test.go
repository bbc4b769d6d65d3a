// Package argocd tests the Argo CD health check and resource action of
// config/argocd in a Lua interpreter set up as Argo CD's is (gopher-lua,
// with only os.date and os.time of the os library), against sample
// ScheduledJobs.
package argocd

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"sigs.k8s.io/yaml"

	"github.com/ontime-dev/ontime/test/framework"
)

func script(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config/argocd", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// run evaluates a script with obj set to the object, as Argo CD does, and
// returns its result.
func run(t *testing.T, source string, object map[string]any) lua.LValue {
	t.Helper()
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}, {lua.OsLibName, lua.OpenOs}} {
		l.Push(l.NewFunction(lib.open))
		l.Push(lua.LString(lib.name))
		l.Call(1, 0)
	}
	// Argo CD's sandbox keeps only the os functions that read the clock.
	safeOs := l.NewTable()
	osLib := l.GetGlobal("os").(*lua.LTable)
	safeOs.RawSetString("date", osLib.RawGetString("date"))
	safeOs.RawSetString("time", osLib.RawGetString("time"))
	l.SetGlobal("os", safeOs)
	l.SetGlobal("obj", toLua(l, object))
	if err := l.DoString(source); err != nil {
		t.Fatal(err)
	}
	return l.Get(-1)
}

func toLua(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case map[string]any:
		table := l.NewTable()
		for key, item := range v {
			table.RawSetString(key, toLua(l, item))
		}
		return table
	case []any:
		table := l.NewTable()
		for _, item := range v {
			table.Append(toLua(l, item))
		}
		return table
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case bool:
		return lua.LBool(v)
	default:
		return lua.LNil
	}
}

func object(t *testing.T, manifest string) map[string]any {
	t.Helper()
	var o map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

const header = `apiVersion: ontime.dev/v1alpha1
kind: ScheduledJob
metadata:
  name: report
  namespace: team-a
  generation: 3
spec:
  schedule: "H 2 * * *"
`

func TestHealth(t *testing.T) {
	cases := []struct {
		name, status, want, message string
	}{
		{name: "no status yet", status: ``, want: "Progressing", message: "Waiting for the ontime controller"},
		{name: "status of an older generation", status: `
status:
  observedGeneration: 2
  conditions:
  - {type: Ready, status: "True", reason: Scheduled, message: "next run at 02:37"}`, want: "Progressing"},
		{name: "scheduling", status: `
status:
  observedGeneration: 3
  conditions:
  - {type: Ready, status: "True", reason: Scheduled, message: "next run at 02:37"}`, want: "Healthy", message: "next run at 02:37"},
		{name: "run-once done", status: `
status:
  observedGeneration: 3
  conditions:
  - {type: Ready, status: "True", reason: Completed, message: "started its run"}`, want: "Healthy"},
		{name: "suspended", status: `
status:
  observedGeneration: 3
  conditions:
  - {type: Ready, status: "False", reason: Suspended, message: "spec.suspend is true"}`, want: "Suspended"},
		{name: "bad schedule", status: `
status:
  observedGeneration: 3
  conditions:
  - {type: Ready, status: "False", reason: InvalidSchedule, message: "never fires"}`, want: "Degraded", message: "never fires"},
		{name: "unknown zone", status: `
status:
  observedGeneration: 3
  conditions:
  - {type: Ready, status: "False", reason: UnknownTimeZone, message: "Mars/Olympus"}`, want: "Degraded"},
		{name: "spread not placed yet", status: `
status:
  observedGeneration: 3
  conditions:
  - {type: Ready, status: "False", reason: SpreadPending, message: "no place yet"}`, want: "Progressing"},
		{name: "warm-up cannot create its pods", status: `
status:
  observedGeneration: 3
  conditions:
  - {type: Ready, status: "True", reason: Scheduled, message: "next run at 02:37"}
  - {type: CapacityReady, status: "False", reason: WarmUpFailed, message: "priorityclass ontime-placeholder not found"}`,
			want: "Degraded", message: "priorityclass ontime-placeholder not found"},
		{name: "warming up", status: `
status:
  observedGeneration: 3
  conditions:
  - {type: Ready, status: "True", reason: Scheduled}
  - {type: CapacityReady, status: "False", reason: WarmingUp}`, want: "Healthy"},
	}
	health := script(t, "health.lua")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			result, ok := run(t, health, object(t, header+c.status)).(*lua.LTable)
			if !ok {
				t.Fatal("the health check returned no table")
			}
			if got := result.RawGetString("status").String(); got != c.want {
				t.Errorf("status %q, want %q", got, c.want)
			}
			if got := result.RawGetString("message").String(); c.message != "" && got != c.message {
				t.Errorf("message %q, want %q", got, c.message)
			}
		})
	}
}

func TestRunNowAction(t *testing.T) {
	sj := object(t, header)
	actions, ok := run(t, script(t, "actions/discovery.lua"), sj).(*lua.LTable)
	if !ok {
		t.Fatal("discovery returned no table")
	}
	runNow, ok := actions.RawGetString("run-now").(*lua.LTable)
	if !ok || runNow.RawGetString("disabled") != lua.LFalse {
		t.Fatalf("run-now is not offered, or disabled: %v", actions.RawGetString("run-now"))
	}

	before := time.Now().UTC().Truncate(time.Second)
	result, ok := run(t, script(t, "actions/run-now/action.lua"), sj).(*lua.LTable)
	if !ok {
		t.Fatal("the action returned no object")
	}
	metadata := result.RawGetString("metadata").(*lua.LTable)
	annotations, ok := metadata.RawGetString("annotations").(*lua.LTable)
	if !ok {
		t.Fatal("the action set no annotations")
	}
	value := annotations.RawGetString("ontime.dev/trigger").String()
	requested, err := time.Parse(time.RFC3339, value)
	if err != nil || requested.Before(before) || requested.After(time.Now().Add(time.Second)) {
		t.Errorf("ontime.dev/trigger = %q, want the time of the request (%v)", value, err)
	}
	if got := result.RawGetString("spec").(*lua.LTable).RawGetString("schedule").String(); got != "H 2 * * *" {
		t.Errorf("the action changed the spec: schedule %q", got)
	}

	deleting := object(t, header)
	deleting["metadata"].(map[string]any)["deletionTimestamp"] = "2026-11-25T00:00:00Z"
	actions = run(t, script(t, "actions/discovery.lua"), deleting).(*lua.LTable)
	if actions.RawGetString("run-now").(*lua.LTable).RawGetString("disabled") != lua.LTrue {
		t.Error("run-now is offered on a ScheduledJob being deleted")
	}
}
