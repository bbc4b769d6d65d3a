//go:build tools

// Package tools pins Helm, which make test uses to lint and render
// charts/ontime and make release uses to write dist/install.yaml.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
