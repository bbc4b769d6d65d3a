//go:build realnode

package realnode

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostState is what a real node may change on this machine: mounts,
// network links, iptables chains, the node's processes and the kubelet's
// cgroups. hack/real-node.sh down must leave it as it found it.
type hostState map[string][]string

// snapshotHost reads the host's state.
func snapshotHost(t *testing.T) hostState {
	t.Helper()
	state := hostState{}
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 {
			state["mount"] = append(state["mount"], fields[1])
		}
	}
	for _, line := range strings.Split(output(t, "ip", "-o", "link", "show"), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 {
			name, _, _ := strings.Cut(strings.TrimSuffix(fields[1], ":"), "@")
			state["link"] = append(state["link"], name)
		}
	}
	for _, family := range []string{"iptables", "ip6tables"} {
		for _, table := range []string{"filter", "nat", "mangle"} {
			for _, line := range strings.Split(output(t, family+"-save", "-t", table), "\n") {
				if chain, ok := strings.CutPrefix(line, ":"); ok {
					state["iptables chain"] = append(state["iptables chain"], family+" "+table+" "+strings.Fields(chain)[0])
				}
			}
		}
	}
	state["process"] = nodeProcesses(t)
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	state["cgroup"] = cgroups
	if _, err := os.Stat("/run/netns"); err == nil {
		state["directory"] = append(state["directory"], "/run/netns")
	}
	return state
}

// nodeProcesses lists the running processes a real node starts: the
// kubelet, kube-proxy, containerd, its shims and runc.
func nodeProcesses(t *testing.T) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, path := range procs {
		cmdline, err := os.ReadFile(path)
		if err != nil || len(cmdline) == 0 {
			continue // exited meanwhile, or a kernel thread
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		switch filepath.Base(args[0]) {
		case "kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2", "runc":
			found = append(found, filepath.Base(filepath.Dir(path))+" "+strings.Join(args, " "))
		}
	}
	return found
}

// checkHostClean fails the test for everything present now that was not
// before the real node started.
func checkHostClean(t *testing.T, before hostState) {
	t.Helper()
	after := snapshotHost(t)
	for kind, items := range after {
		for _, item := range items {
			if !slices.Contains(before[kind], item) {
				t.Errorf("hack/real-node.sh down left a %s behind: %s", kind, item)
			}
		}
	}
}

func output(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
