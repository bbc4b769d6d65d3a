package framework

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// ShellBlock is one ```sh block of a Markdown page that a test runs, as a
// reader would: in order, each in a shell of its own.
type ShellBlock struct {
	// Line is the block's first line in the page (its fence), for messages.
	Line int
	// Script is the block's text.
	Script string
	// NotRun is why the test does not run the block, from the comment
	// <!-- not run in the test: REASON --> right above its fence; empty
	// for a block that runs.
	NotRun string
	// OutputContains are what the block's output (stdout and stderr) must
	// contain, from comments <!-- output contains: TEXT --> right below
	// its closing fence.
	OutputContains []string
}

var (
	notRunComment = regexp.MustCompile(`^<!-- not run in the test: (.+) -->$`)
	outputComment = regexp.MustCompile(`^<!-- output contains: (.+) -->$`)
)

// ShellBlocks reads a Markdown page's ```sh blocks. Other fences (yaml,
// console, ...) are text for the reader and not run.
func ShellBlocks(path string) ([]ShellBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var blocks []ShellBlock
	var current *ShellBlock
	var fence, previous string
	afterBlock := false
	scanner := bufio.NewScanner(f)
	for n := 1; scanner.Scan(); n++ {
		line := scanner.Text()
		switch {
		case current != nil && line == fence:
			blocks = append(blocks, *current)
			current, afterBlock = nil, true
		case current != nil:
			current.Script += line + "\n"
		case strings.HasPrefix(line, "```"):
			afterBlock = false
			if fence = strings.Repeat("`", len(line)-len(strings.TrimLeft(line, "`"))); strings.TrimPrefix(line, fence) != "sh" {
				// Not a shell block: skip to its end.
				if !skipFence(scanner, &n, fence) {
					return nil, fmt.Errorf("%s:%d: a fence that is never closed", path, n)
				}
				break
			}
			current = &ShellBlock{Line: n}
			if m := notRunComment.FindStringSubmatch(previous); m != nil {
				current.NotRun = m[1]
			}
		case afterBlock && outputComment.MatchString(line):
			last := &blocks[len(blocks)-1]
			last.OutputContains = append(last.OutputContains, outputComment.FindStringSubmatch(line)[1])
		default:
			afterBlock = false
			if outputComment.MatchString(line) {
				return nil, fmt.Errorf("%s:%d: %q is not right below a sh block", path, n, line)
			}
		}
		previous = line
	}
	if current != nil {
		return nil, fmt.Errorf("%s:%d: a sh block that is never closed", path, current.Line)
	}
	return blocks, scanner.Err()
}

// skipFence reads up to the fence's closing line.
func skipFence(scanner *bufio.Scanner, n *int, fence string) bool {
	for scanner.Scan() {
		*n++
		if scanner.Text() == fence {
			return true
		}
	}
	return false
}
