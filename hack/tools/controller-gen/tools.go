//go:build tools

// Package controllergen pins controller-gen, which generates deepcopy
// methods, CRDs, RBAC and webhook manifests from the markers in api/ and
// internal/. Run it through `make generate`.
package controllergen

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
