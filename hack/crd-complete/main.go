// Command crd-docs fills in the descriptions controller-gen leaves empty on
// embedded object metadata (jobTemplate.metadata and the pod and volume
// claim templates inside it), so that `kubectl explain` documents every
// field. It rewrites the CRD files given as arguments; `make generate` runs
// it.
package main

import (
	"fmt"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// metadataDocs paraphrase metav1.ObjectMeta's field documentation.
var metadataDocs = map[string]string{
	"labels": "Map of string keys and values that can be used to organize and categorize (scope and select) objects. " +
		"More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels",
	"annotations": "Annotations is an unstructured key value map that external tools may set to store and retrieve arbitrary metadata. " +
		"More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations",
	"finalizers": "Must be empty before the object is deleted. Each entry identifies a component that will remove it when its cleanup is done.",
	"name":       "Ignored in templates: the controller that creates the object names it.",
	"namespace":  "Ignored in templates: objects are created in the namespace of the object that owns the template.",
}

func main() {
	for _, path := range os.Args[1:] {
		if err := document(path); err != nil {
			fmt.Fprintf(os.Stderr, "crd-docs: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

func document(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return err
	}
	for i := range crd.Spec.Versions {
		if schema := crd.Spec.Versions[i].Schema; schema != nil && schema.OpenAPIV3Schema != nil {
			walk(schema.OpenAPIV3Schema, false)
		}
	}
	out, err := yaml.Marshal(&crd)
	if err != nil {
		return err
	}
	// Keep controller-gen's leading document separator and drop the empty
	// status that marshaling adds.
	out = append([]byte("---\n"), trimStatus(out)...)
	return os.WriteFile(path, out, 0o644)
}

// walk documents the fields of every embedded "metadata" object below the
// root (the root's own metadata is documented by the API server).
func walk(schema *apiextensionsv1.JSONSchemaProps, nested bool) {
	for name, property := range schema.Properties {
		if name == "metadata" && nested {
			for field, doc := range metadataDocs {
				if p, ok := property.Properties[field]; ok && p.Description == "" {
					p.Description = doc
					property.Properties[field] = p
				}
			}
		}
		walk(&property, true)
		schema.Properties[name] = property
	}
	if schema.Items != nil && schema.Items.Schema != nil {
		walk(schema.Items.Schema, true)
	}
}

func trimStatus(out []byte) []byte {
	const status = "status:\n  acceptedNames:\n    kind: \"\"\n    plural: \"\"\n  conditions: null\n  storedVersions: null\n"
	if n := len(out) - len(status); n > 0 && string(out[n:]) == status {
		return out[:n]
	}
	return out
}
