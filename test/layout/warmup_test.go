package layout

import (
	"go/ast"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/test/framework"
)

// warmUpCarriedOut is the one place that carries out warm-up's changes
// (warmupobjects.Executor.Execute) for every kind of owner: the loop of
// owners.Reconciler.
const warmUpCarriedOut = "internal/controller/owners/reconciler.go"

// TestWarmUpIsCarriedOutInOnePlace fails when code other than the owners'
// one reconciler calls an Execute(ctx, changes) method: a kind of owner
// that carried out its own warm-up would drift from the others (it did,
// before the loop was one).
func TestWarmUpIsCarriedOutInOnePlace(t *testing.T) {
	root := framework.RepoRoot()
	found := map[string][]string{}
	for _, dir := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			found[rel] = executeCalls(t, path)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for file, calls := range found {
		if file == warmUpCarriedOut {
			continue
		}
		for _, at := range calls {
			t.Errorf("%s:%s carries out warm-up itself; return the changes in the kind's plan (owners.Decision.WarmUp) and let owners.Reconciler carry them out", file, at)
		}
	}
	if len(found[warmUpCarriedOut]) != 1 {
		t.Errorf("found %d Execute calls in %s, want 1: the check does not see them", len(found[warmUpCarriedOut]), warmUpCarriedOut)
	}
}

// executeCalls lists the lines of one file that call a method Execute with
// two arguments (a context and the changes).
func executeCalls(t *testing.T, path string) []string {
	t.Helper()
	return nodesWhere(t, path, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "Execute"
	})
}
