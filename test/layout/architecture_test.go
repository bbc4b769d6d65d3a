package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/test/framework"
)

// goName is a code reference in prose: an identifier, or a dotted chain
// of them (planner.Decide, scheduledjob.Controller.Reconcile).
var goName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// repoPath is a reference to a package or file of the repository.
var repoPath = regexp.MustCompile(`^(cmd|internal|api|pkg|test|hack|config|charts|docs)/[A-Za-z0-9_./*-]*$`)

// notCode are words the page puts in backquotes that are not the
// repository's declarations: a CLI command's name and an API server's
// status reason.
var notCode = map[string]bool{"prime": true, "next": true, "explain": true, "spread": true, "convert": true, "pause": true, "AlreadyExists": true}

// apiPaths begin the dotted references that name an object's fields
// (status.active), not code.
var apiPaths = []string{"status.", "spec.", "metadata."}

// TestArchitecturePageNamesWhatExists reads docs/architecture.md as a
// newcomer would follow it: every package or file path it names exists,
// every Go file it names exists, and every function, type, method, field
// or constant it names in backquotes is declared in the code (a chain
// pkg.Type.Method by its last two names). A rename that leaves the page
// behind fails here.
func TestArchitecturePageNamesWhatExists(t *testing.T) {
	root := framework.RepoRoot()
	page, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	code := readCode(t, root)
	checked := 0
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(string(page), -1) {
		isReference, problem := code.resolve(m[1])
		if isReference {
			checked++
		}
		if problem != "" {
			t.Errorf("docs/architecture.md names %s, %s", m[1], problem)
		}
	}
	if checked < 60 {
		t.Errorf("checked %d references of docs/architecture.md: the reading is broken", checked)
	}
}

// code is what the repository holds, as a reader looks it up.
type code struct {
	root string
	// declared are the names its Go code declares (declarations).
	declared map[string]bool
	// files are its Go files' base names.
	files map[string]bool
}

// resolve reports whether ref is a reference to the code (a path, a Go
// file, a Go name) and, when it is, what is wrong with it.
func (c code) resolve(ref string) (isReference bool, problem string) {
	switch {
	case repoPath.MatchString(ref):
		if matches, _ := filepath.Glob(filepath.Join(c.root, strings.TrimSuffix(ref, "/"))); len(matches) == 0 {
			return true, "which does not exist"
		}
	case strings.HasSuffix(ref, ".go") && !strings.Contains(ref, " "):
		if !c.files[filepath.Base(ref)] {
			return true, "a file no package has"
		}
	case goName.MatchString(ref) && !isAPIPath(ref) && !notCode[ref]:
		parts := strings.Split(ref, ".")
		if len(parts) > 2 {
			parts = parts[len(parts)-2:]
		}
		if !c.declared[strings.Join(parts, ".")] && (len(parts) != 2 || !c.declared[parts[1]]) {
			return true, "which the code does not declare"
		}
	default:
		return false, ""
	}
	return true, ""
}

func isAPIPath(ref string) bool {
	for _, prefix := range apiPaths {
		if strings.HasPrefix(ref, prefix) {
			return true
		}
	}
	return false
}

// readCode reads the names the repository's Go code declares: each
// package's name, top-level names as NAME and PACKAGE.NAME, methods and
// fields as TYPE.NAME and NAME, fields' JSON names (the API's), the string
// values of constants and variables (event reasons, metric names), and
// the base names of its Go files.
func readCode(t *testing.T, root string) code {
	t.Helper()
	c := code{root: root, declared: map[string]bool{}, files: map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		c.files[filepath.Base(path)] = true
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		c.declared[file.Name.Name] = true
		for _, decl := range file.Decls {
			c.declare(file.Name.Name, decl)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (c code) add(names ...string) {
	for _, n := range names {
		c.declared[n] = true
	}
}

// declare adds the names one declaration of package pkg declares.
func (c code) declare(pkg string, decl ast.Decl) {
	switch decl := decl.(type) {
	case *ast.FuncDecl:
		c.add(decl.Name.Name, pkg+"."+decl.Name.Name)
		if decl.Recv != nil && len(decl.Recv.List) == 1 {
			c.add(framework.FuncName(decl))
		}
	case *ast.GenDecl:
		for _, spec := range decl.Specs {
			switch spec := spec.(type) {
			case *ast.TypeSpec:
				c.add(spec.Name.Name, pkg+"."+spec.Name.Name)
				if st, ok := spec.Type.(*ast.StructType); ok {
					c.declareFields(spec.Name.Name, st)
				}
			case *ast.ValueSpec:
				c.declareValues(pkg, spec)
			}
		}
	}
}

// declareFields adds a struct's fields, by name and by JSON name.
func (c code) declareFields(typeName string, st *ast.StructType) {
	for _, field := range st.Fields.List {
		for _, n := range field.Names {
			c.add(n.Name, typeName+"."+n.Name)
		}
		if field.Tag != nil {
			tag, _ := strconv.Unquote(field.Tag.Value)
			name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			c.add(name)
		}
	}
}

// declareValues adds constants' and variables' names and the strings
// they hold.
func (c code) declareValues(pkg string, spec *ast.ValueSpec) {
	for _, n := range spec.Names {
		c.add(n.Name, pkg+"."+n.Name)
	}
	ast.Inspect(spec, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			value, _ := strconv.Unquote(lit.Value)
			c.add(value)
		}
		return true
	})
}

// TestOneRunsPathIsTrue reads docs/architecture.md's list of the files one
// run crosses: rows numbered in order, each file existing and declaring
// every function or method its row names in backquotes (Type.Method for
// a method of that type), and the count the page states equal to the
// rows'. A function moved to another file, or renamed, fails here.
func TestOneRunsPathIsTrue(t *testing.T) {
	root := framework.RepoRoot()
	page, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := between(string(page), "### The files one run crosses, in order", "\nWarm-up adds")
	if section == "" {
		t.Fatal("docs/architecture.md has no section \"The files one run crosses, in order\"")
	}
	row := regexp.MustCompile("(?m)^\\| (\\d+) \\| `([^`]+)` \\| (.*) \\|$")
	rows := row.FindAllStringSubmatch(section, -1)
	for i, r := range rows {
		if n, _ := strconv.Atoi(r[1]); n != i+1 {
			t.Errorf("row %d is numbered %s", i+1, r[1])
		}
		declared := declaredIn(t, filepath.Join(root, r[2]))
		names := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(r[3], -1)
		if len(names) == 0 {
			t.Errorf("%s: its row names no function", r[2])
		}
		for _, name := range names {
			if !declared[name[1]] {
				t.Errorf("%s does not declare %s, which docs/architecture.md's path names there", r[2], name[1])
			}
		}
	}
	stated := regexp.MustCompile(`(\d+) files today`).FindStringSubmatch(section)
	if stated == nil || stated[1] != strconv.Itoa(len(rows)) {
		t.Errorf("the page states %v files, its list has %d", stated, len(rows))
	}
	if len(rows) < 10 {
		t.Errorf("read %d rows: the reading is broken", len(rows))
	}
}

// between is the text of s from the line start to end, "" without start.
func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, end); j >= 0 {
		s = s[:j]
	}
	return s
}

// declaredIn are the functions a Go file declares, each by its name and,
// for a method, also as Receiver.name.
func declaredIn(t *testing.T, path string) map[string]bool {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	declared := map[string]bool{}
	for _, decl := range file.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok {
			declared[fn.Name.Name] = true
			declared[framework.FuncName(fn)] = true
		}
	}
	return declared
}
