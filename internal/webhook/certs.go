package webhook

import (
	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list;watch;update;patch

// CertOptions say where the webhook's serving certificate lives.
type CertOptions struct {
	// Dir is where the webhook server reads tls.crt and tls.key.
	Dir string
	// Secret holds the CA and serving certificate, shared by all replicas.
	Secret types.NamespacedName
	// DNSName is the name the API server calls the webhook by: the
	// Service's <name>.<namespace>.svc, or localhost outside a cluster.
	DNSName string
	// Configuration is the ValidatingWebhookConfiguration to inject the CA
	// bundle into.
	Configuration string
}

// RotateCerts has open-policy-agent's cert-controller create a CA and
// serving certificate in the Secret, write them to Dir, inject the CA into
// the webhook configuration, and rotate them before they expire. The
// returned channel closes when the certificate is in place.
func RotateCerts(mgr ctrl.Manager, opts CertOptions) (<-chan struct{}, error) {
	ready := make(chan struct{})
	err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      opts.Secret,
		CertDir:        opts.Dir,
		CAName:         "ontime-ca",
		CAOrganization: "ontime",
		DNSName:        opts.DNSName,
		IsReady:        ready,
		Webhooks:       []rotator.WebhookInfo{{Name: opts.Configuration, Type: rotator.Validating}},
	})
	return ready, err
}
