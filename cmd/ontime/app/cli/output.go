package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"
)

// Output is -o on every command that prints a result: a format for
// people (text or table, the default), json and yaml for programs, with
// the same fields in both (the JSON names), and, wherever json is, kubectl's
// template forms over those fields: jsonpath=, jsonpath-file=,
// go-template=, go-template-file= (k8s.io/cli-runtime's printers) and
// custom-columns=. A result that is a list reads as a kubectl List does,
// its elements under .items.
type Output struct {
	Format  string
	formats []string
	// printer is the template's, once check has read -o.
	printer printers.ResourcePrinter
}

// templateForms are -o's forms that take an argument after "=".
var templateForms = []string{"jsonpath", "jsonpath-file", "go-template", "go-template-file", "custom-columns"}

// Bind adds -o with its formats, the first the default.
func (o *Output) Bind(cmd *cobra.Command, formats ...string) {
	o.formats = formats
	shown := slices.Clone(formats)
	if slices.Contains(formats, "json") {
		for _, form := range templateForms {
			shown = append(shown, form+"=…")
		}
	}
	cmd.Flags().StringVarP(&o.Format, "output", "o", formats[0], "output format: "+strings.Join(shown, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(shown, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
}

// Check refuses a format the command does not print, and a template that
// does not parse.
func (o *Output) Check() error {
	if slices.Contains(o.formats, o.Format) {
		return nil
	}
	form, argument, hasArgument := strings.Cut(o.Format, "=")
	if !slices.Contains(o.formats, "json") || !slices.Contains(templateForms, form) {
		return BadInput("-o %q: must be %s", o.Format, strings.Join(o.formats, ", ")+o.templateHint())
	}
	if !hasArgument || argument == "" {
		return BadInput("-o %q: %s needs its argument, as in -o %s=%s", o.Format, form, form, templateExample[form])
	}
	var err error
	if form == "custom-columns" {
		o.printer, err = newColumnsPrinter(argument)
	} else {
		flags := genericclioptions.NewKubeTemplatePrintFlags()
		flags.TemplateArgument = &argument
		flags.JSONPathPrintFlags.TemplateArgument, flags.GoTemplatePrintFlags.TemplateArgument = &argument, &argument
		o.printer, err = flags.ToPrinter(form)
	}
	if err != nil {
		return BadInput("-o %q: %v", o.Format, err)
	}
	return nil
}

// templateExample is an argument of each template form, for messages.
var templateExample = map[string]string{
	"jsonpath": "'{.items[0]}'", "jsonpath-file": "FILE", "go-template": "'{{range .items}}{{.}}{{end}}'",
	"go-template-file": "FILE", "custom-columns": "NAME:.name,TIME:.run",
}

func (o *Output) templateHint() string {
	if !slices.Contains(o.formats, "json") {
		return ""
	}
	return ", or " + strings.Join(templateForms, "=, ") + "="
}

// Structured reports whether the format is for programs: json, yaml or a
// template over them.
func (o *Output) Structured() bool {
	return o.Format == "json" || o.Format == "yaml" || o.printer != nil
}

// Write prints value as json, yaml or through the template.
func (o *Output) Write(w io.Writer, value any) error {
	switch {
	case o.printer != nil:
		object, err := asObject(value)
		if err != nil {
			return err
		}
		return o.printer.PrintObj(object, w)
	case o.Format == "yaml":
		return WriteYAML(w, value)
	}
	return WriteJSON(w, value)
}

// asObject is value's JSON as the printers read an object: a list becomes
// a List's items.
func asObject(value any) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	var content any
	if err := json.Unmarshal(data, &content); err != nil {
		return nil, err
	}
	if object, ok := content.(map[string]any); ok {
		return &unstructured.Unstructured{Object: object}, nil
	}
	return &unstructured.Unstructured{Object: map[string]any{"items": content}}, nil
}

// WriteJSON writes value as indented JSON (-o json).
func WriteJSON(w io.Writer, value any) error {
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(value)
}

// WriteYAML writes value as YAML, with its JSON field names (-o yaml).
func WriteYAML(w io.Writer, value any) error {
	data, err := yaml.Marshal(value)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// columnsPrinter is -o custom-columns=HEADER:JSONPATH,…: one row per
// element of a list (per result otherwise), each column the JSONPath's
// value, <none> where it finds none, as kubectl prints it. (kubectl's own
// printer is in k8s.io/kubectl, a module ontime does not otherwise need.)
type columnsPrinter struct {
	headers []string
	paths   []*jsonpath.JSONPath
}

func newColumnsPrinter(spec string) (*columnsPrinter, error) {
	p := &columnsPrinter{}
	for column := range strings.SplitSeq(spec, ",") {
		header, path, ok := strings.Cut(column, ":")
		if !ok || header == "" || path == "" {
			return nil, fmt.Errorf("column %q: want HEADER:JSONPATH, such as NAME:.name", column)
		}
		if !strings.HasPrefix(path, "{") {
			path = "{" + path + "}"
		}
		parsed := jsonpath.New(header).AllowMissingKeys(true)
		if err := parsed.Parse(path); err != nil {
			return nil, fmt.Errorf("column %s: %w", header, err)
		}
		p.headers, p.paths = append(p.headers, header), append(p.paths, parsed)
	}
	return p, nil
}

func (p *columnsPrinter) PrintObj(object runtime.Object, w io.Writer) error {
	content := object.(runtime.Unstructured).UnstructuredContent()
	rows := []any{content}
	if items, ok := content["items"].([]any); ok && len(content) == 1 {
		rows = items
	}
	table := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(table, strings.Join(p.headers, "\t"))
	for _, row := range rows {
		cells := make([]string, len(p.paths))
		for i, path := range p.paths {
			var cell bytes.Buffer
			results, err := path.FindResults(row)
			if err != nil {
				return fmt.Errorf("column %s: %w", p.headers[i], err)
			}
			for _, found := range results {
				if err := path.PrintResults(&cell, found); err != nil {
					return fmt.Errorf("column %s: %w", p.headers[i], err)
				}
			}
			if cells[i] = cell.String(); cells[i] == "" {
				cells[i] = "<none>"
			}
		}
		fmt.Fprintln(table, strings.Join(cells, "\t"))
	}
	return table.Flush()
}

// ListTable is a table in kubectl's form for a list across namespaces: a
// NAMESPACE column first under -A, and the wide columns last under -o
// wide. Cells are tab-separated.
type ListTable struct {
	*tabwriter.Writer
	allNamespaces, wide bool
}

// NewListTable starts a table, printing its header.
func NewListTable(w io.Writer, allNamespaces, wide bool, columns, wideColumns string) *ListTable {
	t := &ListTable{Writer: tabwriter.NewWriter(w, 0, 8, 3, ' ', 0), allNamespaces: allNamespaces, wide: wide}
	t.Row("NAMESPACE", columns, wideColumns)
	return t
}

// Row prints one row: its namespace under -A, its cells, its wide cells
// under -o wide.
func (t *ListTable) Row(namespace, cells, wideCells string) {
	if t.allNamespaces {
		fmt.Fprint(t, namespace+"\t")
	}
	fmt.Fprint(t, cells)
	if t.wide {
		fmt.Fprint(t, "\t"+wideCells)
	}
	fmt.Fprintln(t)
}
