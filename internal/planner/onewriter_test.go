package planner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// statusWriters is, for each field of ScheduledJobStatus and each
// condition, the one function allowed to set it (status.go,
// capacity.go). A field added to the status needs its line here.
var statusWriters = map[string]string{
	"ObservedGeneration": "setObserved",
	"EffectiveSchedule":  "setObserved",
	"Spread":             "setObserved",
	"Active":             "setActive",
	"ActiveCount":        "setActive",
	"LastScheduleTime":   "setLastScheduleTime",
	"LastSuccessfulTime": "setLastSuccessfulTime",
	"LastMissedTime":     "recordMissed",
	"NextScheduleTime":   "readiness.write",
	"WarmUp":             "setWarmUp",
	"NextWarmUpTime":     "setWarmUp",
	"LastRunStart":       "setLastRunStart",
	"RecentRunStarts":    "setLastRunStart",
	"Failures":           "setFailures",
	"CatchUp":            "setCatchUp",
	"StartObjective":     "Plan.countObjective",
	"Deadline":           "setDeadline",
	// Conditions is never assigned: each condition has its writer, which
	// sets it through setCondition (the one caller of
	// meta.SetStatusCondition) or removes it.
	"Conditions":               "",
	"condition Ready":          "readiness.write",
	"condition CapacityReady":  "capacity.write",
	"condition Waiting":        "setWaiting",
	"condition DeadlineAtRisk": "setDeadline",
}

// TestOneWriterPerStatusField reads the planner's and the controllers'
// code and fails when a function other than the field's writer assigns
// a field of a ScheduledJob's status (an expression named status, or
// ending in .Status, or a ScheduledJobStatus literal's field), or sets or
// removes a condition, or writes a status as a map literal (a patch made
// by hand, as the standby's claim once was): a second writer is how two
// steps came to disagree about one field.
func TestOneWriterPerStatusField(t *testing.T) {
	fields := map[string]bool{}
	statusType := reflect.TypeFor[v1alpha1.ScheduledJobStatus]()
	for i := range statusType.NumField() {
		field := statusType.Field(i)
		fields[field.Name] = true
		if _, ok := statusWriters[field.Name]; !ok {
			t.Errorf("status field %s has no writer in statusWriters", field.Name)
		}
	}
	writes := map[string][]string{} // field -> "function (file:line)"
	for _, dir := range []string{".", "../controller"} {
		for _, file := range goFiles(t, dir) {
			for what, where := range statusWrites(t, file, fields) {
				writes[what] = append(writes[what], where...)
			}
		}
	}
	for what, where := range writes {
		for _, w := range where {
			if function, _, _ := strings.Cut(w, " "); function != statusWriters[what] {
				if what == rawStatus {
					t.Errorf("%s is written by %s: write the status's fields through their writers", what, w)
					continue
				}
				t.Errorf("%s is written by %s; its one writer is %s", what, w, statusWriters[what])
			}
		}
	}
	// The check itself: every writer is found.
	for what, writer := range statusWriters {
		if writer == "" {
			continue
		}
		if !slices.ContainsFunc(writes[what], func(w string) bool { return strings.HasPrefix(w, writer+" ") }) {
			t.Errorf("found no write of %s in %s: the check does not see it", what, writer)
		}
	}
}

func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// statusWrites finds, in one file, the status fields and conditions each
// function writes: field -> "function (file:line)".
func statusWrites(t *testing.T, path string, fields map[string]bool) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string][]string{}
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name := funcName(fn)
		record := func(what string, at token.Pos) {
			writes[what] = append(writes[what], name+" ("+fset.Position(at).String()+")")
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			for what, at := range nodeWrites(n, fields, name) {
				record(what, at)
			}
			return true
		})
	}
	return writes
}

// nodeWrites is what one node of function name's body writes: the status
// fields and conditions, each with where.
func nodeWrites(n ast.Node, fields map[string]bool, name string) map[string]token.Pos {
	writes := map[string]token.Pos{}
	switch n := n.(type) {
	case *ast.AssignStmt:
		for _, lhs := range n.Lhs {
			if field, ok := statusField(lhs, fields); ok {
				writes[field] = lhs.Pos()
			}
		}
	case *ast.CompositeLit:
		for _, what := range literalWrites(n, fields) {
			writes[what] = n.Pos()
		}
	case *ast.IncDecStmt:
		if field, ok := statusField(n.X, fields); ok {
			writes[field] = n.Pos()
		}
	case *ast.CallExpr:
		if condition, ok := conditionWritten(n); ok && (condition != "" || name != "setCondition") {
			writes["condition "+condition] = n.Pos()
		}
	}
	return writes
}

// rawStatus names a write of a status that bypasses its fields' writers:
// a map literal with a "status" key, the body of a patch made by hand.
// No function may make one.
const rawStatus = "a raw status (a map literal's \"status\")"

// literalWrites reports what a composite literal writes: the fields a
// ScheduledJobStatus literal sets, or rawStatus for a map literal with a
// "status" key.
func literalWrites(lit *ast.CompositeLit, fields map[string]bool) []string {
	var writes []string
	switch t := lit.Type.(type) {
	case *ast.MapType:
		for _, elt := range lit.Elts {
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				if key, ok := kv.Key.(*ast.BasicLit); ok && key.Value == `"status"` {
					writes = append(writes, rawStatus)
				}
			}
		}
	case *ast.SelectorExpr, *ast.Ident:
		if name := types.ExprString(t); name != "v1alpha1.ScheduledJobStatus" && name != "ScheduledJobStatus" {
			return nil
		}
		for _, elt := range lit.Elts {
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				if key, ok := kv.Key.(*ast.Ident); ok && fields[key.Name] {
					writes = append(writes, key.Name)
				}
			}
		}
	}
	return writes
}

// TestOneWriterCheckSeesLiterals: the check finds the writes that are not
// assignments: a status literal's fields and a patch's map literal.
func TestOneWriterCheckSeesLiterals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "writers.go")
	source := `package x

func claim(active []corev1.ObjectReference) any {
	return map[string]any{"status": map[string]any{"active": active, "activeCount": len(active)}}
}

func fresh(active []corev1.ObjectReference) v1alpha1.ScheduledJobStatus {
	return v1alpha1.ScheduledJobStatus{Active: active, ActiveCount: 1}
}
`
	if err := os.WriteFile(path, []byte(source), 0o600); err != nil {
		t.Fatal(err)
	}
	writes := statusWrites(t, path, map[string]bool{"Active": true, "ActiveCount": true})
	for what, function := range map[string]string{rawStatus: "claim", "Active": "fresh", "ActiveCount": "fresh"} {
		if len(writes[what]) != 1 || !strings.HasPrefix(writes[what][0], function+" ") {
			t.Errorf("%s: found %q, want one write in %s", what, writes[what], function)
		}
	}
}

// funcName is "name" for a function, "receiver.name" for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if ident, ok := recv.(*ast.Ident); ok {
		return ident.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// statusField reports the status field an assignment's left side names:
// X.Field where X is named status or ends in .Status.
func statusField(lhs ast.Expr, fields map[string]bool) (string, bool) {
	sel, ok := lhs.(*ast.SelectorExpr)
	if !ok || !fields[sel.Sel.Name] {
		return "", false
	}
	switch x := sel.X.(type) {
	case *ast.Ident:
		return sel.Sel.Name, x.Name == "status"
	case *ast.SelectorExpr:
		return sel.Sel.Name, x.Sel.Name == "Status"
	case *ast.StarExpr:
		ident, ok := x.X.(*ast.Ident)
		return sel.Sel.Name, ok && ident.Name == "status"
	}
	return "", false
}

// conditionWritten reports the condition a call sets or removes: a call
// of setCondition, meta.SetStatusCondition or meta.RemoveStatusCondition
// naming v1alpha1.ConditionX; "" when it names none (only setCondition
// itself may pass a condition type along).
func conditionWritten(call *ast.CallExpr) (string, bool) {
	var callee string
	switch f := call.Fun.(type) {
	case *ast.Ident:
		callee = f.Name
	case *ast.SelectorExpr:
		callee = f.Sel.Name
	}
	if callee != "setCondition" && callee != "SetStatusCondition" && callee != "RemoveStatusCondition" {
		return "", false
	}
	for _, arg := range call.Args {
		if sel, ok := arg.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "Condition") {
			return strings.TrimPrefix(sel.Sel.Name, "Condition"), true
		}
	}
	return "", true
}
