//go:build tools

// Package golangcilint pins golangci-lint, the linter `make lint` runs with
// the settings in .golangci.yml.
package golangcilint

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
