//go:build tools

// Package tools pins Helm 4, with which the real-node test installs and
// upgrades ontime beside Helm 3 (hack/tools/helm): both are in use.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
