package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/ontime-dev/ontime/test/framework"
)

// TestAPIReferenceNamesEveryKind: the API reference's header, written by
// hand above crd-ref-docs' output (hack/crd-ref-docs/header.md), has a
// row for each CRD with its short name and scope as the CRD says them,
// and crd-ref-docs documented each kind.
func TestAPIReferenceNamesEveryKind(t *testing.T) {
	root := framework.RepoRoot()
	reference, err := os.ReadFile(filepath.Join(root, "docs/reference/api.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(root, "config/crd/bases/*.yaml"))
	if err != nil || len(paths) < 4 {
		t.Fatalf("CRDs %v (%v): want the four kinds", paths, err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		names := crd.Spec.Names
		short := ""
		if len(names.ShortNames) > 0 {
			short = "`" + strings.Join(names.ShortNames, "`, `") + "`"
		}
		row := strings.TrimSpace(fmt.Sprintf("| %s | %s | %s |", names.Kind, short, crd.Spec.Scope))
		row = strings.ReplaceAll(row, "|  |", "| |")
		for _, want := range []string{row, "\n#### " + names.Kind + "\n"} {
			if !strings.Contains(string(reference), want) {
				t.Errorf("docs/reference/api.md lacks %q (from %s): edit hack/crd-ref-docs/header.md, then make generate", want, filepath.Base(path))
			}
		}
	}
}
