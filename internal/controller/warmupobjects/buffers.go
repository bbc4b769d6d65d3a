// Package warmupobjects reads, creates and deletes an owner's warm-up
// objects (placeholder pods, EarlyStart pods, CapacityBuffers with their
// PodTemplates) for every kind of owner: ScheduledJobs and annotated
// CronJobs. What to create and delete is decided by internal/warmup; the
// Executor here is the one place that carries it out.
package warmupobjects

import (
	"cmp"
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/warmup"
)

// +kubebuilder:rbac:groups="",resources=podtemplates,verbs=create;delete
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers,verbs=list;create;delete

// bufferAPIRecheck is how long what discovery said of the CapacityBuffer
// API is trusted: an autoscaler installed, enabled or upgraded later is
// seen within it.
const bufferAPIRecheck = time.Minute

// Buffers reads, creates and deletes the CapacityBuffers of warm-up, and
// asks discovery which version of their API the cluster serves. Buffers
// are read from the API server, not a cache: the API may not be served
// when the controller starts, or ever, and only owners warming up with
// CapacityBuffer read them.
type Buffers struct {
	client    client.Client
	discovery discovery.DiscoveryInterface
	clock     clock.PassiveClock

	mu      sync.Mutex
	api     warmup.BufferAPI
	checked time.Time
}

// NewBuffers returns Buffers for the cluster of config. c must read
// unstructured objects from the API server (controller-runtime's default).
func NewBuffers(c client.Client, config *rest.Config, clk clock.PassiveClock) (*Buffers, error) {
	d, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	return &Buffers{client: c, discovery: d, clock: clk}, nil
}

// API says which version of the CapacityBuffer API to use, asking
// discovery at most every bufferAPIRecheck. A discovery error is returned
// (and retried): only an answer says the API is not served.
func (b *Buffers) API() (warmup.BufferAPI, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.checked.IsZero() && b.clock.Since(b.checked) < bufferAPIRecheck {
		return b.api, nil
	}
	served, err := b.servedVersions()
	if err != nil {
		return warmup.BufferAPI{}, err
	}
	b.api, b.checked = warmup.ChooseBufferAPI(served), b.clock.Now()
	return b.api, nil
}

// servedVersions lists the versions of autoscaling.x-k8s.io that serve
// capacitybuffers, each with whether the resource is namespaced.
func (b *Buffers) servedVersions() (map[string]bool, error) {
	groups, err := b.discovery.ServerGroups()
	if err != nil {
		return nil, err
	}
	served := map[string]bool{}
	for _, group := range groups.Groups {
		if group.Name != warmup.BufferGroup {
			continue
		}
		for _, version := range group.Versions {
			resources, err := b.discovery.ServerResourcesForGroupVersion(version.GroupVersion)
			if apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return nil, err
			}
			for _, r := range resources.APIResources {
				if r.Name == warmup.BufferResource {
					served[version.Version] = r.Namespaced
				}
			}
		}
	}
	return served, nil
}

// forget makes the next API call ask discovery again: the API answered
// as if it were gone.
func (b *Buffers) forget() {
	b.mu.Lock()
	b.checked = time.Time{}
	b.mu.Unlock()
}

// Read says which version of the CapacityBuffer API to use and reads the
// owner's CapacityBuffers with it.
func (b *Buffers) Read(ctx context.Context, owner metav1.Object) (warmup.BufferAPI, []warmup.Buffer, error) {
	api, err := b.API()
	if err != nil {
		return api, nil, err
	}
	buffers, err := b.List(ctx, api, owner)
	return api, buffers, err
}

// List reads an owner's CapacityBuffers (label ontime.dev/owner-uid).
func (b *Buffers) List(ctx context.Context, api warmup.BufferAPI, owner metav1.Object) ([]warmup.Buffer, error) {
	if api.Version == "" {
		return nil, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(api.GroupVersionKind().GroupVersion().WithKind(warmup.BufferKind + "List"))
	err := b.client.List(ctx, list, client.InNamespace(owner.GetNamespace()), client.MatchingLabels{v1alpha1.OwnerUIDLabel: string(owner.GetUID())})
	if apierrors.IsNotFound(err) {
		b.forget() // the CRD was removed: say so at the next look
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	buffers := make([]warmup.Buffer, 0, len(list.Items))
	for i := range list.Items {
		buffers = append(buffers, warmup.BufferOf(&list.Items[i]))
	}
	return buffers, nil
}

// Create creates the PodTemplate, then the CapacityBuffer that names it;
// either may exist already (created before).
func (b *Buffers) Create(ctx context.Context, r warmup.BufferRequest) error {
	if err := b.client.Create(ctx, r.Template.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	err := b.client.Create(ctx, r.Buffer.DeepCopy())
	if apierrors.IsNotFound(err) {
		b.forget()
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// Delete deletes the CapacityBuffer, then its PodTemplate; either may be
// gone already.
func (b *Buffers) Delete(ctx context.Context, api warmup.BufferAPI, buffer warmup.Buffer) error {
	namespace := buffer.Namespace
	var bufferErr error
	if api.Version != "" { // else the API went away, and its buffers with it
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(api.GroupVersionKind())
		u.SetNamespace(namespace)
		u.SetName(buffer.Name)
		bufferErr = client.IgnoreNotFound(b.client.Delete(ctx, u))
	}
	template := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: buffer.Name}}
	return cmp.Or(bufferErr, client.IgnoreNotFound(b.client.Delete(ctx, template)))
}
