package app

import (
	"bytes"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/internal/testenv"
)

// TestDocsCommandsExist: every ontime command the documentation shows
// (in code blocks and inline code, as `ontime …` or `kubectl ontime …`)
// is a command whose --help runs, and every flag it passes is one of that
// command's flags. A command renamed or a flag dropped fails here before
// a reader finds out.
func TestDocsCommandsExist(t *testing.T) {
	commands := map[string][]string{} // a command line → where it is shown
	for _, file := range documentation(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(testenv.RepoRoot(), file)
		for _, line := range commandLines(string(text)) {
			commands[line] = append(commands[line], rel)
		}
	}
	if len(commands) < 20 {
		t.Fatalf("found %d ontime commands in the docs, want the dozens they show: the scan no longer matches them", len(commands))
	}
	helped := map[string]bool{}
	for line, files := range commands {
		path, err := checkCommandLine(line)
		if err != nil {
			t.Errorf("%s: `%s`: %v", strings.Join(slices.Compact(files), ", "), line, err)
			continue
		}
		if !helped[path] {
			helped[path] = true
			if err := runHelp(strings.Fields(path)); err != nil {
				t.Errorf("ontime %s --help: %v", path, err)
			}
		}
	}
	t.Logf("%d command lines of the docs, %d commands' --help: %v", len(commands), len(helped), slices.Sorted(maps.Keys(helped)))
}

// documentation is every Markdown file a user reads, except the CLI
// reference, which is generated from the commands (TestCLIReference).
func documentation(t *testing.T) []string {
	root := testenv.RepoRoot()
	var files []string
	for _, pattern := range []string{"*.md", "docs/*.md", "docs/*/*.md", "charts/ontime/*.md"} {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	return slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, filepath.Join("docs", "reference", "cli.md")) })
}

var (
	inlineCode = regexp.MustCompile("`([^`]+)`")
	// invocation is ontime's name where a command line starts: at the
	// start, after a prompt, a pipe or a shell's && or $(.
	invocation = regexp.MustCompile(`(?:^|\$ |\| |&& |\$\()(?:kubectl )?ontime ([a-z].*)$`)
)

// commandLines are the ontime command lines of a Markdown text, each
// without the words before ontime's name and with continued lines joined.
func commandLines(markdown string) []string {
	var lines []string
	add := func(text string) {
		if m := invocation.FindStringSubmatch(strings.TrimSpace(text)); m != nil {
			lines = append(lines, strings.TrimSpace(m[1]))
		}
	}
	inBlock, continued := false, ""
	for line := range strings.Lines(markdown) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
				add(strings.ReplaceAll(m[1], `\|`, "|"))
			}
			continue
		}
		if strings.HasSuffix(line, `\`) {
			continued += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		add(continued + line)
		continued = ""
	}
	return lines
}

// checkCommandLine finds the command a line (without "ontime ") runs and
// checks its flags; it returns the command's path ("next", "spread").
func checkCommandLine(line string) (string, error) {
	words := shellWords(line)
	root := newRootCommand(io.Discard, io.Discard)
	// cobra adds these two when it executes the root, not before.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	cmd, rest, err := root.Find(words)
	if err != nil {
		return "", err
	}
	if cmd == root {
		return "", errUnknownCommand(words)
	}
	for _, word := range rest {
		if err := checkFlag(cmd, word); err != nil {
			return "", err
		}
	}
	return strings.TrimPrefix(cmd.CommandPath(), root.Name()+" "), nil
}

type errUnknownCommand []string

func (e errUnknownCommand) Error() string { return "no command " + strings.Join(e, " ") }

// checkFlag checks a word that is a flag ("--count", "--count=3", "-n")
// against the command's flags, its parents' and cobra's own --help.
func checkFlag(cmd *cobra.Command, word string) error {
	if !strings.HasPrefix(word, "-") || word == "-" || word == "--" || strings.HasPrefix(word, "-…") {
		return nil
	}
	name, _, _ := strings.Cut(strings.TrimLeft(word, "-"), "=")
	if name == "help" || name == "h" {
		return nil
	}
	flags := cmd.Flags()
	flags.AddFlagSet(cmd.InheritedFlags())
	if strings.HasPrefix(word, "--") {
		if flags.Lookup(name) == nil {
			return errUnknownFlag{cmd.CommandPath(), "--" + name}
		}
		return nil
	}
	if len(name) != 1 || flags.ShorthandLookup(name) == nil {
		return errUnknownFlag{cmd.CommandPath(), "-" + name}
	}
	return nil
}

type errUnknownFlag struct{ command, flag string }

func (e errUnknownFlag) Error() string { return e.command + " has no flag " + e.flag }

// shellWords splits a command line as a shell would, quotes kept whole,
// up to the first word that ends the command (a pipe, a redirection, a
// comment, &&, ;).
func shellWords(line string) []string {
	var words []string
	var word bytes.Buffer
	inWord, quote := false, rune(0)
	flush := func() bool {
		if !inWord {
			return true
		}
		w := word.String()
		word.Reset()
		inWord = false
		switch w {
		case "|", "||", "&&", ";", ">", ">>", "2>&1", "#":
			return false
		}
		words = append(words, w)
		return true
	}
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if !flush() {
				return words
			}
		case r == ')' && !inWord:
			return words
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return words
}

// runHelp runs ontime PATH --help and reports an error if it fails.
func runHelp(path []string) error {
	var out bytes.Buffer
	root := newRootCommand(&out, &out)
	root.SetArgs(append(path, "--help"))
	if err := root.Execute(); err != nil {
		return err
	}
	if !strings.Contains(out.String(), "Usage:") {
		return errNoUsage(out.String())
	}
	return nil
}

type errNoUsage string

func (e errNoUsage) Error() string { return "no usage in its help: " + string(e) }

// TestCheckCommandLine: the scan finds the lines a reader would run and
// refuses a command or flag ontime does not have.
func TestCheckCommandLine(t *testing.T) {
	markdown := "Run `ontime next '0 * * * *' --count 3`, or `kubectl ontime check -n reports`.\n" +
		"Not `ontime.dev/trigger`, nor `ontime-system`.\n" +
		"```console\n$ ontime explain sj/nightly \\\n    -o json | jq .\n# ontime nxt\n```\n"
	want := []string{"next '0 * * * *' --count 3", "check -n reports", "explain sj/nightly      -o json | jq ."}
	if got := commandLines(markdown); !slices.Equal(got, want) {
		t.Errorf("commandLines:\n%q\nwant\n%q", got, want)
	}
	for line, refusal := range map[string]string{
		"next '0 * * * *' --count 3":            "",
		"explain sj/nightly -o json | jq --bad": "",
		"next sj/hello -n 3":                    "",
		"check -A":                              "has no flag -A",
		"next '0 * * * *' --counts 3":           "has no flag --counts",
		"nxt '0 * * * *'":                       `unknown command "nxt"`,
		"spread --every=30m --bogus=1":          "has no flag --bogus",
		"completion zsh > _ontime":              "",
	} {
		_, err := checkCommandLine(line)
		switch {
		case refusal == "" && err != nil:
			t.Errorf("%q: %v", line, err)
		case refusal != "" && (err == nil || !strings.Contains(err.Error(), refusal)):
			t.Errorf("%q: error %v, want %q", line, err, refusal)
		}
	}
}

// TestOperationsListsEveryCommand: docs/operations.md's section on the
// command line names every command the help lists.
func TestOperationsListsEveryCommand(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(text), "\n## The command line\n")
	if !found {
		t.Fatal("docs/operations.md has no section \"The command line\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	root := newRootCommand(io.Discard, io.Discard)
	root.InitDefaultCompletionCmd()
	for _, cmd := range root.Commands() {
		if cmd.Hidden || cmd.Name() == "help" {
			continue
		}
		if !strings.Contains(section, "`"+cmd.Name()) && !strings.Contains(section, "`ontime "+cmd.Name()) {
			t.Errorf("docs/operations.md, The command line, does not name ontime %s", cmd.Name())
		}
	}
}
