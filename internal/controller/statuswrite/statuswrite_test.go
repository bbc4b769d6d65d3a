package statuswrite

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/scheme"
)

// stored is a ScheduledJob as the API server has it, and a client that
// counts the status writes it receives.
func stored(t *testing.T) (client.Client, *v1alpha1.ScheduledJob, *int) {
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report"}, Spec: v1alpha1.ScheduledJobSpec{Schedule: "0 * * * *"}}
	writes := 0
	api := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(sj).WithStatusSubresource(sj).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	read := &v1alpha1.ScheduledJob{}
	if err := api.Get(context.Background(), client.ObjectKeyFromObject(sj), read); err != nil {
		t.Fatal(err)
	}
	return api, read, &writes
}

func TestWrite(t *testing.T) {
	ctx := context.Background()
	t.Run("an unchanged status is not written", func(t *testing.T) {
		api, read, writes := stored(t)
		written, err := Write(ctx, api, read, read.DeepCopy(), nil)
		if err != nil || written || *writes != 0 {
			t.Errorf("written %v, error %v, %d requests; want none", written, err, *writes)
		}
	})
	t.Run("a changed status is written, with the fields asked for always", func(t *testing.T) {
		api, read, _ := stored(t)
		after := read.DeepCopy()
		after.Status.EffectiveSchedule = "0 * * * *"
		var sent []byte
		recorder := interceptor.NewClient(api.(client.WithWatch), interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			sent, _ = patch.Data(obj)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}})
		if written, err := Write(ctx, recorder, read, after, map[string]any{"activeCount": after.Status.ActiveCount}); err != nil || !written {
			t.Fatalf("written %v, error %v", written, err)
		}
		for _, want := range []string{`"activeCount":0`, `"effectiveSchedule":"0 * * * *"`, `"resourceVersion":"` + read.ResourceVersion + `"`} {
			if !strings.Contains(string(sent), want) {
				t.Errorf("patch %s lacks %s", sent, want)
			}
		}
		var now unstructured.Unstructured
		now.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("ScheduledJob"))
		if err := api.Get(ctx, client.ObjectKeyFromObject(read), &now); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedString(now.Object, "status", "effectiveSchedule"); got != "0 * * * *" {
			t.Errorf("stored effectiveSchedule %q", got)
		}
	})
	t.Run("a status planned from an object changed since is refused", func(t *testing.T) {
		api, read, _ := stored(t)
		// Someone else writes first.
		theirs := read.DeepCopy()
		theirs.Status.EffectiveSchedule = "30 * * * *"
		if _, err := Write(ctx, api, read, theirs, nil); err != nil {
			t.Fatal(err)
		}
		mine := read.DeepCopy()
		mine.Status.EffectiveSchedule = "0 * * * *"
		if _, err := Write(ctx, api, read, mine, nil); !apierrors.IsConflict(err) {
			t.Errorf("error %v, want a Conflict", err)
		}
	})
}
