package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Component is one of a kwokctl cluster's control-plane processes and how
// to start it again: its command line, directory and environment as
// kwokctl started it, and where kwokctl keeps its pid and log. Its methods
// return errors rather than fail the test: fault injectors call them from
// goroutines.
type Component struct {
	Name             string
	Args, Env        []string
	Dir              string
	PidFile, LogFile string
}

// LoadComponent reads how the running component name of the cluster in
// clusterDir was started.
func LoadComponent(clusterDir, name string) (*Component, error) {
	c := &Component{Name: name, PidFile: filepath.Join(clusterDir, "pids", name+".pid"), LogFile: filepath.Join(clusterDir, "logs", name+".log")}
	pid, err := c.Pid()
	if err != nil {
		return nil, err
	}
	proc := "/proc/" + strconv.Itoa(pid)
	cmdline, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		return nil, fmt.Errorf("reading %s's command line: %w", name, err)
	}
	environ, _ := os.ReadFile(proc + "/environ")
	c.Dir, _ = os.Readlink(proc + "/cwd")
	c.Args = strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	c.Env = strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00")
	return c, nil
}

// Pid is the component's process id, as kwokctl recorded it.
func (c *Component) Pid() (int, error) {
	data, err := os.ReadFile(c.PidFile)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", c.PidFile, err)
	}
	return pid, nil
}

// Alive reports whether the process runs.
func (c *Component) Alive() bool {
	pid, err := c.Pid()
	return err == nil && syscall.Kill(pid, 0) == nil
}

// Flag is the value of the component's --name=value flag, or "".
func (c *Component) Flag(name string) string {
	for _, arg := range c.Args {
		if value, ok := strings.CutPrefix(arg, "--"+name+"="); ok {
			return value
		}
	}
	return ""
}

// Start runs the component again, recording its pid where kwokctl looks
// for it (so that deleting the cluster stops it).
func (c *Component) Start() error {
	log, err := os.OpenFile(c.LogFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.Args[0], c.Args[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %w", c.Name, err)
	}
	go func() { _ = cmd.Wait(); log.Close() }()
	return os.WriteFile(c.PidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
}
