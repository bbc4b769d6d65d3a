// Command chartdoc writes the chart's values.schema.json from values.yaml,
// so that a mistyped or unknown value fails at install (helm install --set
// replica=3 is refused instead of ignored); helm-docs writes the README's
// values table from the same comments (make generate runs both, make
// verify-generated fails when either is stale). helm-docs writes no
// schema, hence this tool.
//
// A value's description is its "# --" comment (helm-docs' convention).
// Tags go above that comment, where helm-docs does not read them: "# @enum:
// a, b" restricts the value to those, "# @types: string, integer" allows
// several types. An object given as {} in values.yaml (nodeSelector,
// affinity), or tagged "# @any", takes any keys; every other object takes
// only the keys values.yaml has.
//
//	go run ./hack/chartdoc charts/ontime
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: chartdoc CHART_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "chartdoc: %v\n", err)
		os.Exit(1)
	}
}

func run(chart string) error {
	data, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		return err
	}
	root, err := yaml.Parse(string(data))
	if err != nil {
		return err
	}
	schema := objectSchema(root.YNode())
	schema["$schema"] = "https://json-schema.org/draft-07/schema#"
	encoded, err := json.MarshalIndent(schema, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(chart, "values.schema.json"), append(encoded, '\n'), 0o644)
}

var (
	enumLine  = regexp.MustCompile(`(?m)^\s*@enum:\s*(.+)$`)
	typesLine = regexp.MustCompile(`(?m)^\s*@types:\s*(.+)$`)
	anyLine   = regexp.MustCompile(`(?m)^\s*@any\s*$`)
)

// tags are what a value's comment says of its schema.
type tags struct {
	enum, types []string
	any         bool
}

// objectSchema is the schema of a mapping node.
func objectSchema(node *yaml.Node) map[string]any {
	properties := map[string]any{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, child := node.Content[i], node.Content[i+1]
		description, t := comment(key.HeadComment)
		properties[key.Value] = schemaOf(child, description, t)
	}
	return map[string]any{"type": "object", "properties": properties, "additionalProperties": false}
}

// schemaOf is one value's schema.
func schemaOf(node *yaml.Node, description string, t tags) map[string]any {
	if node.Kind == yaml.MappingNode && len(node.Content) > 0 && !t.any {
		s := objectSchema(node)
		if description != "" {
			s["description"] = description
		}
		return s
	}
	schema := leafSchema(node)
	if description != "" {
		schema["description"] = description
	}
	if len(t.enum) > 0 {
		schema["enum"] = t.enum
	}
	if len(t.types) > 0 {
		schema["type"] = t.types
	}
	return schema
}

// leafSchema is the type of a scalar, a list or a free-form object.
func leafSchema(node *yaml.Node) map[string]any {
	switch {
	case node.Kind == yaml.MappingNode:
		return map[string]any{"type": "object"}
	case node.Kind == yaml.SequenceNode:
		return map[string]any{"type": "array"}
	case node.Tag == "!!int":
		return map[string]any{"type": "integer"}
	case node.Tag == "!!bool":
		return map[string]any{"type": "boolean"}
	}
	return map[string]any{"type": "string"}
}

// comment is the "# --" description of a value and its tags.
func comment(head string) (string, tags) {
	var lines []string
	documented := false
	var t tags
	for _, line := range strings.Split(head, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
		switch {
		case enumLine.MatchString(line):
			t.enum = list(enumLine, line)
			continue
		case typesLine.MatchString(line):
			t.types = list(typesLine, line)
			continue
		case anyLine.MatchString(line):
			t.any = true
			continue
		}
		if strings.HasPrefix(line, "-- ") || line == "--" {
			documented, lines = true, nil
			line = strings.TrimSpace(strings.TrimPrefix(line, "--"))
		}
		if documented {
			lines = append(lines, line)
		}
	}
	return strings.Join(strings.Fields(strings.Join(lines, "\n")), " "), t
}

// list is the comma-separated list a tag line holds.
func list(tag *regexp.Regexp, text string) []string {
	m := tag.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	var out []string
	for _, v := range strings.Split(m[1], ",") {
		out = append(out, strings.TrimSpace(v))
	}
	return out
}
