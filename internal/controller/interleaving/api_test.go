package interleaving

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
)

// The fake API server keeps one object per key and a log of every write,
// as etcd does: each write gets the next resourceVersion, and caches
// (cache_test.go) replay the log behind it. It answers as kube-apiserver
// does where the controllers rely on it: creates by name (AlreadyExists),
// deletes and patches with preconditions (Conflict), the status
// subresource, and a request's outcome during an outage.

// kind names the resources the controllers touch.
type kind string

const (
	kindScheduledJob kind = "ScheduledJob"
	kindJob          kind = "Job"
	kindPod          kind = "Pod"
	kindConfigMap    kind = "ConfigMap"
)

type objectKey struct {
	kind      kind
	namespace string
	name      string
}

func (k objectKey) String() string { return fmt.Sprintf("%s %s/%s", k.kind, k.namespace, k.name) }

// change is one write in the log: the object as written, or its deletion.
type change struct {
	rv      int64
	key     objectKey
	object  client.Object // nil: deleted
	at      time.Time
	by      string
	deleted client.Object // the object a deletion removed
}

// api is the fake API server.
type api struct {
	now     func() time.Time
	objects map[objectKey]client.Object
	// log is every write in order; byKind indexes it per kind, as each
	// informer watches one kind.
	log    []change
	byKind map[kind][]int
	rv     int64
	uids   int
	// down says the API server does not answer; ambiguous makes a write
	// during an outage take effect though it is answered with an error,
	// as a kube-apiserver killed after etcd persisted it answers.
	down      bool
	ambiguous bool
	// requests counts the requests each actor sent.
	requests map[string]int
}

func newAPI(now func() time.Time) *api {
	return &api{now: now, objects: map[objectKey]client.Object{}, byKind: map[kind][]int{}, requests: map[string]int{}}
}

func kindOf(obj any) kind {
	switch obj := obj.(type) {
	case *v1alpha1.ScheduledJob, *v1alpha1.ScheduledJobList:
		return kindScheduledJob
	case *batchv1.Job, *batchv1.JobList:
		return kindJob
	case *corev1.Pod, *corev1.PodList:
		return kindPod
	case *corev1.ConfigMap, *corev1.ConfigMapList:
		return kindConfigMap
	case *metav1.PartialObjectMetadataList:
		if obj.GroupVersionKind().Kind == "ScheduledJobList" {
			return kindScheduledJob
		}
	}
	panic(fmt.Sprintf("the fake API server does not serve %T", obj))
}

func keyOf(obj client.Object) objectKey {
	return objectKey{kind: kindOf(obj), namespace: obj.GetNamespace(), name: obj.GetName()}
}

var groupResources = map[kind]schema.GroupResource{
	kindScheduledJob: {Group: v1alpha1.GroupVersion.Group, Resource: "scheduledjobs"},
	kindJob:          {Group: "batch", Resource: "jobs"},
	kindPod:          {Resource: "pods"},
	kindConfigMap:    {Resource: "configmaps"},
}

func notFound(key objectKey) error {
	return apierrors.NewNotFound(groupResources[key.kind], key.name)
}

func conflict(key objectKey, why string) error {
	return apierrors.NewConflict(groupResources[key.kind], key.name, fmt.Errorf("%s", why))
}

// errUnavailable is what a request gets while the API server is down.
func errUnavailable() error {
	return apierrors.NewServiceUnavailable("the API server is down")
}

// record appends a write to the log.
func (a *api) record(key objectKey, obj client.Object, by string, deleted client.Object) {
	a.byKind[key.kind] = append(a.byKind[key.kind], len(a.log))
	a.log = append(a.log, change{rv: a.rv, key: key, object: obj, at: a.now(), by: by, deleted: deleted})
}

func (a *api) nextRV() string {
	a.rv++
	return strconv.FormatInt(a.rv, 10)
}

// write stores obj with a new resourceVersion.
func (a *api) write(key objectKey, obj client.Object, by string) {
	obj.SetResourceVersion(a.nextRV())
	a.objects[key] = obj
	a.record(key, copyObject(obj), by, nil)
}

// outage returns the error a request gets while the API server is down,
// and whether a write should still take effect (the error is then the
// answer of a server that persisted it and failed before answering).
func (a *api) outage() (applyAnyway bool, err error) {
	if !a.down {
		return false, nil
	}
	if a.ambiguous {
		return true, apierrors.NewInternalError(fmt.Errorf("etcd persisted the write, the answer was lost"))
	}
	return false, errUnavailable()
}

func (a *api) get(by string, key objectKey, into client.Object) error {
	a.requests[by]++
	if _, err := a.outage(); err != nil {
		return err
	}
	obj, ok := a.objects[key]
	if !ok {
		return notFound(key)
	}
	copyInto(obj, into)
	return nil
}

func (a *api) list(by string, k kind, opts *client.ListOptions) []client.Object {
	a.requests[by]++
	return matching(a.objects, k, opts)
}

// create stores a new object. CreationTimestamp has whole seconds, as the
// API server's.
func (a *api) create(by string, obj client.Object) error {
	a.requests[by]++
	key := keyOf(obj)
	applyAnyway, err := a.outage()
	if err != nil && !applyAnyway {
		return err
	}
	if _, ok := a.objects[key]; ok {
		if err != nil {
			return err
		}
		return apierrors.NewAlreadyExists(groupResources[key.kind], key.name)
	}
	a.uids++
	stored := copyObject(obj)
	stored.SetUID(types.UID(fmt.Sprintf("uid-%d", a.uids)))
	stored.SetCreationTimestamp(metav1.NewTime(a.now().Truncate(time.Second)))
	if sj, ok := stored.(*v1alpha1.ScheduledJob); ok {
		sj.Generation = 1
	}
	a.write(key, stored, by)
	copyInto(stored, obj)
	return err
}

// delete removes an object, checking the preconditions.
func (a *api) delete(by string, obj client.Object, opts *client.DeleteOptions) error {
	a.requests[by]++
	key := keyOf(obj)
	applyAnyway, err := a.outage()
	if err != nil && !applyAnyway {
		return err
	}
	current, ok := a.objects[key]
	if !ok {
		return notFound(key)
	}
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != current.GetUID() {
			return conflict(key, "the UID in the precondition does not match")
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != current.GetResourceVersion() {
			return conflict(key, "the resourceVersion in the precondition does not match")
		}
	}
	delete(a.objects, key)
	a.rv++
	a.record(key, nil, by, copyObject(current))
	return err
}

// patch applies a JSON merge patch or a JSON patch to the object or to its
// status. A merge patch that carries metadata.resourceVersion is applied only
// to that version, as client.MergeFromWithOptimisticLock asks.
func (a *api) patch(by string, obj client.Object, patch client.Patch, status bool) error {
	a.requests[by]++
	key := keyOf(obj)
	applyAnyway, err := a.outage()
	if err != nil && !applyAnyway {
		return err
	}
	current, ok := a.objects[key]
	if !ok {
		return notFound(key)
	}
	data, dataErr := patch.Data(obj)
	if dataErr != nil {
		return dataErr
	}
	original, _ := json.Marshal(current)
	var patched []byte
	switch patch.Type() {
	case types.MergePatchType:
		var body struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(data, &body)
		if rv := body.Metadata.ResourceVersion; rv != "" && rv != current.GetResourceVersion() {
			return conflict(key, "the object has been modified")
		}
		patched, dataErr = jsonpatch.MergePatch(original, data)
	case types.JSONPatchType:
		var ops jsonpatch.Patch
		if ops, dataErr = jsonpatch.DecodePatch(data); dataErr == nil {
			patched, dataErr = ops.Apply(original)
		}
		if dataErr != nil {
			return apierrors.NewInvalid(schema.GroupKind{Group: groupResources[key.kind].Group, Kind: string(key.kind)}, key.name, nil)
		}
	default:
		return fmt.Errorf("the fake API server does not take %s patches", patch.Type())
	}
	if dataErr != nil {
		return apierrors.NewBadRequest(dataErr.Error())
	}
	updated := copyObject(current)
	fresh := newObject(key.kind)
	if err := json.Unmarshal(patched, fresh); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	// The status subresource changes status alone; the main resource
	// everything else.
	if status {
		setStatus(updated, fresh)
	} else {
		setStatus(fresh, updated)
		updated = fresh
		updated.SetResourceVersion(current.GetResourceVersion())
		updated.SetUID(current.GetUID())
		updated.SetCreationTimestamp(current.GetCreationTimestamp())
	}
	a.write(key, updated, by)
	copyInto(updated, obj)
	return err
}

// update replaces an object (the spread ledgers' ConfigMaps), checking its
// resourceVersion.
func (a *api) update(by string, obj client.Object) error {
	a.requests[by]++
	key := keyOf(obj)
	applyAnyway, err := a.outage()
	if err != nil && !applyAnyway {
		return err
	}
	current, ok := a.objects[key]
	if !ok {
		return notFound(key)
	}
	if obj.GetResourceVersion() != current.GetResourceVersion() {
		return conflict(key, "the object has been modified")
	}
	a.write(key, copyObject(obj), by)
	copyInto(a.objects[key], obj)
	return err
}

// mutate changes a stored object as another controller would (the Job
// controller finishing a Job), outside any actor's requests.
func (a *api) mutate(key objectKey, by string, change func(client.Object)) {
	updated := copyObject(a.objects[key])
	change(updated)
	a.write(key, updated, by)
}

func newObject(k kind) client.Object {
	switch k {
	case kindScheduledJob:
		return &v1alpha1.ScheduledJob{}
	case kindJob:
		return &batchv1.Job{}
	case kindPod:
		return &corev1.Pod{}
	case kindConfigMap:
		return &corev1.ConfigMap{}
	}
	panic(k)
}

func copyObject(obj client.Object) client.Object { return obj.DeepCopyObject().(client.Object) }

// copyInto copies from into to, two objects of one kind.
func copyInto(from, to client.Object) {
	switch t := to.(type) {
	case *v1alpha1.ScheduledJob:
		from.(*v1alpha1.ScheduledJob).DeepCopyInto(t)
	case *batchv1.Job:
		from.(*batchv1.Job).DeepCopyInto(t)
	case *corev1.Pod:
		from.(*corev1.Pod).DeepCopyInto(t)
	case *corev1.ConfigMap:
		from.(*corev1.ConfigMap).DeepCopyInto(t)
	default:
		panic(fmt.Sprintf("copyInto %T", to))
	}
}

// setStatus copies from's status into to.
func setStatus(to, from client.Object) {
	switch t := to.(type) {
	case *v1alpha1.ScheduledJob:
		t.Status = *from.(*v1alpha1.ScheduledJob).Status.DeepCopy()
	case *batchv1.Job:
		t.Status = *from.(*batchv1.Job).Status.DeepCopy()
	}
}

// matching returns the objects of kind k that opts select, in key order.
func matching(objects map[objectKey]client.Object, k kind, opts *client.ListOptions) []client.Object {
	var out []client.Object
	for key, obj := range objects {
		if key.kind != k || (opts.Namespace != "" && key.namespace != opts.Namespace) {
			continue
		}
		if opts.LabelSelector != nil && !opts.LabelSelector.Matches(labelSet(obj.GetLabels())) {
			continue
		}
		if opts.FieldSelector != nil && !opts.FieldSelector.Matches(fieldSet(obj)) {
			continue
		}
		out = append(out, obj)
	}
	sortObjects(out)
	return out
}

// sortedKeys are the keys of the stored objects of kind k, in order.
func (a *api) sortedKeys(k kind) []objectKey {
	// Sorted by "namespace/name", each formed once: the order of
	// objectKey.String among keys of one kind, which every seed's
	// replay depends on, without a Sprintf per comparison (a fifth of
	// an exploration's time).
	type named struct {
		key  objectKey
		name string
	}
	var found []named
	for key := range a.objects {
		if key.kind == k {
			found = append(found, named{key, key.namespace + "/" + key.name})
		}
	}
	slices.SortFunc(found, func(x, y named) int { return strings.Compare(x.name, y.name) })
	keys := make([]objectKey, len(found))
	for i, f := range found {
		keys[i] = f.key
	}
	return keys
}
