package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestEveryFieldDocumented: the reference written from the shipped CRD has
// a row for every field of spec and status, with its description, except
// inside the upstream types it documents as a whole.
func TestEveryFieldDocumented(t *testing.T) {
	var paths []string
	for _, name := range []string{"ontime.dev_scheduledjobs.yaml", "ontime.dev_backfills.yaml"} {
		paths = append(paths, filepath.Join("..", "..", "config", "crd", "bases", name))
	}
	var out bytes.Buffer
	if err := write(&out, paths...); err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) { checkEveryField(t, out.String(), path) })
	}
}

// checkEveryField checks the page has a row for every field of the CRD
// at path.
func checkEveryField(t *testing.T, page, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	fields := 0
	var check func(path string, p apiextensionsv1.JSONSchemaProps)
	check = func(path string, p apiextensionsv1.JSONSchemaProps) {
		for name, child := range p.Properties {
			childPath := path + "." + name
			fields++
			row := "| `" + childPath + "` |"
			if !strings.Contains(page, row) {
				t.Errorf("no row for %s", childPath)
			} else if words := strings.Fields(child.Description); len(words) > 0 && !strings.Contains(page, row+" "+typeOf(child)+" | "+words[0]) &&
				!strings.Contains(page, row+" "+typeOf(child)+" | **Required.** "+words[0]) {
				t.Errorf("the row of %s lacks its type or description", childPath)
			}
			if _, ok := opaque[childPath]; ok {
				continue
			}
			check(childPath, child)
			if child.Items != nil && child.Items.Schema != nil {
				check(childPath+"[]", *child.Items.Schema)
			}
		}
	}
	schema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	check("spec", schema.Properties["spec"])
	check("status", schema.Properties["status"])
	if fields < 10 {
		t.Errorf("checked %d fields; the CRD has more", fields)
	}
}
