package layout

import (
	"go/build/constraint"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/test/framework"
)

// goTestLine is one `go test` of the Makefile: its flags and packages.
var goTestLine = regexp.MustCompile(`\$\(GO\) test (.*)`)

// testName is a test, benchmark or fuzz target a -run, -bench or -fuzz
// pattern names.
var testName = regexp.MustCompile(`(Test|Benchmark|Fuzz)[A-Za-z0-9_]+`)

// TestMakefileRunsTestsThatExist: every test a `go test -run`, `-bench` or `-fuzz`
// of the Makefile names is declared in one of the packages it runs, in a
// file its build tags include. go test passes when a pattern matches
// nothing, so a test renamed or moved behind a build tag would otherwise
// leave CI without it and without a word.
func TestMakefileRunsTestsThatExist(t *testing.T) {
	root := framework.RepoRoot()
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, line := range strings.Split(string(makefile), "\n") {
		m := goTestLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		args := strings.Fields(m[1])
		tags, patterns, packages := goTestArgs(args)
		for _, pattern := range patterns {
			for _, name := range testName.FindAllString(pattern, -1) {
				checked++
				if !testDeclaredIn(t, root, packages, name, tags) {
					t.Errorf("Makefile runs %s in %v with tags %q, where no file those tags build declares it:\n  %s", name, packages, strings.Join(tags, ","), strings.TrimSpace(line))
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("found %d tests named by the Makefile's go test lines; the pattern no longer reads them", checked)
	}
}

// goTestArgs reads a go test command line's -tags, its -run, -bench and
// -fuzz patterns, and its package directories.
func goTestArgs(args []string) (tags, patterns, packages []string) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "-args" {
			break
		}
		value := func() string {
			if i+1 < len(args) {
				i++
				return strings.Trim(args[i], `'"`)
			}
			return ""
		}
		switch {
		case arg == "-tags":
			if v := value(); v != "" && !strings.Contains(v, "$(") {
				tags = strings.Split(v, ",")
			}
		case arg == "-run" || arg == "-bench" || arg == "-fuzz":
			patterns = append(patterns, value())
		case strings.HasPrefix(arg, "./") && !strings.Contains(arg, "..."):
			packages = append(packages, strings.TrimSuffix(strings.TrimPrefix(arg, "./"), "/"))
		}
	}
	return tags, patterns, packages
}

// testDeclaredIn says whether a _test.go file of one of the packages declares
// func name, in a file the tags build.
func testDeclaredIn(t *testing.T, root string, packages []string, name string, tags []string) bool {
	t.Helper()
	for _, pkg := range packages {
		files, _ := filepath.Glob(filepath.Join(root, pkg, "*_test.go"))
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(src), "\nfunc "+name+"(") && builds(string(src), tags) {
				return true
			}
		}
	}
	return false
}

// builds says whether a file's //go:build line, if any, holds with tags.
func builds(src string, tags []string) bool {
	for _, line := range strings.Split(src, "\n") {
		if constraint.IsGoBuild(line) {
			expr, err := constraint.Parse(line)
			if err != nil {
				return false
			}
			return expr.Eval(func(tag string) bool {
				for _, t := range tags {
					if t == tag {
						return true
					}
				}
				return tag == "linux" || tag == "amd64" || tag == "unix"
			})
		}
		if strings.HasPrefix(line, "package ") {
			return true
		}
	}
	return true
}
