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
# @enum: soft, hard
# -- Where.
placement: soft
# -- Any labels.
nodeSelector: {}
# @any
# -- Requests and limits.
resources:
  requests:
    cpu: 100m
# @types: string, integer
# -- A level.
level: info
webhook:
  # -- On or off.
  enabled: true
`

// TestSchema: nested objects take only their keys, {} and @any objects
// any; enums and several types are kept; descriptions are the "# --"
// comments, without the tags above them.
func TestSchema(t *testing.T) {
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
		"placement":    `"description":"Where.","enum":["soft","hard"]`,
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
	if strings.Contains(string(data), "@") {
		t.Errorf("a tag in the schema's descriptions: %s", data)
	}
}

// writeChart writes a chart's values.yaml and Chart.yaml.
func writeChart(t *testing.T, dir, values string) {
	t.Helper()
	files := map[string]string{"values.yaml": values, "Chart.yaml": "name: sample\nkubeVersion: \">=1.34.0-0\"\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
