package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ontime-dev/ontime/hack/benchutil"
)

// restartDelay is how long an exited replica stays down before it is
// started again, as a Deployment's kubelet restarts a container.
const restartDelay = time.Second

// replica is one `ontime controller` process with leader election, kept
// running by supervise.
type replica struct {
	name        string
	args        []string
	log         string
	metricsPort int

	mu  sync.Mutex
	cmd *exec.Cmd
}

func newReplica(name, binary, kubeconfig, work string) *replica {
	metrics := freePort()
	return &replica{name: name, metricsPort: metrics, log: filepath.Join(work, "ontime-"+name+".log"),
		args: []string{binary, "controller", "--kubeconfig", kubeconfig,
			"--leader-elect", "--leader-election-namespace", "ontime-system", "--webhook=false",
			"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metrics),
			"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", freePort())}}
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		benchutil.Fail("%v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// supervise starts the replica and starts it again whenever it exits,
// until ctx ends.
func (r *replica) supervise(ctx context.Context) {
	for ctx.Err() == nil {
		log, err := os.OpenFile(r.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			benchutil.Fail("%v", err)
		}
		cmd := exec.Command(r.args[0], r.args[1:]...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			benchutil.Fail("starting replica %s: %v", r.name, err)
		}
		r.mu.Lock()
		r.cmd = cmd
		r.mu.Unlock()
		err = cmd.Wait()
		log.Close()
		if ctx.Err() == nil {
			benchutil.Progress("replica %s exited (%v); restarting it in %s", r.name, err, restartDelay)
		}
		time.Sleep(restartDelay)
	}
}

// kill sends SIGKILL to the running process.
func (r *replica) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
	}
}

// stop ends the replica gracefully (supervise no longer restarts it once
// its context is done).
func (r *replica) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
	}
}

// isLeader reports whether the replica says, on its metrics endpoint,
// that it holds the lease.
func (r *replica) isLeader(client *http.Client) bool {
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", r.metricsPort))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "leader_election_master_status{") {
			return strings.HasSuffix(strings.TrimSpace(line), " 1")
		}
	}
	return false
}
