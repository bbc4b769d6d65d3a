package convert

import (
	"os"
	"testing"

	"github.com/ontime-dev/ontime/internal/testenv"
)

// FuzzFile converts any file both ways: nothing panics; what it writes
// converts again without an error and, converted the same way again,
// converts nothing (the second run of `ontime convert` over its own
// output changes no object).
func FuzzFile(f *testing.F) {
	for i, file := range testenv.SampleFiles(f) {
		content, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(content, i%2 == 0)
	}
	f.Add([]byte("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: a}\nspec: {schedule: '0 * * * *', jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}}}\n"), true)
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: ontime.dev/v1alpha1\n  kind: ScheduledJob\n  metadata: {name: b}\n  spec: {schedule: 'H * * * *', runAt: '2026-01-01T00:00:00Z'}\n"), false)
	f.Add([]byte("kind: CronJob\n---\n- a\n---\n{"), true)
	f.Fuzz(func(t *testing.T, content []byte, toScheduledJob bool) {
		to := ToCronJob
		if toScheduledJob {
			to = ToScheduledJob
		}
		out, _, err := File("fuzz.yaml", content, to)
		if err != nil {
			return
		}
		again, converted, err := File("fuzz.yaml", out, to)
		if err != nil {
			t.Fatalf("its own output does not convert again: %v\ninput:\n%s\noutput:\n%s", err, content, out)
		}
		if len(converted) != 0 {
			t.Fatalf("converting its own output converted %d more objects (%v)\ninput:\n%s\noutput:\n%s\nagain:\n%s", len(converted), converted, content, out, again)
		}
	})
}
