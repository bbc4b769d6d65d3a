package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

const (
	undecodableJSON = `{"apiVersion":"ontime.dev/v1alpha1","kind":"ScheduledJob","metadata":{"name":"broken","namespace":"team","uid":"u1","resourceVersion":"7"},` +
		`"spec":{"schedule":"* * * * *","successfulJobsHistoryLimit":2147483648},"status":{"activeCount":1}}`
	decodableJSON = `{"apiVersion":"ontime.dev/v1alpha1","kind":"ScheduledJob","metadata":{"name":"fine","namespace":"team"},` +
		`"spec":{"schedule":"*/5 * * * *","successfulJobsHistoryLimit":2}}`
)

// decode decodes data with the API machinery's own codec.
func decode(t *testing.T, data string) runtime.Object {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	obj, _, err := serializer.NewCodecFactory(s).UniversalDeserializer().Decode([]byte(data), nil, nil)
	if err != nil {
		t.Fatalf("decoding failed: %v", err)
	}
	return obj
}

// TestUndecodableScheduledJob: a ScheduledJob with a value out of its Go
// type's range decodes to its identity and DecodeError, nothing of its spec
// or status, and DecodeError is never written back.
func TestUndecodableScheduledJob(t *testing.T) {
	sj := decode(t, undecodableJSON).(*ScheduledJob)
	want := "spec.successfulJobsHistoryLimit: Invalid value: 2147483648: json: cannot unmarshal number 2147483648 into Go value of type int32"
	if sj.Name != "broken" || sj.Namespace != "team" || sj.UID != "u1" || sj.ResourceVersion != "7" || sj.DecodeError != want {
		t.Errorf("decoded %s/%s uid %s rv %s, DecodeError %q; want team/broken u1 7 and %q", sj.Namespace, sj.Name, sj.UID, sj.ResourceVersion, sj.DecodeError, want)
	}
	if sj.Spec.Schedule != "" || sj.Status.ActiveCount != 0 {
		t.Errorf("an undecodable object keeps a partly decoded spec or status: %+v %+v", sj.Spec, sj.Status)
	}
	out, _ := json.Marshal(sj)
	if strings.Contains(string(out), "DecodeError") || strings.Contains(string(out), "cannot unmarshal") {
		t.Errorf("marshaled %s", out)
	}
}

// TestDecodeErrorNamesItsField: a value whose parse error names no field
// (a time, a duration, deep in the Job template) is reported at its path
// with its value, as the API server reports a field it refuses.
func TestDecodeErrorNamesItsField(t *testing.T) {
	for name, tc := range map[string]struct{ spec, want string }{
		"runAt's offset out of range": {`{"runAt":"2026-01-01T00:00:00+25:00"}`,
			`spec.runAt: Invalid value: "2026-01-01T00:00:00+25:00": must be an RFC 3339 time such as 2026-01-01T00:00:00Z: time zone offset hour out of range`},
		"a deadline that is no duration": {`{"deadline":{"after":"soon"}}`,
			`spec.deadline.after: Invalid value: "soon": time: invalid duration "soon"`},
		"deep in the Job template": {`{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"lots"}}}]}}}}}`,
			`spec.jobTemplate.spec.template.spec.containers[0].resources.limits[cpu]: Invalid value: "lots": quantities must match the regular expression`},
	} {
		t.Run(name, func(t *testing.T) {
			var sj ScheduledJob
			if err := json.Unmarshal([]byte(`{"metadata":{"name":"broken"},"spec":`+tc.spec+`}`), &sj); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(sj.DecodeError, tc.want) {
				t.Errorf("DecodeError %q, want %q", sj.DecodeError, tc.want)
			}
		})
	}
}

// TestListWithAnUndecodableItem: one bad item does not fail the list (an
// informer's list would fail, and with it every ScheduledJob's runs).
func TestListWithAnUndecodableItem(t *testing.T) {
	list := decode(t, `{"apiVersion":"ontime.dev/v1alpha1","kind":"ScheduledJobList","metadata":{},"items":[`+undecodableJSON+`,`+decodableJSON+`]}`).(*ScheduledJobList)
	if len(list.Items) != 2 || list.Items[0].DecodeError == "" || list.Items[1].DecodeError != "" || list.Items[1].Spec.Schedule != "*/5 * * * *" ||
		*list.Items[1].Spec.SuccessfulJobsHistoryLimit != 2 {
		t.Errorf("list items %+v", list.Items)
	}
}

// TestBrokenJSONStillFails: what is not JSON, or has no name to report it
// by, fails as before.
func TestBrokenJSONStillFails(t *testing.T) {
	for _, broken := range []string{`{"metadata":{"name":"x"},"spec":`, `{"metadata":{},"spec":{"successfulJobsHistoryLimit":2147483648}}`} {
		if err := json.Unmarshal([]byte(broken), &ScheduledJob{}); err == nil {
			t.Errorf("%s decoded without an error", broken)
		}
	}
}
