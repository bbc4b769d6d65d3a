package clustercmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/internal/scheme"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// TestBackfillCommand: --dry-run lists every time with what the backfill
// would do, creating nothing; without it the Backfill is created with the
// flags' values, once (the same command again finds it).
func TestBackfillCommand(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	cli.Now = func() time.Time { return at }
	defer func() { cli.Now = time.Now }()
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "nightly"},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "0 6 * * *", TimeZone: ptr.To("Europe/Amsterdam")}}
	failed := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: sj.JobName(time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)),
		Labels: map[string]string{v1alpha1.ScheduledJobLabel: "nightly"}},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(sj, failed).Build()
	key := types.NamespacedName{Namespace: "reports", Name: "nightly"}
	ctx := context.Background()

	var out bytes.Buffer
	opts := backfillOptions{from: "2026-11-20", to: "2026-11-22T05:00:00Z", maxActive: 2, redo: "failed", dryRun: true}
	if err := runBackfill(ctx, &out, c, key, opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2026-11-20T06:00:00+01:00  nightly-29919180  run\n",
		"2026-11-21T06:00:00+01:00  nightly-29920620  rerun\n",
		"3 times: 2 to run, 1 to rerun, 0 to skip (dry run: nothing created)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, out.String())
		}
	}
	var list v1alpha1.BackfillList
	if err := c.List(ctx, &list); err != nil || len(list.Items) != 0 {
		t.Fatalf("the dry run created %d Backfills (%v)", len(list.Items), err)
	}

	opts.dryRun = false
	out.Reset()
	if err := runBackfill(ctx, &out, c, key, opts); err != nil {
		t.Fatal(err)
	}
	checkCreatedBackfill(t, c, out.String())
	if err := runBackfill(ctx, &out, c, key, opts); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("the same command again: %v", err)
	}
	if err := runBackfill(ctx, &out, c, types.NamespacedName{Namespace: "reports", Name: "absent"}, opts); err == nil || !strings.Contains(err.Error(), "scheduledjob absent not found") {
		t.Errorf("absent: %v", err)
	}
}

// checkCreatedBackfill: the one Backfill has the flags' values, and the
// command said so.
func checkCreatedBackfill(t *testing.T, c client.Client, out string) {
	t.Helper()
	var list v1alpha1.BackfillList
	if err := c.List(context.Background(), &list); err != nil || len(list.Items) != 1 {
		t.Fatalf("%d Backfills (%v)", len(list.Items), err)
	}
	bf := list.Items[0]
	if bf.Spec.ScheduledJobName != "nightly" || !bf.Spec.From.Equal(&metav1.Time{Time: time.Date(2026, 11, 19, 23, 0, 0, 0, time.UTC)}) ||
		bf.Spec.MaxActive != 2 || bf.Spec.Redo != v1alpha1.RedoFailed || !strings.HasPrefix(bf.Name, "nightly-backfill-") {
		t.Errorf("backfill %+v", bf)
	}
	if !strings.Contains(out, "backfill.ontime.dev/"+bf.Name+" created: nightly from 2026-11-19T23:00:00Z to 2026-11-22T05:00:00Z, at most 2 at once, redo Failed") {
		t.Errorf("output %q", out)
	}
}

// TestBackfillCommandRefusesBadFlags: each bad flag is refused naming the
// flag and its value, before anything is created.
func TestBackfillCommandRefusesBadFlags(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	sj := &v1alpha1.ScheduledJob{ObjectMeta: metav1.ObjectMeta{Namespace: "reports", Name: "nightly"},
		Spec: v1alpha1.ScheduledJobSpec{Schedule: "0 6 * * *", TimeZone: ptr.To("Europe/Amsterdam")}}
	for _, bad := range []struct {
		opts backfillOptions
		want string
	}{
		{backfillOptions{from: "yesterday", to: "2026-11-22", maxActive: 1, redo: "missing"}, `--from "yesterday": write RFC 3339`},
		{backfillOptions{from: "2026-11-20", to: "2026-12-24", maxActive: 1, redo: "missing"}, `--to: Invalid value: "2026-12-23T23:00:00Z": is in the future`},
		{backfillOptions{from: "2026-11-22", to: "2026-11-20", maxActive: 1, redo: "missing"}, `is before spec.from`},
		{backfillOptions{from: "2026-11-20", to: "2026-11-22", maxActive: 0, redo: "missing"}, `--max-active 0: from 1 to 100`},
		{backfillOptions{from: "2026-11-20", to: "2026-11-22", maxActive: 1, redo: "some"}, `--redo "some": write missing, failed or all`},
	} {
		if _, err := buildBackfill(sj, bad.opts, at); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want %q", bad.opts, err, bad.want)
		}
	}
}
