//go:build tools

// Package tools pins crd-ref-docs, which make generate runs to write the
// API reference (docs/reference/api.md) from api/v1alpha1's types and their
// comments, with the templates in hack/crd-ref-docs.
package tools

import _ "github.com/elastic/crd-ref-docs"
