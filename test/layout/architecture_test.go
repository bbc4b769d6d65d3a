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
// of them (planner.Compute, scheduledjob.Controller.Reconcile).
var goName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// repoPath is a reference to a package or file of the repository.
var repoPath = regexp.MustCompile(`^(cmd|internal|api|pkg|test|hack|config|charts|docs)/[A-Za-z0-9_./*-]*$`)

// notCode are words the page puts in backquotes that are not the
// repository's declarations: a CLI command's name and an API server's
// status reason.
var notCode = map[string]bool{"prime": true, "next": true, "explain": true, "spread": true, "convert": true, "AlreadyExists": true}

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
	declared, files := declarations(t, root)
	checked := 0
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(string(page), -1) {
		ref := m[1]
		switch {
		case repoPath.MatchString(ref):
			matches, _ := filepath.Glob(filepath.Join(root, strings.TrimSuffix(ref, "/")))
			if len(matches) == 0 {
				t.Errorf("docs/architecture.md names %s, which does not exist", ref)
			}
		case strings.HasSuffix(ref, ".go") && !strings.Contains(ref, " "):
			if !files[filepath.Base(ref)] {
				t.Errorf("docs/architecture.md names the file %s, which no package has", ref)
			}
		case goName.MatchString(ref) && !isAPIPath(ref) && !notCode[ref]:
			parts := strings.Split(ref, ".")
			if len(parts) > 2 {
				parts = parts[len(parts)-2:]
			}
			name := strings.Join(parts, ".")
			if !declared[name] && !(len(parts) == 2 && declared[parts[1]]) {
				t.Errorf("docs/architecture.md names %s, which the code does not declare", ref)
			}
		default:
			continue
		}
		checked++
	}
	if checked < 60 {
		t.Errorf("checked %d references of docs/architecture.md: the reading is broken", checked)
	}
}

func isAPIPath(ref string) bool {
	for _, prefix := range apiPaths {
		if strings.HasPrefix(ref, prefix) {
			return true
		}
	}
	return false
}

// declarations are the names the repository's Go code declares: each
// package's name, top-level names as NAME and PACKAGE.NAME, methods and
// fields as TYPE.NAME and NAME, fields' JSON names (the API's), the string
// values of constants and variables (event reasons, metric names), and
// the base names of its Go files.
func declarations(t *testing.T, root string) (map[string]bool, map[string]bool) {
	t.Helper()
	declared, files := map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		files[filepath.Base(path)] = true
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := file.Name.Name
		declared[pkg] = true
		add := func(names ...string) {
			for _, n := range names {
				declared[n] = true
			}
		}
		for _, decl := range file.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				add(decl.Name.Name, pkg+"."+decl.Name.Name)
				if decl.Recv != nil && len(decl.Recv.List) == 1 {
					add(receiverType(decl.Recv.List[0].Type) + "." + decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						add(spec.Name.Name, pkg+"."+spec.Name.Name)
						if st, ok := spec.Type.(*ast.StructType); ok {
							for _, field := range st.Fields.List {
								for _, n := range field.Names {
									add(n.Name, spec.Name.Name+"."+n.Name)
								}
								if field.Tag != nil {
									tag, _ := strconv.Unquote(field.Tag.Value)
									name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
									add(name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							add(n.Name, pkg+"."+n.Name)
						}
						ast.Inspect(spec, func(n ast.Node) bool {
							if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
								value, _ := strconv.Unquote(lit.Value)
								add(value)
							}
							return true
						})
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return declared, files
}

// receiverType is a method receiver's type name, without * or type
// parameters.
func receiverType(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.StarExpr:
		return receiverType(e.X)
	case *ast.IndexExpr:
		return receiverType(e.X)
	case *ast.IndexListExpr:
		return receiverType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}
