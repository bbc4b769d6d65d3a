package jobcontrol

import (
	"context"
	"errors"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/scheme"
)

func owner(name string) *v1alpha1.ScheduledJob {
	return &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid")}}
}

func runJob(name string, controller *v1alpha1.ScheduledJob) *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if controller != nil {
		job.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(controller, v1alpha1.GroupVersion.WithKind("ScheduledJob"))}
	}
	return job
}

// TestCreate: what a create of a run's Job came to, AlreadyExists read
// live to say whose the Job is.
func TestCreate(t *testing.T) {
	mine, theirs := owner("mine"), owner("theirs")
	refused := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "run-1", errors.New("exceeded quota"))
	tests := []struct {
		name     string
		existing []client.Object
		// gone makes the live read after AlreadyExists find nothing: the
		// Job was deleted between the create and the read.
		gone      bool
		noOwner   bool
		refuse    error
		want      Creation
		wantJob   bool
		wantError bool
	}{
		{name: "a new Job", want: Created, wantJob: true},
		{name: "the owner's Job already there: the run was started before", existing: []client.Object{runJob("run-1", mine)}, want: AlreadyCreated, wantJob: true},
		{name: "another owner's Job of that name", existing: []client.Object{runJob("run-1", theirs)}, want: NameTaken, wantJob: true},
		{name: "a Job of that name without a controller", existing: []client.Object{runJob("run-1", nil)}, want: NameTaken, wantJob: true},
		{name: "there, then gone before the read", existing: []client.Object{runJob("run-1", mine)}, gone: true, want: Unknown},
		{name: "refused", refuse: refused, want: Refused, wantError: true},
		{name: "no owner asked: a Job already there is not read", existing: []client.Object{runJob("run-1", theirs)}, noOwner: true, want: Exists},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tc.existing...).Build()
			writer := client.Client(api)
			if tc.refuse != nil {
				writer = interceptor.NewClient(api, interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return tc.refuse }})
			}
			var live client.Reader = api
			if tc.gone {
				live = interceptor.NewClient(api, interceptor.Funcs{Get: func(_ context.Context, _ client.WithWatch, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
					return apierrors.NewNotFound(schema.GroupResource{Group: "batch", Resource: "jobs"}, key.Name)
				}})
			}
			var asked metav1.Object = mine
			if tc.noOwner {
				asked = nil
				live = nil // not read
			}
			got, job, err := NewWriter(writer, live).Create(context.Background(), asked, runJob("run-1", mine))
			if got != tc.want {
				t.Errorf("creation %d, want %d", got, tc.want)
			}
			if (job != nil) != tc.wantJob {
				t.Errorf("job %v, want one: %v", job, tc.wantJob)
			}
			if (err != nil) != tc.wantError {
				t.Errorf("error %v, want one: %v", err, tc.wantError)
			}
		})
	}
}

// TestDelete: a Job already gone, or whose name is now another Job's,
// is gone, not an error; the delete names the UID it read.
func TestDelete(t *testing.T) {
	mine := owner("mine")
	read := runJob("run-1", mine)
	read.UID = "read-uid"
	remade := read.DeepCopy()
	remade.UID = "another-uid"
	tests := []struct {
		name     string
		existing []client.Object
		deny     error
		wantGone bool
		wantErr  bool
	}{
		{name: "deleted", existing: []client.Object{read.DeepCopy()}},
		{name: "already gone", wantGone: true},
		{name: "the name is another Job's now (the UID precondition)", existing: []client.Object{remade}, wantGone: true},
		{name: "refused", existing: []client.Object{read.DeepCopy()}, deny: apierrors.NewServiceUnavailable("down"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tc.existing...).Build()
			writer := interceptor.NewClient(api, interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				if tc.deny != nil {
					return tc.deny
				}
				o := (&client.DeleteOptions{}).ApplyOptions(opts)
				if o.Preconditions == nil || o.Preconditions.UID == nil || *o.Preconditions.UID != read.UID {
					t.Errorf("delete without the UID it read as precondition: %+v", o.Preconditions)
				}
				var current batchv1.Job
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &current); err == nil && current.UID != *o.Preconditions.UID {
					// What the API server answers a UID precondition
					// that fails; the fake client does not check it.
					return apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, obj.GetName(), errors.New("the UID in the precondition does not match"))
				}
				return c.Delete(ctx, obj, opts...)
			}})
			gone, err := NewWriter(writer, api).Delete(context.Background(), read.DeepCopy())
			if gone != tc.wantGone || (err != nil) != tc.wantErr {
				t.Errorf("gone %v, error %v; want gone %v, an error %v", gone, err, tc.wantGone, tc.wantErr)
			}
		})
	}
}
