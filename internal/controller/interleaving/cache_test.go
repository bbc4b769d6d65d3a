package interleaving

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// cache is one replica's informer cache: per kind, the API server's log
// replayed up to a point of its own, so that Jobs can be ahead of
// ScheduledJobs or behind, as two informers' watches are. The scheduler
// moves each kind on one change at a time; onChange tells the replica's
// controllers what their watches would.
type cache struct {
	api *api
	// next is, per kind, the position in api.byKind of the next change to
	// replay.
	next     map[kind]int
	objects  map[objectKey]client.Object
	onChange func(k kind, old, updated client.Object)
}

// newCache starts a cache as an informer does: from a list of everything
// now, then following the log.
func newCache(a *api) *cache {
	c := &cache{api: a, next: map[kind]int{}, objects: map[objectKey]client.Object{}}
	for key, obj := range a.objects {
		c.objects[key] = copyObject(obj)
	}
	for k, changes := range a.byKind {
		c.next[k] = len(changes)
	}
	return c
}

// behind reports whether kind k has changes the cache has not replayed.
func (c *cache) behind(k kind) bool { return c.next[k] < len(c.api.byKind[k]) }

// advance replays the next change of kind k.
func (c *cache) advance(k kind) {
	ch := c.api.log[c.api.byKind[k][c.next[k]]]
	c.next[k]++
	old := c.objects[ch.key]
	if ch.object == nil {
		delete(c.objects, ch.key)
	} else {
		c.objects[ch.key] = copyObject(ch.object)
	}
	if c.onChange != nil {
		c.onChange(k, old, ch.object)
	}
}

func (c *cache) get(key objectKey, into client.Object) error {
	obj, ok := c.objects[key]
	if !ok {
		return notFound(key)
	}
	copyInto(obj, into)
	return nil
}

// The clients below are what the controllers get: the manager's client,
// which reads from the cache and writes to the API server, and its API
// reader. Every call is one step of the scheduler: the calling goroutine
// waits until the scheduler runs it.

// cachedClient reads from a replica's cache and writes to the API server.
type cachedClient struct {
	client.Client // nil: a method the controllers do not use panics
	proc          caller
	cache         *cache
}

func (c *cachedClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return c.proc.do("cache get", func() error {
		return c.cache.get(objectKey{kind: kindOf(obj), namespace: key.Namespace, name: key.Name}, obj)
	})
}

func (c *cachedClient) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.proc.do("cache list", func() error {
		fill(list, matching(c.cache.objects, kindOf(list), listOptions(opts)))
		return nil
	})
}

func (c *cachedClient) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	return c.proc.do("create "+obj.GetName(), func() error { return c.cache.api.create(c.proc.actor, obj) })
}

func (c *cachedClient) Delete(_ context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.proc.do("delete "+obj.GetName(), func() error {
		return c.cache.api.delete(c.proc.actor, obj, (&client.DeleteOptions{}).ApplyOptions(opts))
	})
}

func (c *cachedClient) Patch(_ context.Context, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
	return c.proc.do("patch "+obj.GetName(), func() error { return c.cache.api.patch(c.proc.actor, obj, patch, false) })
}

func (c *cachedClient) Update(_ context.Context, obj client.Object, _ ...client.UpdateOption) error {
	return c.proc.do("update "+obj.GetName(), func() error { return c.cache.api.update(c.proc.actor, obj) })
}

func (c *cachedClient) Status() client.SubResourceWriter { return statusWriter{c} }

type statusWriter struct{ c *cachedClient }

func (s statusWriter) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	panic("status create")
}

func (s statusWriter) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	panic("status update")
}

func (s statusWriter) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	panic("status apply")
}

func (s statusWriter) Patch(_ context.Context, obj client.Object, patch client.Patch, _ ...client.SubResourcePatchOption) error {
	return s.c.proc.do("status patch "+obj.GetName(), func() error { return s.c.cache.api.patch(s.c.proc.actor, obj, patch, true) })
}

// liveReader reads from the API server.
type liveReader struct {
	proc caller
	api  *api
}

func (r liveReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return r.proc.do("live get "+key.Name, func() error {
		return r.api.get(r.proc.actor, objectKey{kind: kindOf(obj), namespace: key.Namespace, name: key.Name}, obj)
	})
}

func (r liveReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.proc.do("live list "+string(kindOf(list)), func() error {
		if _, err := r.api.outage(); err != nil {
			r.api.requests[r.proc.actor]++
			return err
		}
		fill(list, r.api.list(r.proc.actor, kindOf(list), listOptions(opts)))
		return nil
	})
}

func listOptions(opts []client.ListOption) *client.ListOptions {
	o := &client.ListOptions{}
	for _, opt := range opts {
		opt.ApplyToList(o)
	}
	return o
}

// fill sets list's items to copies of objects.
func fill(list client.ObjectList, objects []client.Object) {
	switch l := list.(type) {
	case *v1alpha1.ScheduledJobList:
		l.Items = nil
		for _, obj := range objects {
			l.Items = append(l.Items, *obj.DeepCopyObject().(*v1alpha1.ScheduledJob))
		}
	case *batchv1.JobList:
		l.Items = nil
		for _, obj := range objects {
			l.Items = append(l.Items, *obj.DeepCopyObject().(*batchv1.Job))
		}
	case *corev1.PodList:
		l.Items = nil
		for _, obj := range objects {
			l.Items = append(l.Items, *obj.DeepCopyObject().(*corev1.Pod))
		}
	case *corev1.ConfigMapList:
		l.Items = nil
		for _, obj := range objects {
			l.Items = append(l.Items, *obj.DeepCopyObject().(*corev1.ConfigMap))
		}
	case *metav1.PartialObjectMetadataList:
		l.Items = nil
		for _, obj := range objects {
			meta := metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
			l.Items = append(l.Items, metav1.PartialObjectMetadata{ObjectMeta: meta})
		}
	default:
		panic(fmt.Sprintf("fill %T", list))
	}
}

func labelSet(l map[string]string) labels.Set { return labels.Set(l) }

// fieldSet is what the controllers' field indexes say of an object: its
// controller's UID (Jobs by ScheduledJob).
func fieldSet(obj client.Object) fields.Set {
	set := fields.Set{}
	if owner := metav1.GetControllerOf(obj); owner != nil {
		set[".metadata.controller.uid"] = string(owner.UID)
	}
	return set
}

func sortObjects(objects []client.Object) {
	slices.SortFunc(objects, func(a, b client.Object) int {
		return strings.Compare(a.GetNamespace()+"/"+a.GetName(), b.GetNamespace()+"/"+b.GetName())
	})
}
