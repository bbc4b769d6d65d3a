#!/usr/bin/env bash
# Kueue (sigs.k8s.io/kueue), the queue that holds Jobs back until their
# ClusterQueue admits them, built from the Go module proxy and run on this
# host against the local cluster, as Karpenter is (hack/karpenter.sh).
#
#   hack/kueue.sh build                     build it (once; cached), print the binary
#   hack/kueue.sh up KUBECONFIG STATE       CRDs, its webhooks (called at localhost),
#                                           start it (log and pid in STATE), and the
#                                           queues: ResourceFlavor "default",
#                                           ClusterQueue "batch" and LocalQueue
#                                           "batch" in namespace default
#   hack/kueue.sh down STATE                stop it, and remove its webhooks (a
#                                           webhook left without its server would
#                                           refuse every Job)
#
# It manages batch Jobs only (integrations: batch/job), and only those that
# name a LocalQueue (label kueue.x-k8s.io/queue-name): every other Job runs
# as before. The ClusterQueue "batch" admits KUEUE_CPU (default 4) CPUs and
# 16Gi of memory at once. Needs root the first time: Kueue v0.17 reads its
# metrics certificate from /etc/kueue/metrics/certs. Its visibility API
# (pending workloads' positions) is off: it is served through the API
# server's aggregation, from a Service in the cluster.
set -euo pipefail

version=v0.17.0
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/lib.sh
source "$root/hack/lib.sh"
cache=${ONTIME_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ontime}
bin=$cache/kueue-$version/kueue
webhook_port=${KUEUE_WEBHOOK_PORT:-19443}
probe_port=${KUEUE_PROBE_PORT:-18091}
metrics_port=${KUEUE_METRICS_PORT:-18092}

build() { install_cached "$bin" "sigs.k8s.io/kueue/cmd/kueue@$version" "Kueue $version" "about 7 minutes on 2 cores"; }

module_dir() { go mod download -json "sigs.k8s.io/kueue@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }

# certs makes a CA and the webhook server's certificate for localhost in
# STATE/kueue-certs (tls.crt, tls.key: the names Kueue's certDir reads).
certs() {
  local dir=$1/kueue-certs
  mkdir -p "$dir"
  [[ -f $dir/tls.crt ]] && return
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=kueue-local-ca" \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$dir/san.ext"
  openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 3650 \
    -extfile "$dir/san.ext" -out "$dir/tls.crt" 2>/dev/null
}

# metrics_certs gives Kueue's metrics server the same certificate: without
# its internal cert management, Kueue v0.17 reads it from a fixed path,
# /etc/kueue/metrics/certs, which only root can write.
metrics_certs() {
  local dir=/etc/kueue/metrics/certs
  [[ -f $dir/tls.crt ]] && return
  if ! mkdir -p "$dir" 2>/dev/null || ! cp "$1/kueue-certs/tls.crt" "$1/kueue-certs/tls.key" "$dir/" 2>/dev/null; then
    echo "hack/kueue.sh: Kueue reads its metrics certificate from $dir, which this user cannot write; run as root, or create it" >&2
    exit 1
  fi
}

config() {
  local state=$1
  cat >"$state/kueue-config.yaml" <<CONFIG
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:$probe_port
metrics:
  bindAddress: 127.0.0.1:$metrics_port
webhook:
  port: $webhook_port
  host: 127.0.0.1
  certDir: $state/kueue-certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
manageJobsWithoutQueueName: false
integrations:
  frameworks:
  - batch/job
CONFIG
}

up() {
  local kubeconfig=$1 state=$2 dir
  build >/dev/null
  dir=$(module_dir)
  export KUBECONFIG=$kubeconfig
  mkdir -p "$state"
  down "$state"
  kubectl apply --server-side -f "$dir/config/components/crd/bases" >/dev/null
  wait_for Established crd/clusterqueues.kueue.x-k8s.io crd/localqueues.kueue.x-k8s.io crd/resourceflavors.kueue.x-k8s.io crd/workloads.kueue.x-k8s.io
  kubectl create namespace kueue-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  certs "$state"
  metrics_certs "$state"
  config "$state"
  echo "$kubeconfig" >"$state/kueue.kubeconfig"
  # It reads the cluster from KUBECONFIG.
  # Without VisibilityOnDemand: its API (pending workloads' positions) is
  # served through the API server's aggregation, which needs a Service in
  # the cluster, not a process on the host.
  nohup "$bin" --config "$state/kueue-config.yaml" --feature-gates VisibilityOnDemand=false >"$state/kueue.log" 2>&1 &
  echo $! >"$state/kueue.pid"
  wait_serving Kueue "http://127.0.0.1:$probe_port/readyz" "$state/kueue.pid" "$state/kueue.log"
  (cd "$root" && go run ./hack/kueuewebhooks "$dir/config/components/webhook/manifests.yaml" "$webhook_port" "$state/kueue-certs/ca.crt") >"$state/kueue-webhooks.yaml"
  kubectl apply -f "$state/kueue-webhooks.yaml" >/dev/null
  queues
}

# queues are the ResourceFlavor, ClusterQueue and LocalQueue the tests and
# samples use.
queues() {
  kubectl apply -f - >/dev/null <<MANIFEST
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: default
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: batch
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: "${KUEUE_CPU:-4}"}
      - {name: memory, nominalQuota: 16Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: batch
  namespace: default
spec:
  clusterQueue: batch
MANIFEST
}

down() {
  local state=$1
  stop_pidfile "$state/kueue.pid"
  if [[ -f $state/kueue-webhooks.yaml && -f $state/kueue.kubeconfig ]]; then
    kubectl --kubeconfig "$(cat "$state/kueue.kubeconfig")" delete --ignore-not-found -f "$state/kueue-webhooks.yaml" >/dev/null 2>&1 || true
  fi
}

case ${1:-} in
  build) build ;;
  up) shift; export PATH=$("$root/hack/kube-binaries.sh" 2>/dev/null):$PATH; up "$@" ;;
  down) shift; export PATH=$("$root/hack/kube-binaries.sh" 2>/dev/null):$PATH; down "$@" ;;
  *) echo "usage: $0 build | up KUBECONFIG STATE | down STATE" >&2; exit 2 ;;
esac
