package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sampleValues = `# Values.
# -- How many.
replicas: 2
# -- Where.
# @enum: soft, hard
placement: soft
# -- Any labels.
nodeSelector: {}
# -- Requests and limits.
# @any
resources:
  requests:
    cpu: 100m
# -- A level.
# @types: string, integer
level: info
webhook:
  # -- On or off.
  enabled: true
`

// TestSchemaAndTable: nested objects take only their keys, {} and @any
// objects any; enums and several types are kept; every leaf is a row with
// its description, and the tags are not shown.
func TestSchemaAndTable(t *testing.T) {
	chart := t.TempDir()
	writeChart(t, chart, sampleValues)
	if err := run(chart); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(chart, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		AdditionalProperties bool                       `json:"additionalProperties"`
		Properties           map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"replicas":     `"type":"integer"`,
		"placement":    `"enum":["soft","hard"]`,
		"nodeSelector": `"type":"object"`,
		"resources":    `"type":"object"`,
		"level":        `"type":["string","integer"]`,
		"webhook":      `"additionalProperties":false`,
	}
	for key, fragment := range want {
		var compact bytes.Buffer
		if err := json.Compact(&compact, schema.Properties[key]); err != nil || !strings.Contains(compact.String(), fragment) {
			t.Errorf("%s: %s, want %s", key, compact.String(), fragment)
		}
	}
	if schema.AdditionalProperties || strings.Contains(string(schema.Properties["resources"]), "additionalProperties") {
		t.Errorf("the top level takes unknown keys, or resources does not: %s", data)
	}
	readme, err := os.ReadFile(filepath.Join(chart, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"Requires Kubernetes 1.34 or later", "| `replicas` | int | `2` | How many. |", "| `webhook.enabled` | bool | `true` | On or off. |", "| `resources` | object | `{requests: {cpu: 100m}}` | Requests and limits. |"} {
		if !strings.Contains(string(readme), row) {
			t.Errorf("README lacks %q:\n%s", row, readme)
		}
	}
	if strings.Contains(string(readme), "@enum") || strings.Contains(string(readme), "@any") {
		t.Errorf("tags shown in the README:\n%s", readme)
	}
}

// writeChart writes a chart's values.yaml and a Chart.yaml that needs
// Kubernetes 1.34.
func writeChart(t *testing.T, dir, values string) {
	t.Helper()
	files := map[string]string{"values.yaml": values, "Chart.yaml": "name: sample\nkubeVersion: \">=1.34.0-0\"\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
