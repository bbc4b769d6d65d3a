//go:build tools

// Package etcd pins the etcd server that ontime's envtest suites and local
// cluster run against.
package etcd

import _ "go.etcd.io/etcd/server/v3"
