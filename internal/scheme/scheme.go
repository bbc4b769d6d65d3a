// Package scheme holds the types ontime reads and writes: Kubernetes' own
// and the ontime.dev API. It registers nothing else (no controllers, no
// metrics), so a command-line client can use it as well as the manager.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// New returns a scheme with client-go's types and ontime's API.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}
