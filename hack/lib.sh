# Shell functions and versions the hack/ scripts share; source it.

# kwok_version is the kwok and kwokctl the local cluster runs:
# hack/kube-binaries.sh builds them, hack/cluster.sh renders the pod stages
# of the same version. v0.8.0 is the first release built against
# Kubernetes 1.36's client (v0.7.0's is 1.33's).
kwok_version=v0.8.0

# tool_build_flags are the go build flags of every pinned tool built from
# source (the control plane, the real node, Karpenter, Helm, crane, the
# linters; the Makefile's TOOL_BUILD_FLAGS are the same): no file paths,
# and no DWARF. The linker drops DWARF anyway (-ldflags -w), but only
# -dwarf=false spares the compiler generating it for every package: about
# a tenth of a cold build's CPU (crane from an empty build cache: 35.3 s
# of CPU plain, 31.2 s with these flags and -ldflags "-s -w"). One set of
# flags also lets the tools share the standard library's compiled
# packages, and any dependency they pin at the same version.
tool_build_flags=(-trimpath -gcflags=all=-dwarf=false)

# install_cached BIN PACKAGE@VERSION WHAT TOOK [NAME] builds a Go command
# from the module proxy into BIN, once, and prints BIN's path: go install
# with tool_build_flags into a directory of its own under BIN's cache
# directory, then NAME (the command's binary; default the package's last
# element) moved to BIN. WHAT and TOOK say what is built and how long it
# takes, in the one progress line.
install_cached() {
  local bin=$1 package=$2 what=$3 took=$4 name=${5:-}
  if [[ -x $bin ]]; then
    echo "$bin"
    return
  fi
  name=${name:-$(basename "${package%@*}")}
  echo "building $what (first time only, $took; cached in $(dirname "$bin"))" >&2
  local cache_dir tmp
  cache_dir=$(dirname "$(dirname "$bin")")
  # On a fresh machine nothing may have made the cache yet (make -j3 runs
  # the tools' builds beside the control plane's, which makes it too).
  mkdir -p "$cache_dir"
  tmp=$(mktemp -d "$cache_dir/.build.XXXXXX")
  GOBIN=$tmp go install "${tool_build_flags[@]}" -ldflags "-s -w" "$package"
  mkdir -p "$(dirname "$bin")"
  mv "$tmp/$name" "$bin"
  rmdir "$tmp"
  echo "$bin"
}

# wait_serving NAME URL PIDFILE LOG waits up to a minute for the process
# PIDFILE names to answer URL; if it exits first, it shows LOG's last lines
# and fails.
wait_serving() {
  local name=$1 url=$2 pidfile=$3 log=$4
  for _ in $(seq 120); do
    if curl -fsS "$url" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      tail -n 20 "$log" >&2
      echo "$name exited" >&2
      exit 1
    fi
    sleep 0.5
  done
}

# stop_pidfile FILE stops the process whose pid FILE holds (SIGTERM, then
# SIGKILL after 10 s) and removes FILE. No file, or no process, is fine.
stop_pidfile() {
  local file=$1 pid
  [[ -f $file ]] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

# wait_for CONDITION RESOURCE... runs kubectl wait --for=condition=CONDITION
# (60 s), retrying for up to 10 s while it fails at once: kubectl wait
# errors ("accessor error: <nil>") instead of waiting on an object whose
# status has no conditions yet, as a just-created CRD or node. kubectl's
# flags (--kubeconfig) may come first.
wait_for() {
  local condition=$1 attempt
  shift
  for attempt in $(seq 10); do
    kubectl wait --for=condition="$condition" --timeout=60s "$@" >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "$(basename "$0"): $* did not become $condition" >&2
  return 1
}

# host_ip is the IPv4 address of the default route's interface: the real
# node's InternalIP (hack/real-node.sh), which the API server's certificate
# names (hack/cluster.sh).
host_ip() { ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p'; }
