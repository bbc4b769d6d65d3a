#!/usr/bin/env bash
# A real node beside kwok's fake ones: a kubelet with containerd and runc,
# CNI bridge networking and kube-proxy, running on this machine as root and
# registered with a local cluster (hack/cluster.sh). Its pods run real
# containers: from images imported from tarballs, or pulled from a
# registry on loopback (containerd speaks plain HTTP to 127.0.0.1), as the
# real-node test does; no public registry is reached.
#
#   hack/real-node.sh packages          install the Debian packages it needs
#   hack/real-node.sh up KUBECONFIG     start the node "ontime-real-node"
#   hack/real-node.sh import TAR NAME   import an OCI image tarball (make
#                                       image's ontime-image.tar) as NAME
#   hack/real-node.sh pause-layout      print the directory of the pause
#                                       image's OCI layout (after up)
#   hack/real-node.sh down              stop everything it started and undo
#                                       what it changed on the host
#
# One real node per machine (it takes the kubelet's ports, a bridge and
# iptables chains). The node carries the label ontime.dev/real-node=true
# and, beside fake nodes, the taint ontime.dev/real-node=true:NoSchedule,
# so that only pods meant for it land there (ONTIME_REAL_NODE_TAINT=""
# leaves it untainted: in a cluster of no fake node, every pod runs on it).
# kwok manages only the nodes annotated kwok.x-k8s.io/node=fake
# (hack/cluster.sh), Karpenter's included.
#
# Debian packages, installed with apt-get when missing: containerd, runc,
# containernetworking-plugins, iptables, conntrack. The kubelet and
# kube-proxy are built from k8s.io/kubernetes into the control plane's cache
# (hack/kube-binaries.sh --node). What this machine needed is in
# docs/real-node.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/lib.sh
source "$root/hack/lib.sh"

node=ontime-real-node
state=${ONTIME_REAL_NODE_STATE:-/var/lib/ontime-real-node}  # containerd's and the kubelet's data, configs
run=/run/ontime-real-node                                    # containerd's state and socket, pid files
logs=${ONTIME_REAL_NODE_LOGS:-/var/log/ontime-real-node}     # kept after down
socket=$run/containerd.sock
bridge=ontime0
pod_cidr=10.88.0.0/16
# The pause image is built here from ontime's binary ("ontime pause") and
# named as the one the kubelet's sandboxes and ontime's placeholders expect,
# as a registry mirror would serve it: nothing is pulled.
pause_image=registry.k8s.io/pause:3.10
taint=${ONTIME_REAL_NODE_TAINT-ontime.dev/real-node=true:NoSchedule}

step() { printf '==> %s\n' "$*" >&2; }
die() { echo "$(basename "$0"): $*" >&2; exit 1; }


install_packages() {
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [[ -x /usr/lib/cni/bridge ]] || missing+=(containernetworking-plugins)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v conntrack >/dev/null || missing+=(conntrack)
  ((${#missing[@]} == 0)) && return 0
  step "installing ${missing[*]} (apt-get)"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# chains lists the chains of every iptables table as "FAMILY TABLE CHAIN"
# lines (FAMILY: v4 for iptables, v6 for ip6tables).
chains() {
  local family cmd table
  for family in v4 v6; do
    cmd=iptables
    [[ $family == v6 ]] && cmd=ip6tables
    for table in filter nat mangle; do
      "$cmd-save" -t "$table" 2>/dev/null | sed -n "s/^:\([^ ]*\) .*/$family $table \1/p"
    done
  done
}

# build_pause_image writes the pause image: the ontime binary for this
# machine with the command "pause" (ontime pause waits for SIGTERM).
build_pause_image() {
  local dir=$state/images arch
  arch=$(go env GOARCH)
  mkdir -p "$dir"
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -tags timetzdata -o "$dir/ontime" ./cmd/ontime)
  (cd "$root/hack/tools/image" && go run . -out "$dir/pause" -version real-node -created 1970-01-01T00:00:00Z \
    -binary "linux/$arch=$dir/ontime" -cmd pause >/dev/null)
}

# import names the image NAME and also REPOSITORY@DIGEST, which is how
# install.yaml refers to it: the CRI finds an image only by a name it has.
import() {
  local tar=$1 name=$2 digest repository
  [[ -S $socket ]] || die "the real node is not running (hack/real-node.sh up first)"
  ctr --address "$socket" -n k8s.io images import --all-platforms --index-name "$name" "$tar" >/dev/null
  digest=$(ctr --address "$socket" -n k8s.io images ls "name==$name" | awk 'NR == 2 {print $3}')
  repository=$name
  [[ ${name##*:} == */* ]] || repository=${name%:*}
  ctr --address "$socket" -n k8s.io images tag --force "$name" "$repository@$digest" >/dev/null
}

write_configs() {
  mkdir -p "$state/cni" "$state/kubelet" "$run" "$logs"
  cat >"$state/containerd.toml" <<TOML
version = 2
root = "$state/containerd"
state = "$run/containerd"
[grpc]
  address = "$socket"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  # This machine's root lacks CAP_SYS_RESOURCE: the negative oom_score_adj
  # CRI gives sandboxes makes runc fail ("can't get final child's PID from
  # pipe: EOF"). Restricted, containers keep the kubelet's adjustment or more.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$state/cni"
TOML
  cat >"$state/cni/10-ontime.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "ontime",
  "plugins": [
    {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}],
              "dataDir": "$state/cni-ipam"}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
JSON
  cat >"$state/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# Debian 12's containerd 1.6 does not report the cgroup driver (CRI
# RuntimeConfig, containerd 2.0 on), so the kubelet falls back to this one.
cgroupDriver: cgroupfs
# This machine mounts cgroup v1, which the kubelet refuses from 1.35 on
# unless told otherwise (failCgroupV1 defaults to true); ontime needs
# nothing of cgroup v2.
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$socket
# The API server reaches the kubelet (logs, exec) without credentials of its
# own on this single-machine cluster.
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
address: $(host_ip)
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
staticPodPath: ""
# Imported images cannot be pulled again: never collect them, and evict
# nothing for a nearly full disk.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
serializeImagePulls: false
maxPods: 40
YAML
  if [[ -n $taint ]]; then
    local key=${taint%%=*} value=${taint#*=}
    echo "registerWithTaints: [{key: $key, value: \"${value%%:*}\", effect: ${taint##*:}}]" >>"$state/kubelet.yaml"
  fi
}

# set_sysctl NAME VALUE sets a sysctl and records its old value for down.
set_sysctl() {
  local name=$1 value=$2 file
  file=/proc/sys/${name//.//}
  # br_netfilter's may be absent: kube-proxy's --masquerade-all covers it.
  [[ -f $file ]] || return 0
  echo "$name $(cat "$file")" >>"$state/sysctls"
  echo "$value" >"$file"
}

start() {
  local name=$1 log=$logs/$1.log
  shift
  setsid nohup "$@" >"$log" 2>&1 </dev/null &
  echo $! >"$run/$name.pid"
}

# check_disk refuses to start on a disk the kubelet would call full: under
# evictionHard's nodefs.available (1 %, below) it reports DiskPressure, no
# pod is scheduled, and a Helm install waits its whole timeout for nothing
# (seen 2026-11-30 with 1.6 GB left of 252 GB). 2 % leaves room for the
# images and logs of a test run.
check_disk() {
  local used
  used=$(df --output=pcent "$(dirname "$state")" | tail -1 | tr -dc 0-9)
  ((used <= 98)) || die "the disk of $(dirname "$state") is ${used}% full: the kubelet would report DiskPressure and run no pod (evictionHard nodefs.available 1%); free some space"
}

running() { [[ -f $run/$1.pid ]] && kill -0 "$(cat "$run/$1.pid")" 2>/dev/null; }

up() {
  local kubeconfig=$1 bin
  [[ $(id -u) == 0 ]] || die "a real node needs root (containerd, mounts, iptables)"
  [[ -f $kubeconfig ]] || die "no kubeconfig at $kubeconfig"
  kubeconfig=$(realpath "$kubeconfig")
  if running kubelet; then
    step "the real node is already running"
    return 0
  fi
  check_disk
  install_packages
  step "building the kubelet and kube-proxy (first time only)"
  bin=$("$root/hack/kube-binaries.sh" --node 2>/dev/null)
  mkdir -p "$state" "$run" "$logs"
  # What down restores: the host's iptables chains and sysctls as found.
  [[ -f $state/iptables-baseline ]] || chains >"$state/iptables-baseline"
  # containerd creates /run/netns for the pods' network namespaces.
  [[ -d /run/netns ]] || touch "$state/created-run-netns"
  : >"$state/sysctls"
  set_sysctl net.ipv4.ip_forward 1
  set_sysctl net.bridge.bridge-nf-call-iptables 1
  write_configs
  cp "$kubeconfig" "$state/kubeconfig"
  step "building the pause image (ontime pause)"
  build_pause_image
  step "starting containerd (log: $logs/containerd.log)"
  start containerd containerd --config "$state/containerd.toml"
  for _ in $(seq 100); do [[ -S $socket ]] && ctr --address "$socket" version >/dev/null 2>&1 && break; sleep 0.2; done
  import "$state/images/pause/ontime-image.tar" "$pause_image"
  step "starting the kubelet and kube-proxy (logs: $logs)"
  start kubelet "$bin/kubelet" --config "$state/kubelet.yaml" --kubeconfig "$state/kubeconfig" \
    --root-dir "$state/kubelet" --hostname-override "$node" --node-ip "$(host_ip)" \
    --node-labels ontime.dev/real-node=true --v 2
  # Every Service's traffic is masqueraded: pods on the bridge reach Service
  # backends on the same bridge without br_netfilter's help.
  start kube-proxy "$bin/kube-proxy" --kubeconfig "$state/kubeconfig" --hostname-override "$node" \
    --proxy-mode iptables --cluster-cidr "$pod_cidr" --masquerade-all \
    --conntrack-max-per-core 0 --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256
  for _ in $(seq 60); do
    kubectl --kubeconfig "$kubeconfig" get node "$node" >/dev/null 2>&1 && break
    running kubelet || { tail -n 30 "$logs/kubelet.log" >&2; die "the kubelet exited"; }
    sleep 1
  done
  wait_for Ready --kubeconfig "$kubeconfig" node "$node" || { tail -n 30 "$logs/kubelet.log" >&2; exit 1; }
  step "node $node is Ready ($(host_ip), containerd $(containerd --version | awk '{print $3}'))"
}

# undo_iptables deletes every chain that was not there before up, and the
# rules that jump to them.
undo_iptables() {
  local new family table chain cmd rule
  new=$(comm -13 <(sort "$state/iptables-baseline" 2>/dev/null) <(chains | sort))
  [[ -n $new ]] || return 0
  while read -r family table chain; do
    cmd=iptables
    [[ $family == v6 ]] && cmd=ip6tables
    # Rules anywhere in the table that jump to the chain, then its own.
    while read -r rule; do
      [[ -n $rule ]] && eval "$cmd -t $table -D $rule" 2>/dev/null || true
    done < <("$cmd-save" -t "$table" | sed -n "s/^-A \(.* -j $chain\)\( .*\)\?\$/\1\2/p")
    "$cmd" -t "$table" -F "$chain" 2>/dev/null || true
  done <<<"$new"
  while read -r family table chain; do
    cmd=iptables
    [[ $family == v6 ]] && cmd=ip6tables
    "$cmd" -t "$table" -X "$chain" 2>/dev/null || true
  done <<<"$new"
}

# our_mounts lists the mount points this node made, deepest first.
our_mounts() {
  awk '{print $2}' /proc/self/mounts | grep -E "^($state|$run|/run/netns/cni-|/var/run/netns/cni-)" | sort -r || true
}

# remove_cgroups removes the kubelet's kubepods hierarchies, deepest first,
# once no process is left in them.
remove_cgroups() {
  local dir
  for dir in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [[ -d $dir ]] || continue
    find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
}

down() {
  local bin pid
  [[ -d $state || -d $run ]] || return 0
  step "stopping the real node $node"
  bin=$("$root/hack/kube-binaries.sh" --print)
  stop_pidfile "$run/kubelet.pid"
  stop_pidfile "$run/kube-proxy.pid"
  if [[ -S $socket ]]; then
    # Every container and sandbox, then containerd itself.
    local tasks
    tasks=$(ctr --address "$socket" -n k8s.io tasks ls -q 2>/dev/null || true)
    for task in $tasks; do ctr --address "$socket" -n k8s.io tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true; done
    for task in $tasks; do
      for _ in $(seq 50); do ctr --address "$socket" -n k8s.io tasks delete "$task" >/dev/null 2>&1 && break; sleep 0.1; done
    done
    for container in $(ctr --address "$socket" -n k8s.io containers ls -q 2>/dev/null || true); do
      ctr --address "$socket" -n k8s.io containers delete "$container" >/dev/null 2>&1 || true
    done
  fi
  stop_pidfile "$run/containerd.pid"
  # Shims outlive containerd: stop those of this node's socket.
  for pid in $(pgrep -f "containerd-shim.*-address $socket" || true); do kill -9 "$pid" 2>/dev/null || true; done
  [[ -x $bin/kube-proxy ]] && "$bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
  undo_iptables
  while read -r mount; do [[ -n $mount ]] && umount -l "$mount" 2>/dev/null || true; done <<<"$(our_mounts)"
  rm -f /run/netns/cni-* 2>/dev/null || true
  [[ -f $state/created-run-netns ]] && rmdir /run/netns 2>/dev/null || true
  ip link delete "$bridge" 2>/dev/null || true
  remove_cgroups
  if [[ -f $state/sysctls ]]; then
    while read -r name value; do echo "$value" >"/proc/sys/${name//.//}"; done < <(tac "$state/sysctls")
  fi
  rm -rf "$state" "$run"
  step "real node stopped; nothing of it is left (logs kept in $logs)"
}

case ${1:-} in
  packages) install_packages ;;
  up) shift; up "$@" ;;
  import) shift; import "$@" ;;
  pause-layout) echo "$state/images/pause/oci" ;;
  down) down ;;
  *) echo "usage: $0 packages | up KUBECONFIG | import TAR NAME | pause-layout | down" >&2; exit 2 ;;
esac
