package main

import (
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// outputFlag is -o on every command that prints a result: a format for
// people (text or table, the default) and json and yaml for programs, with
// the same fields in both (the JSON names).
type outputFlag struct {
	format  string
	formats []string
}

// bind adds -o with its formats, the first the default.
func (o *outputFlag) bind(cmd *cobra.Command, formats ...string) {
	o.formats = formats
	cmd.Flags().StringVarP(&o.format, "output", "o", formats[0], "output format: "+strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// check refuses a format the command does not print.
func (o *outputFlag) check() error {
	if !slices.Contains(o.formats, o.format) {
		return cli.BadInput("-o %q: must be %s", o.format, strings.Join(o.formats, ", "))
	}
	return nil
}

// structured reports whether the format is json or yaml.
func (o *outputFlag) structured() bool { return o.format == "json" || o.format == "yaml" }

// write prints value as json or yaml.
func (o *outputFlag) write(w io.Writer, value any) error {
	if o.format == "yaml" {
		return writeYAML(w, value)
	}
	return writeJSON(w, value)
}

func writeJSON(w io.Writer, value any) error {
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	return encoder.Encode(value)
}

func writeYAML(w io.Writer, value any) error {
	data, err := yaml.Marshal(value)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
