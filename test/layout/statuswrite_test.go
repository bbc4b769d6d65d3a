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

// statusWritingPackage is the one package allowed to write a status subresource.
const statusWritingPackage = "internal/controller/statuswrite"

// TestStatusIsWrittenOneWay: the leader, the standby, backfill and the
// concurrency groups write status only through statuswrite.Write (one
// conditional writer); no other code of the operator calls
// Status().Update, Status().Patch or SubResource("status").
func TestStatusIsWrittenOneWay(t *testing.T) {
	read := 0
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join("../..", dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			// The tests' API server writes Jobs' and quotas' status as
			// other controllers would.
			if strings.Contains(filepath.ToSlash(path), statusWritingPackage+"/") || strings.Contains(filepath.ToSlash(path), "internal/testenv/") {
				return nil
			}
			read++
			for _, v := range statusWrites(t, path) {
				t.Error(v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if read < 50 {
		t.Fatalf("read only %d Go files; the check would prove nothing", read)
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
