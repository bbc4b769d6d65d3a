// Package controller wires ontime's reconcilers into a controller-runtime
// manager. Each reconciler lives in its own subpackage; this file is the one
// place that registers them.
package controller

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Scheme returns the types ontime's manager reads and writes.
func Scheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	return scheme
}

// Register adds every ontime reconciler to mgr. clk is the only source of
// the current time below cmd/, so that tests can step it.
func Register(mgr ctrl.Manager, clk clock.PassiveClock) error {
	_ = mgr
	_ = clk
	return nil
}
