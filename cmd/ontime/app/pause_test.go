package app

import (
	"bufio"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestPauseExitsZeroOnSIGTERM runs ontime pause in a child process (this
// test binary again), waits for it to say it is pausing, sends SIGTERM, and
// expects exit 0: what a kubelet stopping a pause container sees.
func TestPauseExitsZeroOnSIGTERM(t *testing.T) {
	if os.Getenv("ONTIME_PAUSE_CHILD") == "1" {
		os.Exit(Run([]string{"pause"}, os.Stdout, os.Stderr))
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		child := exec.Command(os.Args[0], "-test.run=^TestPauseExitsZeroOnSIGTERM$")
		child.Env = append(os.Environ(), "ONTIME_PAUSE_CHILD=1")
		stdout, err := child.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line != "pausing until SIGTERM or SIGINT\n" {
			t.Fatalf("first line %q, %v", line, err)
		}
		if err := child.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if err := child.Wait(); err != nil {
			t.Errorf("after %v: %v, want exit 0", sig, err)
		}
	}
}
