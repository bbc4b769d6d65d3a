//go:build tools

// Package tools pins actionlint, which make lint runs over
// .github/workflows: the release workflow cannot run on this machine, but
// its syntax, expressions and action inputs are checked.
package tools

import _ "github.com/rhysd/actionlint/cmd/actionlint"
