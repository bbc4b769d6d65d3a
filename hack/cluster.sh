#!/usr/bin/env bash
# Local Kubernetes clusters for make dev, the e2e tests and the controller
# benchmark: a real etcd, kube-apiserver, kube-controller-manager and
# kube-scheduler run by kwokctl's binary runtime, with fake nodes whose pods
# run to completion.
#
#   hack/cluster.sh up NAME KUBECONFIG [NODES]   create (or restart) NAME
#   hack/cluster.sh down NAME                    delete it; no process stays
#
# Pods follow kwok's "general" stages, which honour per-pod delays: a pod
# annotated pod-complete.stage.kwok.x-k8s.io/delay (and jitter-delay, the
# upper bound) runs that long before completing.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/lib.sh
source "$root/hack/lib.sh"
kube_bin=$("$root/hack/kube-binaries.sh" 2>/dev/null)
export PATH=$kube_bin:$PATH

# quietly runs a command, showing its output only if it fails.
quietly() {
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# exists reports whether kwokctl knows cluster NAME. The list is read whole
# before grep: with pipefail, `kwokctl get clusters | grep -q` fails when
# grep exits at the first match while kwokctl still writes the next line
# (kwokctl dies of SIGPIPE), and down then left clusters running.
exists() {
  local names
  names=$(kwokctl get clusters 2>/dev/null) || return 1
  grep -qx -- "$1" <<<"$names"
}

# kwok_stages renders kwok's general pod stages from the kwok module (the
# version the binaries were built from), so nothing of kwok's is copied
# here, plus hack/kwok's stages that release EarlyStart pods at their time
# and fail the pods the tests ask to fail, and kwok's default node stages
# (ready at once, a heartbeat through the node's Lease): kwok v0.8.0 adds
# its defaults only when given no stage at all.
kwok_stages() {
  local dir tmp
  dir=$(cd "$root/hack/tools/etcd" && go mod download -json "sigs.k8s.io/kwok@$kwok_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  # kustomize takes no absolute bases: link them into a scratch directory.
  tmp=$(mktemp -d)
  ln -s "$dir/kustomize/stage/pod/general" "$tmp/general"
  ln -s "$dir/kustomize/stage/node/fast" "$tmp/node-fast"
  ln -s "$dir/kustomize/stage/node/heartbeat-with-lease" "$tmp/node-heartbeat"
  ln -s "$root/hack/kwok" "$tmp/ontime"
  cat >"$tmp/kustomization.yaml" <<KUSTOMIZATION
resources:
- general
- node-fast
- node-heartbeat
- ontime/ontime-wait-stage.yaml
- ontime/ontime-fail-stage.yaml
patches:
- target: {kind: Stage, name: pod-init-container-completed}
  path: ontime/general-init-completed-patch.yaml
- target: {kind: Stage, name: pod-complete}
  path: ontime/general-complete-patch.yaml
KUSTOMIZATION
  kubectl kustomize --load-restrictor LoadRestrictionsNone "$tmp"
  rm -rf "$tmp"
}

# kwokctl_configuration: kwok manages only the nodes annotated
# kwok.x-k8s.io/node=fake (this script's and Karpenter's), so that a real
# kubelet can join (hack/real-node.sh); the API server's certificate also
# names the kubernetes Service's cluster IP and this machine's address,
# which pods on that node connect to, and it reaches kubelets (logs, exec)
# at their node's InternalIP: the real node's name is not in DNS.
kwokctl_configuration() {
  local address
  address=$(host_ip)
  cat <<YAML
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  kubeApiserverCertSANs: [10.0.0.1${address:+, $address}]
componentsPatches:
- name: kube-apiserver
  extraArgs:
  - {key: kubelet-preferred-address-types, value: "InternalIP,Hostname"}
- name: kwok-controller
  extraArgs:
  - {key: manage-all-nodes, value: "false", override: true}
  - {key: manage-nodes-with-annotation-selector, value: kwok.x-k8s.io/node=fake}
YAML
}

nodes() {
  local count=$1
  echo "apiVersion: v1"
  echo "kind: List"
  echo "items:"
  for ((i = 0; i < count; i++)); do
    cat <<NODE
- apiVersion: v1
  kind: Node
  metadata:
    name: kwok-node-$i
    annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
    labels: {type: kwok, kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux}
NODE
  done
}

up() {
  local name=$1 kubeconfig=$2 node_count=${3:-3}
  if exists "$name"; then
    echo "==> reusing cluster $name" >&2
    # start is a no-op for running components and restarts stopped ones.
    quietly kwokctl start cluster --name "$name"
  else
    echo "==> creating cluster $name (kwok, binary runtime)" >&2
    # ONTIME_KWOK_STAGES=fast keeps kwokctl's default stages: pods
    # complete at once, which keeps a benchmark's load on the Jobs.
    local config
    config=$(mktemp --suffix .yaml)
    kwokctl_configuration >"$config"
    if [[ ${ONTIME_KWOK_STAGES:-general} == general ]]; then
      { echo "---"; kwok_stages; } >>"$config"
    fi
    # One creation at a time on this machine: kwokctl picks free ports
    # for a cluster's components and binds them only as they start, so two
    # creations at once (make test runs several clusters side by side) can
    # pick the same port; seen: a test's kubectl reached another cluster's
    # API server ("certificate signed by unknown authority"). kwokctl gets
    # no copy of the lock's descriptor (9>&-): the cluster's daemons would
    # inherit it and hold the lock as long as the cluster runs.
    {
      flock 9
      quietly kwokctl create cluster --name "$name" --runtime binary \
        --etcd-binary "$kube_bin/etcd" \
        --kube-apiserver-binary "$kube_bin/kube-apiserver" \
        --kube-controller-manager-binary "$kube_bin/kube-controller-manager" \
        --kube-scheduler-binary "$kube_bin/kube-scheduler" \
        --kwok-controller-binary "$kube_bin/kwok" \
        --config "$config" \
        --kubeconfig "$kubeconfig" --wait 2m ${ONTIME_KWOKCTL_FLAGS:-} 9>&-
    } 9>"${TMPDIR:-/tmp}/ontime-kwokctl-create.lock"
    rm -f "$config"
  fi
  mkdir -p "$(dirname "$kubeconfig")"
  kwokctl get kubeconfig --name "$name" >"$kubeconfig"
  # No fake node at all: a cluster for hack/real-node.sh's node alone.
  if ((node_count > 0)); then
    nodes "$node_count" | kubectl --kubeconfig "$kubeconfig" apply -f - >/dev/null
    wait_for Ready --kubeconfig "$kubeconfig" node --all
  fi
}

down() {
  local name=$1
  if exists "$name"; then
    echo "==> deleting cluster $name" >&2
    quietly kwokctl delete cluster --name "$name"
  fi
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  *) echo "usage: $0 up NAME KUBECONFIG [NODES] | down NAME" >&2; exit 2 ;;
esac
