package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/test/framework"
)

// parserBuilders are the only places outside api/v1alpha1 that build a
// cron.Parser: the CLI's offline commands, which read a schedule given on
// the command line with the flags' dialect, zone and policy. Everything
// that reads an object's schedule asks api/v1alpha1 (Meaning,
// CronJobMeaning, ScheduleParser), so that it means the same everywhere.
var parserBuilders = []string{"cmd/ontime/app/schedulecmd/schedule_flags.go", "cmd/ontime/app/schedulecmd/prime.go"}

// TestSchedulesAreReadInOnePlace fails when code outside api/v1alpha1 and
// the CLI's offline commands builds a cron.Parser (a cron.Parser{…}
// literal).
func TestSchedulesAreReadInOnePlace(t *testing.T) {
	root := framework.RepoRoot()
	var found []string
	for _, dir := range []string{"cmd", "internal", "pkg"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if strings.HasPrefix(rel, "pkg/cron/") || slices.Contains(parserBuilders, rel) {
				return nil
			}
			found = append(found, parserLiterals(t, path, rel)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, at := range found {
		t.Errorf("%s builds a cron.Parser; read schedules through api/v1alpha1 (Meaning, CronJobMeaning, ScheduleParser)", at)
	}
	if len(parserLiterals(t, filepath.Join(root, parserBuilders[0]), parserBuilders[0])) == 0 {
		t.Errorf("found no cron.Parser literal in %s: the check does not see them", parserBuilders[0])
	}
}

// parserLiterals lists the cron.Parser{…} literals of one file.
func parserLiterals(t *testing.T, path, rel string) []string {
	t.Helper()
	var found []string
	for _, at := range nodesWhere(t, path, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return false
		}
		sel, ok := lit.Type.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Parser" {
			return false
		}
		pkg, ok := sel.X.(*ast.Ident)
		return ok && pkg.Name == "cron"
	}) {
		found = append(found, rel+":"+at)
	}
	return found
}

// nodesWhere parses one Go file and lists where (line:column) the nodes
// that match are.
func nodesWhere(t *testing.T, path string, match func(ast.Node) bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	ast.Inspect(file, func(n ast.Node) bool {
		if n != nil && match(n) {
			found = append(found, strings.TrimPrefix(fset.Position(n.Pos()).String(), path+":"))
		}
		return true
	})
	return found
}
