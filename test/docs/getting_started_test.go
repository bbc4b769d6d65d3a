package docs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ontime-dev/ontime/internal/testenv"
	"github.com/ontime-dev/ontime/test/framework"
)

// TestShellBlocks: the reader of a page's sh blocks finds each block, the
// reason one is not run, and the output promised below it; other fences
// are not run, and a promise that follows no block is an error.
func TestShellBlocks(t *testing.T) {
	page := "# A page\n\n" +
		"<!-- not run in the test: it needs the internet -->\n```sh\ncurl -O x\n```\n\n" +
		"```yaml\nkind: Pod\n```\n" +
		"```sh\nkubectl get sj\nontime check\n```\n<!-- output contains: OK -->\n<!-- output contains: leads -->\n\ntext\n" +
		"````sh\necho '```'\n````\n"
	blocks, err := framework.ShellBlocks(write(t, page))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 {
		t.Fatalf("%d blocks, want 3: %+v", len(blocks), blocks)
	}
	if blocks[0].NotRun != "it needs the internet" || blocks[0].Script != "curl -O x\n" || blocks[0].Line != 4 {
		t.Errorf("first block %+v", blocks[0])
	}
	if b := blocks[1]; b.NotRun != "" || b.Script != "kubectl get sj\nontime check\n" || strings.Join(b.OutputContains, "|") != "OK|leads" {
		t.Errorf("second block %+v", b)
	}
	if b := blocks[2]; b.Script != "echo '```'\n" || len(b.OutputContains) != 0 {
		t.Errorf("a block in a longer fence %+v", b)
	}
	if _, err := framework.ShellBlocks(write(t, "text\n<!-- output contains: OK -->\n")); err == nil {
		t.Error("a promise below no block was accepted")
	}
	if _, err := framework.ShellBlocks(write(t, "```sh\nls\n")); err == nil {
		t.Error("an unclosed block was accepted")
	}
}

// TestGettingStartedIsRunnable: the quick start's blocks, which the
// real-node test runs, cover what the page promises (install from the
// registry, check, a first run, next and explain on the live object,
// convert both ways, warm-up), and only the CLI's download is not run.
func TestGettingStartedIsRunnable(t *testing.T) {
	blocks, err := framework.ShellBlocks(filepath.Join(testenv.RepoRoot(), "docs/getting-started.md"))
	if err != nil {
		t.Fatal(err)
	}
	var run strings.Builder
	notRun := 0
	for _, b := range blocks {
		if b.NotRun != "" {
			notRun++
			continue
		}
		run.WriteString(b.Script)
	}
	if notRun != 1 {
		t.Errorf("%d blocks not run, want 1 (the CLI's download)", notRun)
	}
	for _, want := range []string{"helm install ontime oci://ghcr.io/ontime-dev/charts/ontime", "ontime check", "ontime trigger sj/hello --wait",
		"ontime next sj/hello", "ontime explain sj/hello", "ontime convert -f -", "--to cronjob", "warmUp", "warmup.ontime.dev/lead", "helm uninstall"} {
		if !strings.Contains(run.String(), want) {
			t.Errorf("no block that runs has %q", want)
		}
	}
}

func write(t *testing.T, content string) string {
	t.Helper()
	return framework.WriteTempFile(t, "page.md", content)
}
