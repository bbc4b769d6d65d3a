package jobcontrol

import (
	"context"
	"errors"
	"testing"
	"time"

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

// waiting is a group's waiting run: a suspended Job.
func waiting(name string, uid types.UID, annotations map[string]string) *batchv1.Job {
	suspend := true
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid, Annotations: annotations}, Spec: batchv1.JobSpec{Suspend: &suspend}}
}

// TestRelease: a group's admitted run is unsuspended only while its Job
// is the one admitted, still waiting and not marked missed.
func TestRelease(t *testing.T) {
	admitted := waiting("run-1", "uid-1", nil)
	running := waiting("run-1", "uid-1", nil)
	running.Spec.Suspend = nil
	tests := []struct {
		name     string
		existing *batchv1.Job
		want     bool
	}{
		{name: "waiting: released", existing: admitted, want: true},
		{name: "gone", existing: nil},
		{name: "another run's Job of that name now", existing: waiting("run-1", "uid-2", nil)},
		{name: "already running", existing: running},
		{name: "marked missed: never runs", existing: waiting("run-1", "uid-1", map[string]string{v1alpha1.MissedAnnotation: "2026-12-07T10:00:00Z"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			builder := fake.NewClientBuilder().WithScheme(scheme.New())
			if tc.existing != nil {
				builder = builder.WithObjects(tc.existing.DeepCopy())
			}
			api := builder.Build()
			released, err := NewWriter(api, api).Release(context.Background(), admitted.DeepCopy())
			if err != nil || released != tc.want {
				t.Fatalf("released %v, error %v; want %v", released, err, tc.want)
			}
			if tc.existing == nil {
				return
			}
			var after batchv1.Job
			if err := api.Get(context.Background(), client.ObjectKeyFromObject(admitted), &after); err != nil {
				t.Fatal(err)
			}
			if unsuspended := after.Spec.Suspend != nil && !*after.Spec.Suspend; unsuspended != tc.want {
				t.Errorf("the Job's suspend is %v after the release; want unsuspended %v", after.Spec.Suspend, tc.want)
			}
		})
	}
}

// TestMarkMissed: a waiting run is marked missed only while it is the
// version that showed it waiting.
func TestMarkMissed(t *testing.T) {
	now := mustTime(t, "2026-12-07T10:00:00Z")
	for _, tc := range []struct {
		name string
		// changed makes the Job change (a release) after it was read.
		changed, gone bool
		want          bool
	}{
		{name: "still waiting: marked", want: true},
		{name: "released since: a conflict, left alone", changed: true},
		{name: "deleted since", gone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(waiting("run-1", "uid-1", nil)).Build()
			var read batchv1.Job
			if err := api.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "run-1"}, &read); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.changed:
				released := read.DeepCopy()
				released.Spec.Suspend = nil
				if err := api.Update(context.Background(), released); err != nil {
					t.Fatal(err)
				}
			case tc.gone:
				if err := api.Delete(context.Background(), read.DeepCopy()); err != nil {
					t.Fatal(err)
				}
			}
			marked, err := NewWriter(api, api).MarkMissed(context.Background(), &read, now)
			if err != nil || (marked != nil) != tc.want {
				t.Fatalf("marked %v, error %v; want marked %v", marked != nil, err, tc.want)
			}
			if tc.want && marked.Annotations[v1alpha1.MissedAnnotation] != "2026-12-07T10:00:00Z" {
				t.Errorf("annotations %v, want %s at %s", marked.Annotations, v1alpha1.MissedAnnotation, now.Format(time.RFC3339))
			}
		})
	}
}

func mustTime(t *testing.T, value string) time.Time {
	at, err := time.Parse(time.RFC3339, value)
	if err != nil {
		t.Fatal(err)
	}
	return at
}
