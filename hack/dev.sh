#!/usr/bin/env bash
# make dev      build what is missing, start (or reuse) the local cluster
#               "ontime-dev", install ontime's CRD and webhook, start
#               Karpenter's kwok provider (a real node autoscaler, with a
#               60 s provisioning delay), run `ontime controller` against
#               it and apply config/dev/samples (the samples with the local cluster's additions).
# make dev IN_CLUSTER=1
#               the same cluster, but ontime runs in it as users run it:
#               make image, a real node (hack/real-node.sh) beside the fake
#               ones, the image imported there and the Helm chart installed
#               with its pods on that node. Needs root.
# make dev KUEUE=1
#               also start Kueue (hack/kueue.sh): Jobs labelled
#               kueue.x-k8s.io/queue-name: batch wait in its ClusterQueue.
# make dev-down stop the controller, Karpenter, Kueue, the real node and
#               the cluster; nothing is left running.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/lib.sh
source "$root/hack/lib.sh"
cluster=ontime-dev
state=$root/.dev                      # kubeconfig, controller pid and log
kubeconfig=$state/kubeconfig
metrics_address=${ONTIME_DEV_METRICS_ADDRESS:-:8080}
probe_address=${ONTIME_DEV_PROBE_ADDRESS:-:8081}

step() { printf '==> %s\n' "$*" >&2; }

kube_bin=$("$root/hack/kube-binaries.sh")
export PATH=$kube_bin:$PATH

stop_controller() { stop_pidfile "$state/controller.pid"; }

start_controller() {
  step "starting ontime controller (log: .dev/controller.log)"
  stop_controller
  # The webhook is called at localhost: the controller runs on this host.
  # Leader election as installed (a Lease in ontime-system), so that
  # ontime check and the standby see what they see in a cluster.
  nohup "$root/bin/ontime" controller --kubeconfig "$kubeconfig" \
    --leader-elect --leader-election-namespace ontime-system \
    --metrics-bind-address "$metrics_address" --metrics-secure=false --health-probe-bind-address "$probe_address" \
    --webhook-dns-name localhost --webhook-namespace ontime-system \
    --webhook-write-cert-files --webhook-cert-dir "$state/webhook-certs" \
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

# install_in_cluster runs ontime as users do: its image on the real node,
# installed with the Helm chart (logs: kubectl logs -n ontime-system).
install_in_cluster() {
  local version=dev-$(date +%s) helm
  "$root/hack/real-node.sh" up "$kubeconfig"
  step "make image for this machine and importing it into the real node"
  (cd "$root" && make --no-print-directory image IMAGE_PLATFORMS="linux/$(go env GOARCH)" IMAGE_DIR="$state/image" VERSION="$version" >/dev/null)
  "$root/hack/real-node.sh" import "$state/image/ontime-image.tar" "ghcr.io/ontime-dev/ontime:$version"
  step "helm install ontime (pods on the real node)"
  helm=$(cd "$root" && make --no-print-directory -s helm | tail -n 1)
  # The controller left by a host-process make dev would fight the pods.
  stop_controller
  "$helm" --kubeconfig "$kubeconfig" upgrade --install ontime "$root/charts/ontime" -n ontime-system --create-namespace \
    --set image.tag="$version" --set-string nodeSelector.ontime\\.dev/real-node=true \
    --set 'tolerations[0].key=ontime.dev/real-node' --set 'tolerations[0].operator=Exists' \
    --set 'metrics.readers[0].name=ontime-controller' --set 'metrics.readers[0].namespace=ontime-system' \
    --wait --timeout 3m >/dev/null
}

up() {
  mkdir -p "$state"
  step "building ontime"
  (cd "$root" && go build -o bin/ontime ./cmd/ontime)
  "$root/hack/cluster.sh" up "$cluster" "$kubeconfig" 3
  if [[ -z ${IN_CLUSTER:-} ]]; then
    step "installing the ScheduledJob CRD and webhook"
    kubectl --kubeconfig "$kubeconfig" apply --server-side --force-conflicts -k "$root/config/dev" >/dev/null
    wait_for Established --kubeconfig "$kubeconfig" crd/scheduledjobs.ontime.dev
  fi
  step "starting Karpenter (NodePool batch, nodes take ${ONTIME_DEV_NODE_DELAY:-60s} to register)"
  "$root/hack/karpenter.sh" up "$kubeconfig" "$state" "${ONTIME_DEV_NODE_DELAY:-60s}"
  if [[ -n ${KUEUE:-} ]]; then
    step "starting Kueue (ClusterQueue batch, LocalQueue batch in default; log: .dev/kueue.log)"
    "$root/hack/kueue.sh" up "$kubeconfig" "$state"
  fi
  if [[ -n ${IN_CLUSTER:-} ]]; then
    install_in_cluster
  else
    start_controller
  fi
  local logs_hint="tail -f .dev/controller.log                     # the controller's structured log"
  local metrics_hint="curl -s localhost:${metrics_address##*:}/metrics | grep ^ontime_"
  if [[ -n ${IN_CLUSTER:-} ]]; then
    # Pod addresses on the real node's bridge are routable from this host;
    # /metrics is HTTPS for a reader (metrics.readers: the controller's
    # own ServiceAccount, here).
    metrics_hint="curl -sk -H \"Authorization: Bearer \$(kubectl create token ontime-controller -n ontime-system)\" https://\$(kubectl get pod -n ontime-system -l app.kubernetes.io/name=ontime -o jsonpath='{.items[0].status.podIP}'):8443/metrics | grep ^ontime_"
    logs_hint="kubectl logs -n ontime-system -l app.kubernetes.io/name=ontime -f --prefix   # the pods on ontime-real-node"
  fi
  step "applying config/dev/samples (config/samples with the local cluster's kwok annotations and node pool)"
  kubectl --kubeconfig "$kubeconfig" apply -k "$root/config/dev/samples"
  cat <<MSG

ontime is running on the local cluster "$cluster".

  export KUBECONFIG=$kubeconfig PATH=$kube_bin:\$PATH
  kubectl get scheduledjobs,cronjobs,jobs -w      # runs start every minute
  kubectl describe sj forbid-slow                 # events, conditions, next run
  kubectl get sj -o wide; kubectl get pods,nodes -w   # warm-up: nodes arrive before the */5 runs
  kubectl get sj spread-a spread-b hashed          # spreading: EFFECTIVE shows the minutes H became
  tail -f .dev/karpenter.log                      # the autoscaler
  bin/ontime trigger sj/every-minute --wait       # run one now
  $logs_hint
  $metrics_hint

Stop everything with: make dev-down
MSG
}

down() {
  step "stopping ontime controller, Karpenter and Kueue"
  stop_controller
  "$root/hack/karpenter.sh" down "$state"
  "$root/hack/kueue.sh" down "$state"
  "$root/hack/real-node.sh" down
  "$root/hack/cluster.sh" down "$cluster"
  rm -rf "$state"
}

case ${1:-up} in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 [up|down]" >&2; exit 2 ;;
esac
