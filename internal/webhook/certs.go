package webhook

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cert-controller watches the Secret and the webhook configuration through
// informers (get, list, watch of all of them), but writes only ontime's own:
// the default names of --webhook-secret and --webhook-configuration.
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=update,resourceNames=ontime-webhook-server-cert
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=update;patch,resourceNames=ontime-validating-webhook-configuration
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=update;patch,resourceNames=ontime-mutating-webhook-configuration

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
	// MutatingConfiguration is the MutatingWebhookConfiguration (the Job
	// webhook of concurrency groups) to inject it into; one not installed
	// is passed over.
	MutatingConfiguration string
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
		Webhooks:       []rotator.WebhookInfo{{Name: opts.Configuration, Type: rotator.Validating}, {Name: opts.MutatingConfiguration, Type: rotator.Mutating}},
	})
	return ready, err
}

// CertFileWriter copies the certificate Secret's tls.crt and tls.key into a
// directory, as a Secret volume does in a pod, but within seconds of the
// Secret being filled: a kubelet refreshes a Secret volume only at its next
// sync of the pod (a minute or more), and cert-controller looks for the
// files at exponentially growing intervals, so a replica of a fresh install
// whose volume was mounted empty could stay unready for minutes. The chart
// mounts an emptyDir there and has the controller write it; a controller
// running outside the cluster (make dev) has no kubelet to mount the Secret
// at all.
type CertFileWriter struct {
	Reader client.Reader
	Secret types.NamespacedName
	Dir    string
}

// Intervals at which the Secret is read: often until the files are in
// place, then seldom (cert-controller rotates long before expiry), so that
// a replica costs the API server a read every 30 seconds.
const (
	certPollBootstrap = 2 * time.Second
	certPollSteady    = 30 * time.Second
)

// Start copies the files until ctx ends.
func (w *CertFileWriter) Start(ctx context.Context) error {
	for {
		interval := certPollBootstrap
		complete, err := w.sync(ctx)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("copying the webhook certificate", "error", err.Error())
		} else if complete {
			interval = certPollSteady
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// NeedLeaderElection is false: every replica serves the webhook.
func (w *CertFileWriter) NeedLeaderElection() bool { return false }

// sync writes what the Secret holds of the three files, and reports
// whether it holds the serving pair.
func (w *CertFileWriter) sync(ctx context.Context) (bool, error) {
	secret := &corev1.Secret{}
	if err := w.Reader.Get(ctx, w.Secret, secret); err != nil {
		return false, err
	}
	if err := os.MkdirAll(w.Dir, 0o700); err != nil {
		return false, err
	}
	for _, name := range []string{"tls.crt", "tls.key", "ca.crt"} {
		data, ok := secret.Data[name]
		if !ok {
			continue
		}
		path := filepath.Join(w.Dir, name)
		if current, err := os.ReadFile(path); err == nil && bytes.Equal(current, data) {
			continue
		}
		// Write and rename, so readers never see half a file.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return false, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return false, err
		}
	}
	return len(secret.Data["tls.crt"]) > 0 && len(secret.Data["tls.key"]) > 0, nil
}
