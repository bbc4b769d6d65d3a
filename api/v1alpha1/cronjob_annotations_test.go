package v1alpha1

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCronJobAnnotationErrors: the rules the CronJob webhook refuses by
// and the runtime reads with, one error per broken annotation, each
// naming its key and value.
func TestCronJobAnnotationErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		annotations map[string]string
		want        []string // substrings, one per error
	}{
		"none":                         {},
		"a group":                      {annotations: map[string]string{GroupLabel: "db", GroupPriorityAnnotation: "-1000"}},
		"a cluster group":              {annotations: map[string]string{ClusterGroupLabel: "licenses", GroupPriorityAnnotation: "1000"}},
		"warm-up":                      {annotations: map[string]string{WarmUpLeadAnnotation: "10m", WarmUpStrategyAnnotation: "CapacityBuffer"}},
		"a strategy alone is not read": {annotations: map[string]string{WarmUpStrategyAnnotation: "EarlyStart"}},
		"a priority alone is not read": {annotations: map[string]string{GroupPriorityAnnotation: "high"}},
		"a priority that is a word": {annotations: map[string]string{GroupLabel: "db", GroupPriorityAnnotation: "high"},
			want: []string{`metadata.annotations[ontime.dev/concurrency-priority]: Invalid value: "high": must be a whole number from -1000 to 1000`}},
		"a priority out of range": {annotations: map[string]string{ClusterGroupLabel: "licenses", GroupPriorityAnnotation: "1001"},
			want: []string{`Invalid value: "1001"`}},
		"both groups": {annotations: map[string]string{GroupLabel: "db", ClusterGroupLabel: "licenses"},
			want: []string{`metadata.annotations[ontime.dev/cluster-concurrency-group]: Invalid value: "licenses": both ontime.dev/concurrency-group and ontime.dev/cluster-concurrency-group are set`}},
		"an empty group name": {annotations: map[string]string{GroupLabel: ""},
			want: []string{`metadata.annotations[ontime.dev/concurrency-group]: Invalid value: ""`}},
		"a group name that is not a DNS label": {annotations: map[string]string{ClusterGroupLabel: "Licenses"},
			want: []string{`metadata.annotations[ontime.dev/cluster-concurrency-group]: Invalid value: "Licenses": a lowercase RFC 1123 label`}},
		"a lead that is not a duration": {annotations: map[string]string{WarmUpLeadAnnotation: "ten minutes"},
			want: []string{`metadata.annotations[warmup.ontime.dev/lead]: Invalid value: "ten minutes": not a duration such as 10m`}},
		"a group and a lead, both wrong": {annotations: map[string]string{GroupLabel: "db", GroupPriorityAnnotation: "high", WarmUpLeadAnnotation: "Auto"},
			want: []string{"concurrency-priority", `warmup.ontime.dev/lead]: Invalid value: "Auto"`}},
	} {
		t.Run(name, func(t *testing.T) {
			cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "export", Annotations: tc.annotations}, Spec: batchv1.CronJobSpec{Schedule: "0 * * * *"}}
			errs := CronJobAnnotationErrors(cj)
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %v, want %d: %q", errs, len(tc.want), tc.want)
			}
			for i, want := range tc.want {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %q, want it to say %q", errs[i].Error(), want)
				}
			}
		})
	}
}

// TestCronJobAnnotationsListsEveryRule: every annotation a rule reads is in
// CronJobAnnotations, the list the webhook's matchConditions select by: a
// CronJob with only that annotation set wrong has an error.
func TestCronJobAnnotationsListsEveryRule(t *testing.T) {
	wrong := map[string]map[string]string{
		GroupLabel:               {GroupLabel: "Bad"},
		ClusterGroupLabel:        {ClusterGroupLabel: "Bad"},
		GroupPriorityAnnotation:  {GroupLabel: "db", GroupPriorityAnnotation: "high"},
		WarmUpLeadAnnotation:     {WarmUpLeadAnnotation: "soon"},
		WarmUpStrategyAnnotation: {WarmUpLeadAnnotation: "10m", WarmUpStrategyAnnotation: "EarlyStart"},
	}
	for _, key := range CronJobAnnotations {
		annotations, ok := wrong[key]
		if !ok {
			t.Errorf("%s is in CronJobAnnotations, but this test has no wrong value of it", key)
			continue
		}
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
		errs := CronJobAnnotationErrors(cj)
		if len(errs) != 1 || !strings.Contains(errs[0].Field, key) {
			t.Errorf("%v: errors %v, want one naming %s", annotations, errs, key)
		}
	}
	if len(wrong) != len(CronJobAnnotations) {
		t.Errorf("CronJobAnnotations %v, want the %d annotations of the rules", CronJobAnnotations, len(wrong))
	}
}
