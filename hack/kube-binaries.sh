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
#        hack/kube-binaries.sh --envtest  only etcd, kube-apiserver and
#                                         kubectl: envtest's assets (the
#                                         suites run kubectl explain and
#                                         kubectl create from them)
#        hack/kube-binaries.sh --print    print the dir only
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools=$root/hack/tools
# shellcheck source=hack/lib.sh
source "$root/hack/lib.sh"

# The pinned versions live in the tool modules; read them from there so a
# version bump is a one-line go.mod change that also moves the cache key.
modversion() { awk -v m="$2" '$1 == m || ($1 == "require" && $2 == m) { print ($1 == "require" ? $3 : $2); exit }' "$1/go.mod"; }
kube_version=$(modversion "$tools/kube" k8s.io/kubernetes)
etcd_version=$(modversion "$tools/etcd" go.etcd.io/etcd/server/v3)

cache=${ONTIME_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ontime}

# release_modules VERSION writes the two tool modules of another Kubernetes
# release into the cache, as hack/tools/kube and hack/tools/etcd are for the
# default one (the staging modules replaced by their published versions,
# and the etcd that release's go.mod names), and points tools at them.
release_modules() {
  local version=$1 gomod dir
  dir=$cache/modules/kube-$version
  tools=$dir
  # Written before: read the etcd version back instead of asking the
  # module proxy again (the tests ask for the directory many times).
  if [[ -f $dir/kube/go.sum && -f $dir/etcd/go.sum ]]; then
    etcd_version=$(modversion "$dir/etcd" go.etcd.io/etcd/server/v3)
    return 0
  fi
  gomod=$(cd "$root/hack/tools/kube" && go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [[ -n $gomod ]] || { echo "$(basename "$0"): the module proxy has no k8s.io/kubernetes $version" >&2; exit 1; }
  etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2; exit }' "$gomod")
  echo "writing the tool modules of Kubernetes $version (etcd $etcd_version) into $dir" >&2
  mkdir -p "$dir/kube" "$dir/etcd"
  cp "$root/hack/tools/kube/tools.go" "$dir/kube/"
  cp "$root/hack/tools/etcd/tools.go" "$dir/etcd/"
  {
    printf 'module ontime.local/tools/kube\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$(awk '$1 == "go" { print $2; exit }' "$gomod")" "$version"
    awk -v staging="v0.${version#v1.}" '$2 == "=>" && $3 ~ /^\.\/staging\// { print "\t" $1 " => " $1 " " staging }' "$gomod"
    echo ")"
  } >"$dir/kube/go.mod"
  printf 'module ontime.local/tools/etcd\n\ngo %s\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$(go env GOVERSION | sed 's/^go//')" "$etcd_version" >"$dir/etcd/go.mod"
  (cd "$dir/kube" && go mod tidy) && (cd "$dir/etcd" && go mod tidy)
}

# ONTIME_KUBE_VERSION=vX.Y.Z selects another release than hack/tools/kube's
# (make compat): the cluster scripts and the tests all ask this script.
if [[ -n ${ONTIME_KUBE_VERSION:-} && $ONTIME_KUBE_VERSION != "$kube_version" ]]; then
  kube_version=$ONTIME_KUBE_VERSION
  release_modules "$kube_version"
fi
bin=$cache/kube-$kube_version-etcd-$etcd_version-kwok-$kwok_version/bin

if [[ ${1:-} == --print ]]; then echo "$bin"; exit 0; fi
mkdir -p "$bin"

# Stamp the version into the Kubernetes binaries so `kubectl version` and
# kwokctl see the release (v1.37.x) instead of v0.0.0-master.
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
  "kubectl|$tools/kube|k8s.io/kubernetes/cmd/kubectl"
)
if [[ ${1:-} != --envtest ]]; then
  targets+=(
    "kube-controller-manager|$tools/kube|k8s.io/kubernetes/cmd/kube-controller-manager"
    "kube-scheduler|$tools/kube|k8s.io/kubernetes/cmd/kube-scheduler"
    "kwok||sigs.k8s.io/kwok/cmd/kwok@$kwok_version"
    "kwokctl||sigs.k8s.io/kwok/cmd/kwokctl@$kwok_version"
  )
fi
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

# Binaries cached beside another etcd or kwok (the version is in the
# directory's name) are linked instead of built again; the rest are built
# in three groups side by side: etcd, the Kubernetes binaries (one go
# build: their shared packages compile once, and each link, which runs on
# one core, overlaps the others' compiles) and kwok's two. Each group
# renames its binaries into place only when they are complete, so an
# interrupted build never leaves a half-written binary that a later run
# would take for cached.
kube_pkgs=() kwok_pkgs=() build_etcd=
for target in "${targets[@]}"; do
  IFS='|' read -r name dir pkg <<<"$target"
  [[ -x $bin/$name ]] && continue
  case $name in
    etcd) pattern="kube-*-etcd-$etcd_version-kwok-*" ;;
    kwok | kwokctl) pattern="kube-*-etcd-*-kwok-$kwok_version" ;;
    *) pattern="kube-$kube_version-etcd-*-kwok-*" ;;
  esac
  found=$(compgen -G "$cache/$pattern/bin/$name" | head -n 1 || true)
  if [[ -n $found ]] && ln -f "$found" "$bin/$name" 2>/dev/null; then
    echo "$name: linked from $found" >&2
    continue
  fi
  case $name in
    etcd) build_etcd=$pkg ;;
    kwok | kwokctl) kwok_pkgs+=("$pkg") ;;
    *) kube_pkgs+=("$pkg") ;;
  esac
done

# build_group LABEL DIR LDFLAGS PACKAGE... builds the packages (of DIR's
# module; with no DIR, go install PACKAGE@VERSION) into $bin.
build_group() {
  local label=$1 dir=$2 ldflags=$3 start=$SECONDS tmp name
  shift 3
  echo "building $label… (first build only; cached in $bin)" >&2
  tmp=$(mktemp -d "$bin/.build.XXXXXX")
  if [[ -z $dir ]]; then
    GOBIN=$tmp go install "${tool_build_flags[@]}" -ldflags "$ldflags" "$@"
  else
    (cd "$dir" && go build "${tool_build_flags[@]}" -ldflags "$ldflags" -o "$tmp/" "$@")
  fi
  for name in "$tmp"/*; do mv "$name" "$bin/"; done
  rmdir "$tmp"
  echo "      $label built in $((SECONDS - start))s" >&2
}

pids=()
if [[ -n $build_etcd ]]; then
  # etcd's main package is the module's root: go build names it after the
  # module (v3), so it gets an explicit output name.
  (
    start=$SECONDS
    echo "building etcd… (first build only; cached in $bin)" >&2
    tmp=$(mktemp -d "$bin/.build.XXXXXX")
    (cd "$tools/etcd" && go build "${tool_build_flags[@]}" -ldflags "-s -w" -o "$tmp/etcd" "$build_etcd")
    mv "$tmp/etcd" "$bin/etcd" && rmdir "$tmp"
    echo "      etcd built in $((SECONDS - start))s" >&2
  ) &
  pids+=($!)
fi
if ((${#kube_pkgs[@]})); then
  build_group "${kube_pkgs[*]##*/}" "$tools/kube" "$kube_ldflags" "${kube_pkgs[@]}" &
  pids+=($!)
fi
if ((${#kwok_pkgs[@]})); then
  build_group "${kwok_pkgs[*]##*/}" "" "-s -w" "${kwok_pkgs[@]}" &
  pids+=($!)
fi
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
((failed == 0)) || { echo "$(basename "$0"): a build failed (above)" >&2; exit 1; }
echo "$bin"
