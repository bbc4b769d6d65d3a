#!/usr/bin/env bash
# Builds the local Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, kwok, kwokctl) from Go
# modules into a cache directory outside the repository, keyed by version,
# and prints that directory on stdout. Binaries already in the cache are
# skipped, so only the first run is slow (~15 min on 2 cores).
#
# Usage: hack/kube-binaries.sh            build what is missing, print the dir
#        hack/kube-binaries.sh --node     also the kubelet and kube-proxy of
#                                         the real node (hack/real-node.sh)
#        hack/kube-binaries.sh --print    print the dir only
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools=$root/hack/tools

# The pinned versions live in the tool modules; read them from there so a
# version bump is a one-line go.mod change that also moves the cache key.
modversion() { awk -v m="$2" '$1 == m || ($1 == "require" && $2 == m) { print ($1 == "require" ? $3 : $2); exit }' "$1/go.mod"; }
kube_version=$(modversion "$tools/kube" k8s.io/kubernetes)
etcd_version=$(modversion "$tools/etcd" go.etcd.io/etcd/server/v3)
kwok_version=v0.7.0

cache=${ONTIME_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ontime}
bin=$cache/kube-$kube_version-etcd-$etcd_version-kwok-$kwok_version/bin

if [[ ${1:-} == --print ]]; then echo "$bin"; exit 0; fi
mkdir -p "$bin"

# Stamp the version into the Kubernetes binaries so `kubectl version` and
# kwokctl see v1.34.x instead of v0.0.0-master.
minor=${kube_version#v1.}; minor=${minor%%.*}
kube_ldflags="-s -w \
 -X k8s.io/component-base/version.gitVersion=$kube_version \
 -X k8s.io/component-base/version.gitMajor=1 \
 -X k8s.io/component-base/version.gitMinor=$minor \
 -X k8s.io/client-go/pkg/version.gitVersion=$kube_version \
 -X k8s.io/client-go/pkg/version.gitMajor=1 \
 -X k8s.io/client-go/pkg/version.gitMinor=$minor"

# name | module dir (empty: go install) | package
targets=(
  "etcd|$tools/etcd|go.etcd.io/etcd/server/v3"
  "kube-apiserver|$tools/kube|k8s.io/kubernetes/cmd/kube-apiserver"
  "kube-controller-manager|$tools/kube|k8s.io/kubernetes/cmd/kube-controller-manager"
  "kube-scheduler|$tools/kube|k8s.io/kubernetes/cmd/kube-scheduler"
  "kubectl|$tools/kube|k8s.io/kubernetes/cmd/kubectl"
  "kwok||sigs.k8s.io/kwok/cmd/kwok@$kwok_version"
  "kwokctl||sigs.k8s.io/kwok/cmd/kwokctl@$kwok_version"
)
if [[ ${1:-} == --node ]]; then
  targets+=(
    "kubelet|$tools/kube|k8s.io/kubernetes/cmd/kubelet"
    "kube-proxy|$tools/kube|k8s.io/kubernetes/cmd/kube-proxy"
  )
fi

missing=0
for target in "${targets[@]}"; do
  [[ -x $bin/${target%%|*} ]] || missing=$((missing + 1))
done
if ((missing == 0)); then
  echo "control plane: all ${#targets[@]} binaries cached in $bin" >&2
  echo "$bin"
  exit 0
fi

i=0
for target in "${targets[@]}"; do
  i=$((i + 1))
  IFS='|' read -r name dir pkg <<<"$target"
  if [[ -x $bin/$name ]]; then
    echo "[$i/${#targets[@]}] $name: cached" >&2
    continue
  fi
  echo "[$i/${#targets[@]}] building $name… (first build only; cached in $bin)" >&2
  start=$SECONDS
  tmp=$(mktemp -d "$bin/.build-$name.XXXXXX")
  if [[ -z $dir ]]; then
    GOBIN=$tmp go install -trimpath -ldflags "-s -w" "$pkg"
  elif [[ $name == etcd ]]; then
    (cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$tmp/$name" "$pkg")
  else
    (cd "$dir" && go build -trimpath -ldflags "$kube_ldflags" -o "$tmp/$name" "$pkg")
  fi
  # Rename into place only when complete, so an interrupted build never
  # leaves a half-written binary that a later run would treat as cached.
  mv "$tmp/$name" "$bin/$name"
  rmdir "$tmp"
  echo "      $name built in $((SECONDS - start))s" >&2
done
echo "$bin"
