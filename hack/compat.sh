#!/usr/bin/env bash
# Runs ontime's envtest suites and a kwok end-to-end smoke test against
# each Kubernetes release of the version matrix, records what ran in
# test/compat/results.tsv, and writes the compatibility table of
# docs/install.md from that file (make compat).
#
# Usage: hack/compat.sh [--envtest-only] [VERSION...]
#   VERSION   a k8s.io/kubernetes release (v1.35.4); default: every row of
#             test/compat/versions
#   --envtest-only  only the envtest suites, and record nothing (make
#             test's second release: the table is make compat's)
#
# Each release's control plane is built once into the cache
# (ONTIME_KUBE_VERSION, hack/kube-binaries.sh): about 15 minutes on 2 cores.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

smoke=1 recording=1
if [[ ${1:-} == --envtest-only ]]; then smoke=0 recording=0; shift; fi
versions=("$@")
if ((${#versions[@]} == 0)); then
  mapfile -t versions < <(grep -v '^#' test/compat/versions)
fi

# The packages with envtest suites: their files carry the integration tag.
mapfile -t suites < <(grep -rl --include='*_test.go' '^//go:build integration' cmd internal | xargs -n 1 dirname | sort -u | sed 's|^|./|')
smoke_test='^TestScheduledJobsAgainstCronJobs$'
results=test/compat/results.tsv
logs=bin/compat
mkdir -p "$logs"

# record VERSION SUITE RESULT SECONDS replaces the row of VERSION and SUITE.
record() {
  ((recording)) || return 0
  local row
  row=$(printf '%s\t%s\t%s\t%s\t%s\t%s' "$1" "$2" "$3" "$4" "$(date -u +%F)" "$(git rev-parse --short HEAD)")
  { grep -v -P "^\Q$1\E\t\Q$2\E\t" "$results" || true; echo "$row"; } | sort -V >"$results.tmp"
  mv "$results.tmp" "$results"
}

failed=0
for version in "${versions[@]}"; do
  echo "==> Kubernetes $version: its control plane (built once, cached)"
  # The envtest suites need etcd, kube-apiserver and kubectl (kubectl
  # explain, kubectl create); the smoke test all.
  if ((smoke)); then
    bin=$(ONTIME_KUBE_VERSION=$version hack/kube-binaries.sh)
  else
    bin=$(ONTIME_KUBE_VERSION=$version hack/kube-binaries.sh --envtest)
  fi
  "$bin/kube-apiserver" --version

  echo "==> Kubernetes $version: envtest suites (${suites[*]})"
  start=$SECONDS
  # -short and 100 seeds: the interleaving explorations in these packages
  # run on a fake API, the same on every release; the timing test on its
  # own API server (-short skips it) is make test's.
  if ONTIME_EXPLORE_SEEDS=100 KUBEBUILDER_ASSETS=$bin go test -tags integration -short -count=1 -timeout 30m "${suites[@]}" >"$logs/envtest-$version.log" 2>&1; then
    result=passed
  else
    result=failed; failed=1
    grep -E '^(--- FAIL|FAIL|panic)' "$logs/envtest-$version.log" | head -20 >&2 || true
  fi
  echo "    $result in $((SECONDS - start)) s ($logs/envtest-$version.log)"
  record "$version" envtest "$result" $((SECONDS - start))

  ((smoke)) || continue
  echo "==> Kubernetes $version: kwok smoke test ($smoke_test: ScheduledJobs beside CronJobs, the leader killed)"
  start=$SECONDS
  if ONTIME_KUBE_VERSION=$version go test -tags e2e -count=1 -timeout 20m -v -run "$smoke_test" ./test/e2e/ >"$logs/smoke-$version.log" 2>&1; then
    result=passed
  else
    result=failed; failed=1
    grep -E '^\s*(--- FAIL|FAIL|panic)|_test.go:[0-9]+:' "$logs/smoke-$version.log" | head -20 >&2 || true
  fi
  echo "    $result in $((SECONDS - start)) s ($logs/smoke-$version.log)"
  record "$version" kwok-smoke "$result" $((SECONDS - start))
done

if ((recording)); then
  go run ./hack/compattable "$results" docs/install.md charts/ontime/Chart.yaml
  echo "==> wrote $results, the table of docs/install.md and the chart's kubeVersion"
fi
exit $failed
