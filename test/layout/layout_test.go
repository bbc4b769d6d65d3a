// Package layout checks that the repository's packages depend on each other
// in one direction only, as CONTRIBUTING.md's layout section says: cmd/ontime at
// the top; the controllers and the admission webhook; the pure capabilities
// (the planner, which composes warmup and spread for the ScheduledJob
// controller, then warmup and spread); then the API and the schedule
// engine. Capabilities import no other sideways, the webhook imports no
// capability but spread, and nothing but the controller command (cmd/ontime/app/controllercmd)
// imports a controller or the webhook.
package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ontime-dev/ontime/"

// allowed lists, for each package (a trailing /* covers its subpackages),
// the module's packages it may import. A package the table does not name
// fails the test, so a new capability's place is decided when it is added.
var allowed = map[string][]string{
	// The binary's main package only runs the command line.
	"cmd/ontime": {"cmd/ontime/app"},
	// The root command: it adds every command.
	"cmd/ontime/app": {"cmd/ontime/app/cli", "cmd/ontime/app/schedulecmd", "cmd/ontime/app/clustercmd", "cmd/ontime/app/controllercmd", "cmd/ontime/app/waitcmd"},
	// The commands that read schedules: next, explain, prime, spread,
	// convert, report.
	"cmd/ontime/app/schedulecmd": {"cmd/ontime/app/cli", "internal/validation", "internal/spread", "internal/convert", "api/v1alpha1", "pkg/cron"},
	// The commands that act on an installation: trigger, backfill, pause,
	// check (which reads the controller's Lease name), uninstall-preview.
	"cmd/ontime/app/clustercmd": {"cmd/ontime/app/cli", "cmd/ontime/app/controllercmd", "internal/validation", "api/v1alpha1"},
	// The commands' integration tests' API server.
	"cmd/ontime/app/clitest": {"internal/testenv", "internal/scheme"},
	// The controller command: the operator's wiring (flags, the manager,
	// leader election, the webhook server).
	"cmd/ontime/app/controllercmd": {"cmd/ontime/app/cli", "internal/controller", "internal/controller/recovery", "internal/webhook", "internal/scheme", "api/v1alpha1"},
	// ontime wait: the CLI's errors around the wait EarlyStart pods run.
	"cmd/ontime/app/waitcmd": {"cmd/ontime/app/cli", "internal/earlywait"},
	// The binary EarlyStart pods run, and its one package: the standard
	// library only (TestWaitBinaryIsStandardLibraryOnly).
	"cmd/ontime-wait":    {"internal/earlywait"},
	"internal/earlywait": {},
	// What the commands share: the user's errors, kubectl's cluster flags,
	// -o, the clock, ScheduledJob names and their completion.
	"cmd/ontime/app/cli":  {"internal/scheme", "api/v1alpha1"},
	"internal/controller": {"internal/controller/*", "internal/warmup", "api/v1alpha1"},
	"internal/controller/*": {"internal/controller/jobcontrol", "internal/controller/owners", "internal/controller/warmupobjects", "internal/controller/recovery", "internal/controller/requeue", "internal/controller/runmetrics", "internal/controller/statuswrite", "internal/planner", "internal/warmup", "internal/spread", "internal/wakeup",
		"api/v1alpha1", "pkg/cron"},
	// The ScheduledJob controller asks the spread ledgers where a
	// ScheduledJob is placed before it plans.
	"internal/controller/scheduledjob": {"internal/controller/jobcontrol", "internal/controller/owners", "internal/controller/warmupobjects", "internal/controller/recovery", "internal/controller/requeue", "internal/controller/runmetrics", "internal/controller/spreadledger", "internal/controller/statuswrite", "internal/planner", "internal/warmup", "internal/spread", "internal/wakeup",
		"api/v1alpha1", "pkg/cron"},
	// The Backfill controller: the backfill's plan, written through the
	// job-control layer.
	"internal/controller/backfill": {"internal/backfillplan", "internal/controller/jobcontrol", "internal/controller/requeue", "internal/controller/statuswrite", "internal/wakeup", "api/v1alpha1"},
	// The concurrency groups' controller: the group's decision, written
	// through the job-control layer.
	"internal/controller/concurrencygroup": {"internal/concurrency", "internal/controller/jobcontrol", "internal/controller/requeue", "internal/controller/runmetrics", "internal/controller/statuswrite", "internal/wakeup", "api/v1alpha1"},
	// The job-control layer: what every actor that starts or stops runs
	// does to their Jobs.
	"internal/controller/jobcontrol": {"internal/warmup", "api/v1alpha1"},
	// The one reconciler of every owner of warm-up: the loop, over each
	// kind's plan.
	"internal/controller/owners": {"internal/controller/warmupobjects", "internal/controller/recovery", "internal/controller/requeue", "internal/warmup", "internal/wakeup"},
	// A reconcile's result that looks again later: on controller-runtime
	// only.
	"internal/controller/requeue": {},
	// The one conditional status writer of every actor: on
	// controller-runtime only.
	"internal/controller/statuswrite": {"api/v1alpha1"},
	// The run metrics both owners of runs export, and how every
	// controller's metrics are registered.
	"internal/controller/runmetrics": {"api/v1alpha1"},
	// The one executor of warm-up, for every kind of owner.
	"internal/controller/warmupobjects": {"internal/controller/jobcontrol", "internal/warmup", "api/v1alpha1"},
	// Retrying after an API outage, for the controllers and the
	// controller command's start: on client-go and controller-runtime only.
	"internal/controller/recovery": {},
	// The exploration of interleavings runs the real controllers.
	"internal/controller/interleaving": {"internal/controller/scheduledjob", "internal/controller/standby", "api/v1alpha1", "pkg/cron"},
	"internal/webhook":                 {"internal/validation", "internal/spread", "api/v1alpha1", "pkg/cron"},
	"internal/validation":              {"internal/spread", "api/v1alpha1", "pkg/cron"},
	"internal/planner":                 {"internal/validation", "internal/warmup", "internal/objective", "internal/deadline", "internal/spread", "internal/wakeup", "api/v1alpha1", "pkg/cron"},
	"internal/objective":               {"api/v1alpha1"},
	"internal/deadline":                {"api/v1alpha1"},
	"internal/backfillplan":            {"internal/planner", "internal/warmup", "api/v1alpha1", "pkg/cron"},
	"internal/concurrency":             {"api/v1alpha1"},
	"internal/wakeup":                  {},
	"internal/warmup":                  {"api/v1alpha1", "pkg/cron"},
	"internal/spread":                  {"pkg/cron"},
	"internal/convert":                 {"api/v1alpha1", "pkg/cron"},
	"internal/scheme":                  {"api/v1alpha1"},
	"internal/testenv":                 {},
	"api/v1alpha1":                     {"pkg/cron"},
	"pkg/cron":                         {},
	"test/framework":                   {"internal/scheme", "internal/testenv"},
	"test/e2e":                         {"test/framework", "api/v1alpha1"},
	"test/*":                           {"test/framework", "internal/scheme", "api/v1alpha1", "pkg/cron"},
	// The chaos run judges a run's lateness by the standby's window: past
	// it only a leader may start a run.
	"test/chaos": {"test/framework", "internal/scheme", "internal/planner", "api/v1alpha1", "pkg/cron"},
	// The simulation of a concurrency group's warm-up runs the group's
	// decision and warm-up's, on a virtual clock.
	"test/bench/groupwarmup": {"internal/concurrency", "internal/warmup", "api/v1alpha1"},
	// The simulation of a spread concurrency group runs the balancer and
	// the group's decision.
	"test/bench/groupspread": {"internal/concurrency", "internal/spread", "api/v1alpha1"},
	"hack/*":                 {"pkg/cron"},
	// The measured path of one run drives the ScheduledJob controller
	// itself, on a fake API.
	"test/runpath/reconcile": {"internal/controller/scheduledjob", "internal/scheme", "api/v1alpha1"},
}

// testOnly may also be imported by any package's tests: the local API
// server, the scheme that talks to it, and the commands' API server.
var testOnly = []string{"internal/testenv", "internal/scheme", "cmd/ontime/app/clitest"}

// pkg is what `go list -json` says of a package, as far as this test reads.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func TestDependenciesPointOneWay(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages; the check would prove nothing", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// TestViolationsAreFound: the check reports a webhook that imports the
// planner, a capability that imports a controller, and an unknown package.
func TestViolationsAreFound(t *testing.T) {
	pkgs := []pkg{
		{ImportPath: module + "internal/webhook", Imports: []string{module + "internal/planner", "fmt"}},
		{ImportPath: module + "internal/planner", TestImports: []string{module + "internal/controller/scheduledjob"}},
		{ImportPath: module + "internal/newthing"},
		{ImportPath: module + "internal/controller/scheduledjob", Imports: []string{module + "internal/planner"}, XTestImports: []string{module + "internal/testenv"}},
	}
	got := violations(pkgs)
	want := []string{
		"internal/webhook imports internal/planner",
		"internal/planner (tests) imports internal/controller/scheduledjob",
		"internal/newthing has no entry",
	}
	if len(got) != len(want) {
		t.Fatalf("violations %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("violation %q, want one about %q", got[i], want[i])
		}
	}
}

// violations returns one line per forbidden import.
func violations(pkgs []pkg) []string {
	var found []string
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.ImportPath, module)
		rule, ok := ruleFor(name)
		if !ok {
			found = append(found, name+" has no entry in the table of allowed imports (test/layout)")
			continue
		}
		for _, imported := range ours(p.Imports) {
			if !permits(rule, imported) {
				found = append(found, name+" imports "+imported+"; allowed: "+strings.Join(rule, ", "))
			}
		}
		for _, imported := range ours(append(slices.Clone(p.TestImports), p.XTestImports...)) {
			if imported != name && !permits(rule, imported) && !slices.Contains(testOnly, imported) {
				found = append(found, name+" (tests) imports "+imported+"; allowed: "+strings.Join(append(rule, testOnly...), ", "))
			}
		}
	}
	return found
}

// ruleFor finds a package's entry: its own, else its closest parent's /*.
func ruleFor(name string) ([]string, bool) {
	if rule, ok := allowed[name]; ok {
		return rule, true
	}
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if rule, ok := allowed[dir+"/*"]; ok {
			return rule, true
		}
	}
	return nil, false
}

func permits(rule []string, imported string) bool {
	for _, allowedPath := range rule {
		if parent, ok := strings.CutSuffix(allowedPath, "/*"); ok && strings.HasPrefix(imported, parent+"/") || allowedPath == imported {
			return true
		}
	}
	return false
}

// ours keeps the module's own packages, without the module prefix.
func ours(imports []string) []string {
	var kept []string
	for _, imported := range imports {
		if name, ok := strings.CutPrefix(imported, module); ok {
			kept = append(kept, name)
		}
	}
	return kept
}

// TestWaitBinaryIsStandardLibraryOnly: cmd/ontime-wait, which every
// EarlyStart pod copies and starts in an init container of 10m CPU, links
// nothing but the standard library and internal/earlywait (one module
// more, such as client-go, would make it the 57 MB binary it replaces).
func TestWaitBinaryIsStandardLibraryOnly(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./cmd/ontime-wait")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := strings.Fields(string(out))
	want := []string{module + "internal/earlywait", module + "cmd/ontime-wait"}
	if !slices.Equal(got, want) {
		t.Errorf("cmd/ontime-wait depends on %q, want only %q", got, want)
	}
}

// listPackages asks the go command for every package of the module,
// including the tests behind their build tags (e2e, chaos, bench).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", "e2e,chaos,bench,image", "-json", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	for decoder := json.NewDecoder(bytes.NewReader(out)); ; {
		var p pkg
		if err := decoder.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}
