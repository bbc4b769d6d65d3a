package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ontime-dev/ontime/test/framework"
)

// TestDecideIsAChainOfSteps: planner.Decide is an ordered list of steps,
// each a function of the input and the results before it, returning its
// own result (docs/architecture.md). In internal/planner/decide.go, Decide
// assigns every field of decision exactly once, and every method of
// decision has a value receiver: a step reads the results before it and
// cannot change them.
func TestDecideIsAChainOfSteps(t *testing.T) {
	path := filepath.Join(framework.RepoRoot(), "internal", "planner", "decide.go")
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	violations, fields := chainViolations(file)
	if fields < 10 {
		t.Fatalf("read %d fields of decision: the reading is broken", fields)
	}
	for _, v := range violations {
		t.Error(v)
	}
}

// TestChainViolationsAreFound: a step with a pointer receiver, a result
// assigned twice and one never assigned are reported.
func TestChainViolationsAreFound(t *testing.T) {
	const source = `package planner
type decision struct{ a, b, c int }
func Decide() { var d decision; d.a = one(); d.a = two(); d.b = d.step() }
func (d *decision) step() int { d.c = 1; return 0 }
`
	file, err := parser.ParseFile(token.NewFileSet(), "decide.go", source, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := chainViolations(file)
	want := []string{
		"Decide assigns decision.a 2 times, want once",
		"Decide never assigns decision.c",
		"(*decision).step has a pointer receiver: a step may change the results before it",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations %q, want %q", got, want)
	}
}

// chainViolations reads decide.go: how often Decide assigns each field of
// decision, and the receivers of decision's methods. fields is how many
// fields decision has.
func chainViolations(file *ast.File) (violations []string, fields int) {
	var names []string
	assigned := map[string]int{}
	var pointerMethods []string
	for _, decl := range file.Decls {
		switch decl := decl.(type) {
		case *ast.GenDecl:
			names = append(names, decisionFields(decl)...)
		case *ast.FuncDecl:
			if decl.Recv == nil && decl.Name.Name == "Decide" {
				countAssignments(decl.Body, assigned)
			}
			if decl.Recv != nil && len(decl.Recv.List) == 1 {
				if star, ok := decl.Recv.List[0].Type.(*ast.StarExpr); ok {
					if ident, ok := star.X.(*ast.Ident); ok && ident.Name == "decision" {
						pointerMethods = append(pointerMethods, decl.Name.Name)
					}
				}
			}
		}
	}
	for _, name := range names {
		switch n := assigned[name]; {
		case n == 0:
			violations = append(violations, fmt.Sprintf("Decide never assigns decision.%s", name))
		case n > 1:
			violations = append(violations, fmt.Sprintf("Decide assigns decision.%s %d times, want once", name, n))
		}
	}
	for _, method := range pointerMethods {
		violations = append(violations, fmt.Sprintf("(*decision).%s has a pointer receiver: a step may change the results before it", method))
	}
	return violations, len(names)
}

// decisionFields are the field names of type decision, if decl declares it.
func decisionFields(decl *ast.GenDecl) []string {
	var names []string
	for _, spec := range decl.Specs {
		typ, ok := spec.(*ast.TypeSpec)
		if !ok || typ.Name.Name != "decision" {
			continue
		}
		if st, ok := typ.Type.(*ast.StructType); ok {
			for _, field := range st.Fields.List {
				for _, name := range field.Names {
					names = append(names, name.Name)
				}
			}
		}
	}
	return names
}

// countAssignments counts, per field, the assignments d.field = … in body.
func countAssignments(body *ast.BlockStmt, assigned map[string]int) {
	ast.Inspect(body, func(n ast.Node) bool {
		assign, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for _, lhs := range assign.Lhs {
			if sel, ok := lhs.(*ast.SelectorExpr); ok {
				if ident, ok := sel.X.(*ast.Ident); ok && ident.Name == "d" {
					assigned[sel.Sel.Name]++
				}
			}
		}
		return true
	})
}
