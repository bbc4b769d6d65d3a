package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ontime-dev/ontime/hack/benchutil"
)

// faults kills the leader on a period, and kube-apiserver and etcd once.
type faults struct {
	obs        *observer
	clusterDir string

	kills                           []time.Time
	apiserverRestarts, etcdRestarts int
}

// inject runs until start + cfg.duration: the leader is killed every
// cfg.killEvery, kube-apiserver at 40% of the duration and etcd at 70%.
func (f *faults) inject(ctx context.Context, cfg config, start time.Time) {
	end := start.Add(cfg.duration)
	apiserverAt := start.Add(cfg.duration * 4 / 10)
	etcdAt := start.Add(cfg.duration * 7 / 10)
	nextKill := start.Add(cfg.killEvery)
	for ctx.Err() == nil && time.Now().Before(end) {
		now := time.Now()
		switch {
		case !apiserverAt.IsZero() && !now.Before(apiserverAt):
			f.restartComponent("kube-apiserver", cfg.down)
			f.apiserverRestarts++
			apiserverAt = time.Time{}
		case !etcdAt.IsZero() && !now.Before(etcdAt):
			f.restartComponent("etcd", cfg.down)
			f.etcdRestarts++
			etcdAt = time.Time{}
		case !now.Before(nextKill):
			if leader := f.obs.leader(); leader != nil {
				benchutil.Progress("killing the leader, replica %s", leader.name)
				leader.kill()
				f.kills = append(f.kills, time.Now())
			}
			nextKill = nextKill.Add(cfg.killEvery)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// restartComponent kills a control-plane process of the kwokctl cluster
// with SIGKILL and, after down, starts it again with the same command
// line, directory and environment, recording its new pid where kwokctl
// looks for it.
func (f *faults) restartComponent(name string, down time.Duration) {
	pidFile := filepath.Join(f.clusterDir, "pids", name+".pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		benchutil.Fail("%v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		benchutil.Fail("%s: %v", pidFile, err)
	}
	proc := "/proc/" + strconv.Itoa(pid)
	cmdline, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		benchutil.Fail("reading %s's command line: %v", name, err)
	}
	environ, _ := os.ReadFile(proc + "/environ")
	dir, _ := os.Readlink(proc + "/cwd")
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")

	benchutil.Progress("killing %s (pid %d); it comes back in %s", name, pid, down)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(down)
	log, err := os.OpenFile(filepath.Join(f.clusterDir, "logs", name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		benchutil.Fail("%v", err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		benchutil.Fail("restarting %s: %v", name, err)
	}
	go func() { _ = cmd.Wait(); log.Close() }()
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		benchutil.Fail("%v", err)
	}
	benchutil.Progress("%s started again (pid %d)", name, cmd.Process.Pid)
}
