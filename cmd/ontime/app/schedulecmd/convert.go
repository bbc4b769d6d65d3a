package schedulecmd

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/internal/convert"
)

// NewConvertCommand is ontime convert: CronJob manifests to ScheduledJobs and back.
func NewConvertCommand() *cobra.Command {
	var files []string
	var to string
	var inPlace bool
	var output cli.Output
	cmd := &cobra.Command{
		Use:   "convert -f FILE|DIR|-",
		Short: "Rewrite CronJob manifests as ScheduledJobs, or back",
		Long: `Rewrite the batch/v1 CronJobs of YAML manifests as ontime ScheduledJobs
(--to scheduledjob, the default), or ScheduledJobs as CronJobs (--to cronjob).
Only the type changes: a ScheduledJob's spec is a superset of a CronJob's, so
schedule, time zone, deadlines, policies, history limits and the Job template
carry over, as do comments, key order and every other document. A CronJob's
warmup.ontime.dev/lead annotation becomes spec.warmUp (Placeholder) and back.

Back to a CronJob works only for what a CronJob can say: a schedule without
H, L, W or # (pin H with ontime spread -f first), no runAt, no spread, no
suspendAfterFailures or maxActive, and Placeholder warm-up with only a lead. Anything else
is an error naming the field, and no file is written.

Without --in-place the converted manifests go to stdout; with it the files
are rewritten and a report is printed (-o table, json or yaml). -f - reads
the manifests from stdin, such as kubectl get -o yaml prints them: what the
API server set (resourceVersion, uid, managedFields, creationTimestamp,
generation, status) is dropped, so the result can be created.`,
		Example: `  ontime convert -f cronjobs/nightly.yaml | kubectl apply --server-side -f -
  kubectl get sj -A -o yaml | ontime convert -f - --to cronjob | kubectl create -f -
  ontime convert -f deploy/cronjobs/ --in-place
  ontime convert -f deploy/scheduledjobs/ --to cronjob --in-place -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			direction := convert.Direction(to)
			if direction != convert.ToScheduledJob && direction != convert.ToCronJob {
				return cli.BadInput("--to %q: must be scheduledjob or cronjob", to)
			}
			if err := output.Check(); err != nil {
				return err
			}
			if slices.Contains(files, "-") {
				if len(files) > 1 || inPlace {
					return cli.BadInput("-f -: stdin alone, without --in-place")
				}
				return convertStdin(cmd.InOrStdin(), cmd.OutOrStdout(), direction)
			}
			return convertFiles(cmd.OutOrStdout(), files, direction, inPlace, &output)
		},
	}
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "YAML files or directories")
	cmd.Flags().StringVar(&to, "to", string(convert.ToScheduledJob), "what to convert to: scheduledjob or cronjob")
	cmd.Flags().BoolVarP(&inPlace, "in-place", "i", false, "rewrite the files instead of printing the manifests")
	output.Bind(cmd, "table", "json", "yaml")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// convertStdin converts the manifests on stdin and prints them.
func convertStdin(in io.Reader, out io.Writer, to convert.Direction) error {
	content, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	converted, _, err := convert.File("stdin", content, to)
	if err != nil {
		return cli.Input(err)
	}
	_, err = out.Write(converted)
	return err
}

// convertedObject is one line of the report.
type convertedObject struct {
	File string `json:"file"`
	convert.Converted
}

// convertFiles converts every file first and writes only if all convert.
func convertFiles(out io.Writer, paths []string, to convert.Direction, inPlace bool, output *cli.Output) error {
	files, err := readManifests(paths)
	if err != nil {
		return err
	}
	var report []convertedObject
	var manifests bytes.Buffer
	changed := make([]bool, len(files))
	for i, f := range files {
		content, converted, err := convert.File(f.Path, f.Content, to)
		if err != nil {
			return cli.Input(err)
		}
		files[i].Content, changed[i] = content, len(converted) > 0
		for _, c := range converted {
			report = append(report, convertedObject{File: f.Path, Converted: c})
		}
		if !inPlace && len(converted) > 0 {
			if manifests.Len() > 0 {
				manifests.WriteString("---\n")
			}
			manifests.Write(content)
		}
	}
	if !inPlace {
		_, err := out.Write(manifests.Bytes())
		return err
	}
	for i, f := range files {
		if !changed[i] {
			continue
		}
		if err := writeInPlace(f); err != nil {
			return err
		}
	}
	if output.Structured() {
		return output.Write(out, report)
	}
	table := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(table, "FILE\tNAME\tFROM\tTO\tNOTE")
	for _, r := range report {
		fmt.Fprintf(table, "%s\t%s\t%s\t%s\t%s\n", r.File, r.Name, r.From, r.To, r.Note)
	}
	return table.Flush()
}
