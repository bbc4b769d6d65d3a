#!/usr/bin/env bash
# make dev      build what is missing, start (or reuse) the local cluster
#               "ontime-dev" (kwok, binary runtime), install ontime's CRDs,
#               run `ontime controller` against it and apply config/samples.
# make dev-down stop the controller and the cluster; nothing is left running.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cluster=ontime-dev
state=$root/.dev                      # kubeconfig, controller pid and log
kubeconfig=$state/kubeconfig
metrics_address=${ONTIME_DEV_METRICS_ADDRESS:-:8080}
probe_address=${ONTIME_DEV_PROBE_ADDRESS:-:8081}

step() { printf '==> %s\n' "$*" >&2; }

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

kube_bin=$("$root/hack/kube-binaries.sh")
export PATH=$kube_bin:$PATH

cluster_exists() { kwokctl get clusters 2>/dev/null | grep -qx "$cluster"; }

stop_controller() {
  [[ -f $state/controller.pid ]] || return 0
  local pid
  pid=$(cat "$state/controller.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$state/controller.pid"
}

start_cluster() {
  if cluster_exists; then
    step "reusing cluster $cluster"
    # start is a no-op for running components and restarts stopped ones
    # (after a reboot, say).
    quietly kwokctl start cluster --name "$cluster"
  else
    step "creating cluster $cluster (kwok, binary runtime)"
    quietly kwokctl create cluster --name "$cluster" --runtime binary \
      --etcd-binary "$kube_bin/etcd" \
      --kube-apiserver-binary "$kube_bin/kube-apiserver" \
      --kube-controller-manager-binary "$kube_bin/kube-controller-manager" \
      --kube-scheduler-binary "$kube_bin/kube-scheduler" \
      --kwok-controller-binary "$kube_bin/kwok" \
      --kubeconfig "$kubeconfig" --wait 2m
  fi
  kwokctl get kubeconfig --name "$cluster" >"$kubeconfig"
  kubectl --kubeconfig "$kubeconfig" apply -f "$root/hack/dev/nodes.yaml" >/dev/null
  kubectl --kubeconfig "$kubeconfig" wait --for=condition=Ready --timeout=60s node --all >/dev/null
}

install_crds() {
  if compgen -G "$root/config/crd/bases/*.yaml" >/dev/null; then
    step "installing ontime CRDs"
    kubectl --kubeconfig "$kubeconfig" apply --server-side --force-conflicts -k "$root/config/crd" >/dev/null
    kubectl --kubeconfig "$kubeconfig" wait --for=condition=Established --timeout=60s -k "$root/config/crd" >/dev/null
  fi
}

start_controller() {
  step "starting ontime controller (log: .dev/controller.log)"
  stop_controller
  nohup "$root/bin/ontime" controller --kubeconfig "$kubeconfig" \
    --metrics-bind-address "$metrics_address" --health-probe-bind-address "$probe_address" \
    ${ONTIME_DEV_CONTROLLER_FLAGS:-} >"$state/controller.log" 2>&1 &
  echo $! >"$state/controller.pid"
  local probe_port=${probe_address##*:}
  for _ in $(seq 100); do
    if curl -fsS "http://127.0.0.1:$probe_port/readyz" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$(cat "$state/controller.pid")" 2>/dev/null; then break; fi
    sleep 0.3
  done
  echo "ontime controller did not become ready; last lines of .dev/controller.log:" >&2
  tail -n 20 "$state/controller.log" >&2
  exit 1
}

up() {
  mkdir -p "$state"
  step "building ontime"
  (cd "$root" && go build -o bin/ontime ./cmd/ontime)
  start_cluster
  install_crds
  start_controller
  step "applying config/samples"
  kubectl --kubeconfig "$kubeconfig" apply -k "$root/config/samples"
  cat <<MSG

ontime is running on the local cluster "$cluster".

  export KUBECONFIG=$kubeconfig
  $(watch_hint)
  tail -f .dev/controller.log          # the controller's structured log
  curl -s localhost:${metrics_address##*:}/metrics | grep ontime_   # its metrics

kubectl is in $kube_bin.
Stop everything with: make dev-down
MSG
}

watch_hint() {
  if compgen -G "$root/config/crd/bases/*.yaml" >/dev/null; then
    echo "kubectl get scheduledjobs,cronjobs,jobs,pods -w   # runs start every minute"
  else
    echo "kubectl get cronjobs,jobs,pods -w   # runs start every minute"
  fi
}

down() {
  step "stopping ontime controller"
  stop_controller
  if cluster_exists; then
    step "deleting cluster $cluster"
    quietly kwokctl delete cluster --name "$cluster"
  fi
  rm -rf "$state"
}

case ${1:-up} in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 [up|down]" >&2; exit 2 ;;
esac
