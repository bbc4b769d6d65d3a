#!/usr/bin/env bash
# A real node autoscaler for the local kwok cluster: Karpenter's kwok
# provider (sigs.k8s.io/karpenter/kwok), built from the Go module proxy and
# run as a plain process. Its nodes are kwok nodes that register
# nodeRegistrationDelay after Karpenter decides to launch them: the
# simulated provisioning time warm-up must hide.
#
#   hack/karpenter.sh build                     build it (once; cached), print the binary
#   hack/karpenter.sh up KUBECONFIG STATE [DELAY]
#                                               CRDs, start it (log and pid in STATE),
#                                               a KWOKNodeClass with DELAY (default 60s)
#                                               and the NodePool "batch"
#   hack/karpenter.sh down STATE                stop it
#
# Pods reach the pool's nodes with nodeSelector karpenter.sh/nodepool: batch;
# its instance type has 1 CPU, so a pod requesting 600m needs a node of its
# own. Empty nodes are consolidated after 30 s. The feature gate
# CapacityBuffer is on: CapacityBuffers (autoscaling.x-k8s.io/v1beta1, whose
# CRD is applied with Karpenter's) bring nodes up for warm-up's
# CapacityBuffer strategy. Its other gates keep Karpenter's defaults.
set -euo pipefail

version=v1.14.1
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/lib.sh
source "$root/hack/lib.sh"
cache=${ONTIME_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ontime}
bin=$cache/karpenter-kwok-$version/karpenter-kwok

# build builds it once. The package's binary is called kwok, like kwok's
# own: it is renamed.
build() { install_cached "$bin" "sigs.k8s.io/karpenter/kwok@$version" "Karpenter's kwok provider $version" "about 2 minutes" kwok; }

module_dir() { go mod download -json "sigs.k8s.io/karpenter@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }

up() {
  local kubeconfig=$1 state=$2 delay=${3:-60s}
  local dir ports
  build >/dev/null
  dir=$(module_dir)
  export KUBECONFIG=$kubeconfig
  kubectl apply --server-side -f "$dir/kwok/charts/crds" -f "$dir/kwok/apis/crds" >/dev/null
  wait_for Established crd/nodepools.karpenter.sh crd/nodeclaims.karpenter.sh crd/kwoknodeclasses.karpenter.kwok.sh crd/capacitybuffers.autoscaling.x-k8s.io
  mkdir -p "$state"
  down "$state"
  # Its metrics and probes on ports of their own, beside ontime's.
  ports=(--metrics-port "${KARPENTER_METRICS_PORT:-18080}" --health-probe-port "${KARPENTER_PROBE_PORT:-18081}")
  # It reads the cluster from KUBECONFIG only, and needs no leader election
  # outside a cluster.
  FEATURE_GATES=NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,NodeOverlay=false,StaticCapacity=false,CapacityBuffer=true \
    nohup "$bin" --disable-leader-election "${ports[@]}" >"$state/karpenter.log" 2>&1 &
  echo $! >"$state/karpenter.pid"
  wait_serving Karpenter "http://127.0.0.1:${KARPENTER_PROBE_PORT:-18081}/healthz" "$state/karpenter.pid" "$state/karpenter.log"
  kubectl apply -f - >/dev/null <<MANIFEST
apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata:
  name: default
spec:
  nodeRegistrationDelay: $delay
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: batch
spec:
  template:
    spec:
      requirements:
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      - {key: kubernetes.io/os, operator: In, values: [linux]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: node.kubernetes.io/instance-type, operator: In, values: [c-1x-amd64-linux]}
      nodeClassRef: {name: default, kind: KWOKNodeClass, group: karpenter.kwok.sh}
      expireAfter: Never
  limits: {cpu: "500"}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 30s
MANIFEST
}

down() { stop_pidfile "$1/karpenter.pid"; }

case ${1:-} in
  build) build ;;
  up) shift; export PATH=$("$root/hack/kube-binaries.sh" 2>/dev/null):$PATH; up "$@" ;;
  down) shift; down "$@" ;;
  *) echo "usage: $0 build | up KUBECONFIG STATE [DELAY] | down STATE" >&2; exit 2 ;;
esac
