package concurrencygroup

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/concurrency"
)

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// excluded are the namespaces, among those of the group's unfinished Jobs
// and upcoming runs, that a ClusterConcurrencyGroup's namespaceSelector
// does not select (nil for a group without one). The cache answers; a
// namespace it excludes that an unfinished Job is in is read again from
// the API server, because a waiting run from it is refused for good, and
// a running one not admitted stops counting: a cache behind a namespace
// just labeled must not cost a run, nor put the group over its limit. (An
// upcoming run is only a prediction.)
func (c *Controller) excluded(ctx context.Context, group client.Object, jobs []*batchv1.Job, upcoming []concurrency.Upcoming) (map[string]bool, error) {
	cluster, ok := group.(*v1alpha1.ClusterConcurrencyGroup)
	if !ok {
		return nil, nil
	}
	selector, err := cluster.Spec.Namespaces()
	if err != nil {
		// Admission refuses such a selector; runs wait, as before a group.
		return nil, fmt.Errorf("%s %s: spec.namespaceSelector: %w", c.kind, cluster.Name, err)
	}
	if selector.Empty() {
		return nil, nil
	}
	// namespace → whether a refusal is at stake (a read from the API
	// server confirms it).
	namespaces := map[string]bool{}
	for _, run := range upcoming {
		namespaces[run.Namespace] = false
	}
	for _, job := range jobs {
		if _, done := v1alpha1.JobFinished(job); !done {
			namespaces[job.Namespace] = true
		}
	}
	excluded := map[string]bool{}
	for namespace, confirm := range namespaces {
		readers := []client.Reader{c.cached}
		if confirm {
			readers = append(readers, c.live)
		}
		selected, err := selects(ctx, readers, selector, namespace)
		if err != nil {
			return nil, err
		}
		if !selected {
			excluded[namespace] = true
		}
	}
	return excluded, nil
}

// selects reports whether the group selects the namespace, as the first
// reader says, or if it says no, the next. A namespace gone is not
// selected.
func selects(ctx context.Context, readers []client.Reader, selector labels.Selector, name string) (bool, error) {
	for _, reader := range readers {
		namespace := &corev1.Namespace{}
		err := reader.Get(ctx, types.NamespacedName{Name: name}, namespace)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, err
		}
		if selector.Matches(labels.Set(namespace.Labels)) {
			return true, nil
		}
	}
	return false, nil
}

// groupsWithSelector are the cluster groups with a namespaceSelector, to
// reconcile when a namespace's labels change: whether they select it may
// have changed, and with it which of its runs they refuse and list as
// upcoming (the members' warm-up follows the list).
func (c *Controller) groupsWithSelector(ctx context.Context, _ client.Object) []reconcile.Request {
	var list v1alpha1.ClusterConcurrencyGroupList
	if err := c.cached.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil // each is reconciled again at its next Job event or wake
	}
	var requests []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.NamespaceSelector != nil {
			requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
		}
	}
	return requests
}
