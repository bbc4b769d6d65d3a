package controller

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The secure /metrics endpoint asks the API server who a caller is and
// whether it may read /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// MetricsServer returns the options of the manager's /metrics endpoint on
// address ("0": none). Secure, it serves HTTPS (a self-signed certificate)
// and answers only a caller whose bearer token the API server
// authenticates (a TokenReview) and authorizes to get the non-resource
// URL /metrics (a SubjectAccessReview), as the kubebuilder scaffold does;
// the answers are cached for a minute, so a scraper costs the API server
// about one review a minute. Not secure, it serves plain HTTP to anyone
// who reaches the port.
func MetricsServer(address string, secure bool) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: address}
	if secure {
		opts.SecureServing = true
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return opts
}
