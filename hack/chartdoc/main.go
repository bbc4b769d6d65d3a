// Command chartdoc writes the chart's README (its values table) and its
// values.schema.json from values.yaml, so that every value is documented
// once, where it is set, and a mistyped or unknown value fails at install
// (helm install --set replica=3 is refused instead of ignored);
// `make generate` runs it and `make verify-generated` fails when either is
// stale.
//
// A value's description is its "# --" comment (helm-docs' convention);
// "# @enum: a, b" in that comment restricts it to those values, "# @types:
// string, integer" allows several types. An object given as {} in
// values.yaml (nodeSelector, affinity), or marked "# @any", takes any keys;
// every other object takes only the keys values.yaml has.
//
//	go run ./hack/chartdoc charts/ontime
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// value is one documented value: its path, default and description.
type value struct {
	path, kind, def, description string
}

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
	var values []value
	schema := objectSchema(root.YNode(), "", &values)
	schema["$schema"] = "https://json-schema.org/draft-07/schema#"
	encoded, err := json.MarshalIndent(schema, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(chart, "values.schema.json"), append(encoded, '\n'), 0o644); err != nil {
		return err
	}
	minimum, err := minimumKubernetes(filepath.Join(chart, "Chart.yaml"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(chart, "README.md"), readme(values, minimum), 0o644)
}

var kubeVersionMinimum = regexp.MustCompile(`(?m)^kubeVersion:\s*"?>=\s*(\d+\.\d+)`)

// minimumKubernetes is the release Chart.yaml's kubeVersion starts at
// (">=1.34.0-0": 1.34), which make compat writes from what it ran.
func minimumKubernetes(chartYAML string) (string, error) {
	data, err := os.ReadFile(chartYAML)
	if err != nil {
		return "", err
	}
	m := kubeVersionMinimum.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s: no kubeVersion of the form \">=1.N.0-0\"", chartYAML)
	}
	return string(m[1]), nil
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

// objectSchema is the schema of a mapping node, and appends the
// documented values under it.
func objectSchema(node *yaml.Node, prefix string, values *[]value) map[string]any {
	properties := map[string]any{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, child := node.Content[i], node.Content[i+1]
		path := strings.TrimPrefix(prefix+"."+key.Value, ".")
		description, t := comment(key.HeadComment)
		properties[key.Value] = schemaOf(child, path, description, t, values)
	}
	return map[string]any{"type": "object", "properties": properties, "additionalProperties": false}
}

// schemaOf is one value's schema; a leaf, an empty object or a list is
// also a row of the README's table.
func schemaOf(node *yaml.Node, path, description string, t tags, values *[]value) map[string]any {
	if node.Kind == yaml.MappingNode && len(node.Content) > 0 && !t.any {
		s := objectSchema(node, path, values)
		if description != "" {
			s["description"] = description
		}
		return s
	}
	kind, schema := leafSchema(node)
	if description != "" {
		schema["description"] = description
	}
	if len(t.enum) > 0 {
		schema["enum"] = t.enum
	}
	if len(t.types) > 0 {
		schema["type"] = t.types
	}
	*values = append(*values, value{path: path, kind: kind, def: defaultOf(node), description: description})
	return schema
}

// leafSchema is the type of a scalar, a list or a free-form object.
func leafSchema(node *yaml.Node) (string, map[string]any) {
	switch {
	case node.Kind == yaml.MappingNode:
		return "object", map[string]any{"type": "object"}
	case node.Kind == yaml.SequenceNode:
		return "list", map[string]any{"type": "array"}
	case node.Tag == "!!int":
		return "int", map[string]any{"type": "integer"}
	case node.Tag == "!!bool":
		return "bool", map[string]any{"type": "boolean"}
	}
	return "string", map[string]any{"type": "string"}
}

// defaultOf is a value's default as values.yaml writes it, on one line.
func defaultOf(node *yaml.Node) string {
	switch {
	case node.Kind == yaml.ScalarNode && node.Tag == "!!str":
		return strconv.Quote(node.Value)
	case node.Kind == yaml.ScalarNode:
		return node.Value
	}
	flow := *node
	setFlow(&flow)
	out, err := yaml.String(&flow)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// setFlow writes a node and its children in flow style: one line.
func setFlow(node *yaml.Node) {
	node.Style = yaml.FlowStyle
	node.HeadComment, node.LineComment, node.FootComment = "", "", ""
	for i, child := range node.Content {
		copied := *child
		setFlow(&copied)
		node.Content[i] = &copied
	}
}

// comment is the "# --" description of a value and its tags.
func comment(head string) (string, tags) {
	var lines []string
	documented := false
	for _, line := range strings.Split(head, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
		if strings.HasPrefix(line, "-- ") || line == "--" {
			documented, lines = true, nil
			line = strings.TrimSpace(strings.TrimPrefix(line, "--"))
		}
		if documented {
			lines = append(lines, line)
		}
	}
	text := strings.Join(lines, "\n")
	t := tags{enum: list(enumLine, text), types: list(typesLine, text), any: anyLine.MatchString(text)}
	for _, tag := range []*regexp.Regexp{enumLine, typesLine, anyLine} {
		text = tag.ReplaceAllString(text, "")
	}
	return strings.Join(strings.Fields(text), " "), t
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

func readme(values []value, minimumKubernetes string) []byte {
	var b bytes.Buffer
	b.WriteString("# The ontime chart\n\n")
	b.WriteString("<!-- Generated by make generate from values.yaml (hack/chartdoc); do not edit. -->\n\n")
	b.WriteString("ontime makes scheduled Kubernetes jobs start on time: a CronJob-compatible\n" +
		"ScheduledJob controller, warm-up of capacity before each run, spreading\n" +
		"of schedules, backfills and concurrency groups. The chart installs the\n" +
		"CRDs (ScheduledJob, Backfill, ConcurrencyGroup, ClusterConcurrencyGroup),\n" +
		"the controller (two replicas, leader election, a PodDisruptionBudget), its\n" +
		"admission webhooks (and the Job webhook of CronJobs that join a\n" +
		"concurrency group), RBAC, and the placeholder PriorityClass.\n\n")
	b.WriteString("```sh\nhelm install ontime oci://REGISTRY/charts/ontime --version VERSION --namespace ontime-system --create-namespace\nontime check\n```\n\n")
	b.WriteString("Requires Kubernetes " + minimumKubernetes + " or later (the `kubeVersion` of Chart.yaml; the releases tested: " +
		"[docs/install.md](../../docs/install.md#kubernetes-versions)). " +
		"Installing, upgrading and uninstalling: [docs/install.md](../../docs/install.md). " +
		"`values.schema.json` refuses a value the chart does not have or of the wrong type.\n\n")
	b.WriteString("## Values\n\n| Key | Type | Default | Description |\n|---|---|---|---|\n")
	for _, v := range values {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", v.path, v.kind, strings.ReplaceAll(v.def, "|", `\|`), strings.ReplaceAll(v.description, "|", `\|`))
	}
	return b.Bytes()
}
