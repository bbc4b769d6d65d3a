#!/usr/bin/env bash
# Fails when `make generate` would change deepcopy code, CRDs, RBAC or
# webhook manifests, the API and CLI references, the measured path of one run (docs/architecture.md), or the chart's copies of config/: they must be regenerated and committed with the
# markers they come from.
set -euo pipefail
cd "$(dirname "$0")/.."
files=(api/v1alpha1/zz_generated.deepcopy.go docs/reference config/crd/bases config/rbac/role.yaml config/webhook/manifests.yaml config/dev/webhook.yaml charts/ontime/crds charts/ontime/files charts/ontime/README.md charts/ontime/values.schema.json docs/architecture.md)
before=$(find "${files[@]}" -type f -exec sha256sum {} + | sort)
make --no-print-directory generate >/dev/null
after=$(find "${files[@]}" -type f -exec sha256sum {} + | sort)
if [[ $before != "$after" ]]; then
  echo "generated files were out of date; make generate updated them:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
echo "generated files are up to date" >&2
