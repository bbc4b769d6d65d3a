package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

func TestBound(t *testing.T) {
	int32Field := func(minimum *float64) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "integer", Format: "int32", Minimum: minimum}
	}
	root := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"successfulJobsHistoryLimit": int32Field(ptr.To(0.0)),
			"jobTemplate": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"parallelism":           int32Field(nil),
					"activeDeadlineSeconds": {Type: "integer", Format: "int64"},
					"ports": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"port": int32Field(nil)}}}},
				}},
			}},
		}},
	}}
	bound(&root, "")
	spec := root.Properties["spec"]
	job := spec.Properties["jobTemplate"].Properties["spec"]
	for _, tc := range []struct {
		field    string
		got      apiextensionsv1.JSONSchemaProps
		min, max *float64
	}{
		{"a marker's minimum is kept", spec.Properties["successfulJobsHistoryLimit"], ptr.To(0.0), ptr.To(float64(math.MaxInt32))},
		{"a non-negative Job field", job.Properties["parallelism"], ptr.To(0.0), ptr.To(float64(math.MaxInt32))},
		{"a non-negative int64", job.Properties["activeDeadlineSeconds"], ptr.To(0.0), nil},
		{"an int32 in a list", job.Properties["ports"].Items.Schema.Properties["port"], ptr.To(float64(math.MinInt32)), ptr.To(float64(math.MaxInt32))},
	} {
		if !equal(tc.got.Minimum, tc.min) || !equal(tc.got.Maximum, tc.max) {
			t.Errorf("%s: minimum %v, maximum %v; want %v, %v", tc.field, show(tc.got.Minimum), show(tc.got.Maximum), show(tc.min), show(tc.max))
		}
	}
}

// TestShippedCRDsAreBounded: every int32 of the CRDs make generate wrote
// has its range, and, in those with a Job template, the Job's non-negative
// fields start at 0.
func TestShippedCRDsAreBounded(t *testing.T) {
	paths, err := filepath.Glob("../../config/crd/bases/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs found (%v)", err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatal(err)
		}
		for _, version := range crd.Spec.Versions {
			checkBounded(t, filepath.Base(path)+" "+version.Name, version.Schema.OpenAPIV3Schema)
		}
	}
}

// checkBounded checks the bounds of one version's schema.
func checkBounded(t *testing.T, crd string, schema *apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	ints, nonNegative := 0, map[string]bool{}
	visit(schema, "", func(field string, s *apiextensionsv1.JSONSchemaProps) {
		if s.Type == "integer" && s.Format == "int32" {
			ints++
			if s.Minimum == nil || s.Maximum == nil || *s.Maximum > math.MaxInt32 || *s.Minimum < math.MinInt32 {
				t.Errorf("%s: %s is an int32 with minimum %v, maximum %v", crd, field, show(s.Minimum), show(s.Maximum))
			}
		}
		if s.Minimum != nil && *s.Minimum == 0 {
			nonNegative[field] = true
		}
	})
	_, hasJobTemplate := schema.Properties["spec"].Properties["jobTemplate"]
	for _, field := range nonNegativeFields {
		if hasJobTemplate && !nonNegative[field] {
			t.Errorf("%s: %s has no minimum 0", crd, field)
		}
	}
	t.Logf("%s: %d int32 fields bounded", crd, ints)
}

func visit(s *apiextensionsv1.JSONSchemaProps, path string, f func(string, *apiextensionsv1.JSONSchemaProps)) {
	f(path, s)
	for name, property := range s.Properties {
		visit(&property, joinPath(path, name), f)
	}
	if s.Items != nil && s.Items.Schema != nil {
		visit(s.Items.Schema, path+"[]", f)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		visit(s.AdditionalProperties.Schema, path+"{}", f)
	}
}

func equal(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(f *float64) any {
	if f == nil {
		return "none"
	}
	return *f
}
