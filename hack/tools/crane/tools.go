//go:build tools

// Package tools pins crane (go-containerregistry), which make publish uses
// to push the image by digest, and which serves the registry on loopback
// that the real-node test publishes to and installs from.
package tools

import _ "github.com/google/go-containerregistry/cmd/crane"
