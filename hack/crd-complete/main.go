// Command crd-complete finishes the CRDs controller-gen writes, where
// markers cannot reach (the embedded upstream types), and rewrites the CRD
// files given as arguments; `make generate` runs it.
//
//   - It fills in the descriptions controller-gen leaves empty on embedded
//     object metadata (jobTemplate.metadata and the pod and volume claim
//     templates inside it), so that `kubectl explain` documents every field.
//   - It bounds every integer field: each int32 to its range, so that the
//     API server refuses a value the controller could not decode (a
//     ScheduledJob stored with a history limit of 2147483648 once stopped
//     every informer that listed it), and the fields CronJob and Job
//     validate as non-negative to 0 and above, as the API server would
//     refuse the Job or CronJob made from them.
package main

import (
	"fmt"
	"math"
	"os"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
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
		if err := complete(path); err != nil {
			fmt.Fprintf(os.Stderr, "crd-complete: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

func complete(path string) error {
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
			bound(schema.OpenAPIV3Schema, "")
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

// nonNegativeFields are the fields, by path from the root, that CronJob's and
// Job's validation requires to be 0 or more (k8s.io/kubernetes
// pkg/apis/batch/validation: ValidateNonnegativeField on the CronJob spec
// and the Job spec). Ours (startingDeadlineSeconds, the history limits)
// have markers; these are inside the embedded Job template.
var nonNegativeFields = []string{
	"spec.jobTemplate.spec.parallelism",
	"spec.jobTemplate.spec.completions",
	"spec.jobTemplate.spec.activeDeadlineSeconds",
	"spec.jobTemplate.spec.backoffLimit",
	"spec.jobTemplate.spec.ttlSecondsAfterFinished",
	"spec.jobTemplate.spec.backoffLimitPerIndex",
	"spec.jobTemplate.spec.maxFailedIndexes",
}

// bound sets the bounds of every integer below schema, at path: an int32's
// range where no marker set a tighter one, and 0 as the minimum of the
// nonNegativeFields.
func bound(schema *apiextensionsv1.JSONSchemaProps, path string) {
	if schema.Type == "integer" {
		if schema.Format == "int32" {
			if schema.Minimum == nil {
				schema.Minimum = ptr.To(float64(math.MinInt32))
			}
			if schema.Maximum == nil {
				schema.Maximum = ptr.To(float64(math.MaxInt32))
			}
		}
		if slices.Contains(nonNegativeFields, path) && (schema.Minimum == nil || *schema.Minimum < 0) {
			schema.Minimum = ptr.To(0.0)
		}
	}
	for name, property := range schema.Properties {
		bound(&property, joinPath(path, name))
		schema.Properties[name] = property
	}
	if schema.Items != nil && schema.Items.Schema != nil {
		bound(schema.Items.Schema, path+"[]")
	}
	if schema.AdditionalProperties != nil && schema.AdditionalProperties.Schema != nil {
		bound(schema.AdditionalProperties.Schema, path+"{}")
	}
}

// joinPath is the path of a field named name in the object at path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func trimStatus(out []byte) []byte {
	const status = "status:\n  acceptedNames:\n    kind: \"\"\n    plural: \"\"\n  conditions: null\n  storedVersions: null\n"
	if n := len(out) - len(status); n > 0 && string(out[n:]) == status {
		return out[:n]
	}
	return out
}
