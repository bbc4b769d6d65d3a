//go:build tools

// Package tools pins helm-docs, which make generate runs to write the
// chart's README (its values table) from values.yaml's "# --" comments and
// charts/ontime/README.md.gotmpl.
package tools

import _ "github.com/norwoodj/helm-docs/cmd/helm-docs"
