//go:build tools

// Package tools pins cyclonedx-gomod, which make release runs to write a
// CycloneDX SBOM of each binary it ships (the image's and the CLI's).
package tools

import _ "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"
