package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// statusWritingPackage is the one package allowed to write a status subresource.
const statusWritingPackage = "internal/controller/statuswrite"

// TestStatusIsWrittenOneWay: the leader, the standby, backfill and the
// concurrency groups write status only through statuswrite.Write (one
// conditional writer); no other code of the operator calls
// Status().Update, Status().Patch or SubResource("status").
func TestStatusIsWrittenOneWay(t *testing.T) {
	for _, path := range goSources(t, "internal", "cmd") {
		// The tests' API server writes Jobs' and quotas' status as other
		// controllers would.
		if slashed := filepath.ToSlash(path); strings.Contains(slashed, statusWritingPackage+"/") || strings.Contains(slashed, "internal/testenv/") {
			continue
		}
		for _, v := range statusWrites(t, path) {
			t.Error(v)
		}
	}
}

// TestStatusWritesAreFound: the check reports the styles the four actors
// used before statuswrite.
func TestStatusWritesAreFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "writes.go")
	source := `package x

func f() {
	c.cached.Status().Update(ctx, bf)
	c.kubeClient.Status().Patch(ctx, updated, patch)
	c.SubResource("status").Patch(ctx, obj, patch)
	c.Status().Get(ctx, obj)
}
`
	if err := os.WriteFile(path, []byte(source), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := statusWrites(t, path); len(got) != 3 {
		t.Errorf("found %q, want the three writes and not the read", got)
	}
}

// statusWrites reports each write of a status subresource in the file.
func statusWrites(t *testing.T, path string) []string {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		method, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || (method.Sel.Name != "Update" && method.Sel.Name != "Patch") {
			return true
		}
		if sub, ok := method.X.(*ast.CallExpr); ok && isStatusSubresource(sub) {
			found = append(found, fset.Position(call.Pos()).String()+": writes status itself; write it through statuswrite.Write")
		}
		return true
	})
	return found
}

// isStatusSubresource: X.Status() or X.SubResource("status").
func isStatusSubresource(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if sel.Sel.Name == "Status" && len(call.Args) == 0 {
		return true
	}
	if sel.Sel.Name == "SubResource" && len(call.Args) == 1 {
		lit, ok := call.Args[0].(*ast.BasicLit)
		return ok && lit.Value == `"status"`
	}
	return false
}
