package framework

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcessUsage is what Linux says a process has used so far: CPU seconds
// (user and system, since it started) and resident memory now and at its
// peak (VmRSS and VmHWM).
type ProcessUsage struct {
	CPUSeconds   float64
	RSS, PeakRSS uint64
}

// clockTicksPerSecond is USER_HZ, the unit of /proc/PID/stat's times: 100
// on every Linux architecture Go builds for.
const clockTicksPerSecond = 100

// ReadProcessUsage reads /proc/PID/stat and /proc/PID/status.
func ReadProcessUsage(pid int) (ProcessUsage, error) {
	var u ProcessUsage
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// the fields counted here start after its closing parenthesis, at
	// field 3 (state); utime and stime are fields 14 and 15.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(fields))
	}
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return u, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, fields[11], fields[12])
	}
	u.CPUSeconds = float64(utime+stime) / clockTicksPerSecond
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kib, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		switch {
		case err != nil:
		case name == "VmRSS":
			u.RSS = kib << 10
		case name == "VmHWM":
			u.PeakRSS = kib << 10
		}
	}
	return u, nil
}

// ClusterPids are the pids of a kwokctl cluster's control-plane processes
// (etcd, kube-apiserver, …), by component name, from its pids directory.
func ClusterPids(name string) (map[string]int, error) {
	dir := ClusterDir(name) + "/pids"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	pids := map[string]int{}
	for _, entry := range entries {
		component, ok := strings.CutSuffix(entry.Name(), ".pid")
		if !ok {
			continue
		}
		c := &Component{Name: component, PidFile: dir + "/" + entry.Name()}
		if pid, err := c.Pid(); err == nil {
			pids[component] = pid
		}
	}
	return pids, nil
}
