package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// machinery is what only the controllers may use: the controller runtime
// and the metrics client. Below them, the capabilities are functions of
// their inputs and the time (CONTRIBUTING.md, Layout).
var machinery = []string{"sigs.k8s.io/controller-runtime", "github.com/prometheus/"}

// pure says whether a package of the module is below the controllers:
// the capabilities, the API types and the schedule engine. The controllers,
// the webhook and the tests' API server are not.
func pure(name string) bool {
	switch {
	case name == "api/v1alpha1" || strings.HasPrefix(name, "pkg/"):
		return true
	case !strings.HasPrefix(name, "internal/"):
		return false
	}
	for _, impure := range []string{"internal/controller", "internal/webhook", "internal/testenv", "internal/scheme"} {
		if name == impure || strings.HasPrefix(name, impure+"/") {
			return false
		}
	}
	return true
}

// TestPureLayerHasNoControllerMachinery: no capability imports
// controller-runtime or Prometheus (internal/wakeup once returned a
// reconcile.Result, internal/warmup registered metrics on import).
func TestPureLayerHasNoControllerMachinery(t *testing.T) {
	for _, v := range machineryViolations(listPackages(t)) {
		t.Error(v)
	}
}

// TestMachineryViolationsAreFound: the check reports a capability that
// imports controller-runtime, and not a controller that does.
func TestMachineryViolationsAreFound(t *testing.T) {
	got := machineryViolations([]pkg{
		{ImportPath: module + "internal/wakeup", Imports: []string{"sigs.k8s.io/controller-runtime/pkg/reconcile", "time"}},
		{ImportPath: module + "internal/warmup", Imports: []string{"github.com/prometheus/client_golang/prometheus"}},
		{ImportPath: module + "internal/controller/requeue", Imports: []string{"sigs.k8s.io/controller-runtime/pkg/reconcile"}},
	})
	if len(got) != 2 || !strings.Contains(got[0], "internal/wakeup imports sigs.k8s.io/controller-runtime") || !strings.Contains(got[1], "internal/warmup imports github.com/prometheus") {
		t.Errorf("violations %q, want internal/wakeup's and internal/warmup's", got)
	}
}

func machineryViolations(pkgs []pkg) []string {
	var found []string
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.ImportPath, module)
		if !pure(name) {
			continue
		}
		for _, imported := range p.Imports {
			for _, prefix := range machinery {
				if strings.HasPrefix(imported, prefix) {
					found = append(found, name+" imports "+imported+": only the controllers (internal/controller/...) may")
				}
			}
		}
	}
	return found
}

// TestMetricsAreRegisteredOneWay: no package registers metrics in an
// init function (on import, into a global registry); internal/controller.Register
// hands controller-runtime's registry to each package's registration.
func TestMetricsAreRegisteredOneWay(t *testing.T) {
	for _, path := range goSources(t, ".") {
		for _, v := range registersOnImport(t, path) {
			t.Error(v)
		}
	}
}

// goSources are the module's Go files under dirs (relative to its top),
// tests left out, and outside bin and hidden directories; it fails the
// test if there are too few for a check over them to prove anything.
func goSources(t *testing.T, dirs ...string) []string {
	var paths []string
	for _, dir := range dirs {
		root := filepath.Join("../..", dir)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && path != root && (d.Name() == "bin" || strings.HasPrefix(d.Name(), ".")):
				return filepath.SkipDir
			case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
				paths = append(paths, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(paths) < 50 {
		t.Fatalf("read only %d Go files under %v; the check would prove nothing", len(paths), dirs)
	}
	return paths
}

// TestRegistrationOnImportIsFound: the check reports an init function that
// registers a collector.
func TestRegistrationOnImportIsFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.go")
	source := "package x\n\nfunc init() {\n\tmetrics.Registry.MustRegister(lateness)\n}\n"
	if err := os.WriteFile(path, []byte(source), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := registersOnImport(t, path); len(got) != 1 {
		t.Errorf("violations %q, want the init function's", got)
	}
}

// registersOnImport reports each init function of the file that calls a
// Register or MustRegister method.
func registersOnImport(t *testing.T, path string) []string {
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "init" || fn.Recv != nil || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Register" || sel.Sel.Name == "MustRegister") {
					found = append(found, path+": init registers metrics; register them in the package's own function, called from internal/controller.Register")
				}
			}
			return true
		})
	}
	return found
}
