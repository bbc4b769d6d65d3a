//go:build tools

// Package kube pins the Kubernetes control-plane binaries that ontime's tests
// and `make dev` run. k8s.io/kubernetes cannot be `go install`ed: its go.mod
// replaces the staging modules with local paths that are not in the module
// zip, so this module replaces each of them with the published version instead.
// The kubelet and kube-proxy run the local cluster's real node
// (hack/real-node.sh); they are built only when that node is asked for.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
