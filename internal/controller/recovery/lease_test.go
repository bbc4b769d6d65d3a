package recovery

import (
	"context"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	ontimescheme "github.com/ontime-dev/ontime/internal/scheme"
)

var leaseKey = types.NamespacedName{Namespace: "ontime-system", Name: "ontime-controller.ontime.dev"}

// lease is the leader election Lease held by "a", renewed at renewed, of a
// 15 s duration.
func lease(renewed time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: leaseKey.Namespace, Name: leaseKey.Name},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &metav1.MicroTime{Time: renewed}}}
}

// TestStaleLease: a Lease is stale once its holder has not renewed it for
// longer than its duration plus MaxClockSkew; a released one (no holder)
// has no holder to wait for either way.
func TestStaleLease(t *testing.T) {
	now := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	released := lease(now.Add(-time.Hour))
	released.Spec.HolderIdentity = ptr.To("")
	for _, tc := range []struct {
		name  string
		lease *coordinationv1.Lease
		stale bool
	}{
		{"renewed just now", lease(now.Add(-time.Second)), false},
		{"past its duration, within the skew bound", lease(now.Add(-19 * time.Second)), false},
		{"past its duration and the skew bound", lease(now.Add(-20*time.Second - time.Millisecond)), true},
		{"five minutes old", lease(now.Add(-5 * time.Minute)), true},
		{"renewed in the future (a clock ahead)", lease(now.Add(3 * time.Second)), false},
		{"released", released, false},
		{"never renewed", &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To[int32](15)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, stale := StaleLease(tc.lease, now); stale != tc.stale {
				t.Errorf("stale %v, want %v", stale, tc.stale)
			}
		})
	}
}

// TestReleaseStaleLease: a stale Lease loses its holder, so that client-go
// takes it at once; a live one is left alone; one renewed between the
// read and the write (a conflict) is left to its holder; a missing one is
// nothing to release.
func TestReleaseStaleLease(t *testing.T) {
	now := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	renewedMeanwhile := interceptor.Funcs{Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
		return apierrors.NewConflict(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, leaseKey.Name, errors.New("the object has been modified"))
	}}
	for _, tc := range []struct {
		name       string
		lease      *coordinationv1.Lease
		funcs      interceptor.Funcs
		released   bool
		wantHolder string
	}{
		{name: "down for five minutes", lease: lease(now.Add(-5 * time.Minute)), released: true, wantHolder: ""},
		{name: "renewed a second ago", lease: lease(now.Add(-time.Second)), wantHolder: "a"},
		{name: "renewed between the read and the write", lease: lease(now.Add(-5 * time.Minute)), funcs: renewedMeanwhile, wantHolder: "a"},
		{name: "no Lease yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(ontimescheme.New()).WithInterceptorFuncs(tc.funcs)
			if tc.lease != nil {
				b = b.WithObjects(tc.lease)
			}
			c := b.Build()
			released, _, err := ReleaseStaleLease(context.Background(), c, leaseKey, now)
			if err != nil || released != tc.released {
				t.Fatalf("released %v, %v; want %v", released, err, tc.released)
			}
			if tc.lease == nil {
				return
			}
			got := &coordinationv1.Lease{}
			if err := c.Get(context.Background(), leaseKey, got); err != nil {
				t.Fatal(err)
			}
			if holder := ptr.Deref(got.Spec.HolderIdentity, ""); holder != tc.wantHolder {
				t.Errorf("holder %q, want %q", holder, tc.wantHolder)
			}
		})
	}
}
