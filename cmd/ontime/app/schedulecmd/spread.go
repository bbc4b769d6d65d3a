package schedulecmd

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/internal/spread"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// spreadOptions are the flags of ontime spread.
type spreadOptions struct {
	every     time.Duration
	keys      []string
	strategy  string
	output    string
	files     []string
	all       bool
	namespace string
	// runDuration and limit: with -f, balance runs in flight, and check
	// the busiest minute against a concurrency group's limit.
	runDuration time.Duration
	limit       int
}

// NewSpreadCommand is ontime spread: hashed H fields for manifests, and a group's rebalance.
func NewSpreadCommand() *cobra.Command {
	var opts spreadOptions
	cmd := &cobra.Command{
		Use:   "spread (--every DURATION --keys K1,K2,... | -f FILE|DIR ...)",
		Short: "Spread many schedules over their period, so they do not all start at once",
		Long: `Spread many schedules over their period, so they do not all start at once.

With --every and --keys, give each key (a tenant id, a job name) its own
schedule that fires exactly every DURATION:

  balanced  spaces the keys evenly: no minute holds more than
            ceil(N·runs-per-hour/60) starts for N keys, however the keys are
            distributed. Adding a key may move the others.
  hash      places each key by its hash alone (Jenkins H): adding or removing
            keys never moves another.

DURATION divides an hour (1m … 60m) or is whole hours dividing a day (2h … 24h).

With -f, read the CronJobs and ScheduledJobs in YAML files (a directory is
read recursively), balance them as one group and write each schedule with
H back as a concrete schedule, in place, keeping comments: an H schedule is
placed in the minutes where the fewest of the others start, its key being
namespace/name. Schedules without H stay and count as load, so a second
run moves nothing and a new H manifest is placed among the others. --all
spreads every schedule: a fixed minute becomes H, an evenly stepped one
(*/15, 0,30) H/n. Any -o (table, json, yaml, json-map) prints the result without
writing; json-map is a flat JSON object {namespace/name: schedule} that
Terraform's external data source reads.

For jobs in one concurrency group, which caps the runs in flight at once,
say how long runs last: --run-duration (or a CronJob's ontime.dev/run-duration
annotation, a ScheduledJob's spec.spread.runDuration) counts each run in
every minute it is in flight, so the busiest minute holds the fewest runs
in flight rather than the fewest starts. --limit N then checks that
minute against the group's maxActive: above it, runs will wait, and ontime
spread exits 1 after printing (and writing) the result.

The operator balances ScheduledJobs itself (spec.spread); see
docs/spreading.md.`,
		Example: `  ontime spread --every 30m --keys 7,20,863,195,81,3
  ontime spread --every 30m --keys 7,20,863 -o json-map      # for Terraform's external data source
  ontime spread -f deploy/cronjobs/                          # rewrite H schedules in place
  ontime spread -f deploy/cronjobs/ --all -o table           # what spreading every schedule would do
  ontime spread -f deploy/db-jobs/ --run-duration 10m --limit 5  # balance runs in flight in a group of 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(opts.files) > 0 {
				return spreadFiles(cmd.OutOrStdout(), cmd.ErrOrStderr(), opts)
			}
			return spreadKeys(cmd.OutOrStdout(), opts)
		},
	}
	flags := cmd.Flags()
	flags.DurationVar(&opts.every, "every", 0, "interval each key runs at, such as 30m or 6h")
	flags.StringSliceVar(&opts.keys, "keys", nil, "comma-separated keys, one schedule each")
	flags.StringVar(&opts.strategy, "strategy", string(spread.Even), "with --keys: even (evenly spaced; formerly balanced) or hash")
	flags.StringVarP(&opts.output, "output", "o", "", "output format: table, json, yaml or json-map (with -f, default: write the files; any -o only prints)")
	flags.StringSliceVarP(&opts.files, "filename", "f", nil, "YAML files or directories of CronJobs and ScheduledJobs")
	flags.BoolVar(&opts.all, "all", false, "with -f: spread every schedule, not only those with H")
	flags.StringVarP(&opts.namespace, "namespace", "n", "default", "with -f: namespace of objects that name none")
	flags.DurationVar(&opts.runDuration, "run-duration", 0, "with -f: how long runs last, for objects that give none: balance runs in flight, not starts")
	flags.IntVar(&opts.limit, "limit", 0, "with -f: a concurrency group's maxActive; exit 1 if the busiest minute has more runs in flight")
	cmd.MarkFlagsRequiredTogether("every", "keys")
	cmd.MarkFlagsMutuallyExclusive("keys", "filename")
	cmd.MarkFlagsMutuallyExclusive("keys", "run-duration")
	cmd.MarkFlagsMutuallyExclusive("keys", "limit")
	cmd.MarkFlagsOneRequired("keys", "filename")
	cmd.AddCommand(newSpreadRebalanceCommand())
	return cmd
}

// spreadKeys prints one schedule per key.
func spreadKeys(out io.Writer, opts spreadOptions) error {
	output := opts.output
	if output == "" {
		output = "table"
	}
	if output != "table" && output != "json" && output != "yaml" && output != "json-map" {
		return cli.BadInput("-o %q: must be table, json, yaml or json-map", output)
	}
	assignments, err := spread.Schedules(opts.every, opts.keys, spread.Strategy(opts.strategy), v1alpha1.ScheduleParser)
	if err != nil {
		return cli.Input(err)
	}
	switch output {
	case "json":
		return cli.WriteJSON(out, assignments)
	case "yaml":
		return cli.WriteYAML(out, assignments)
	case "json-map":
		schedules := make(map[string]string, len(assignments))
		for _, a := range assignments {
			schedules[a.Key] = a.Schedule
		}
		return cli.WriteJSON(out, schedules)
	}
	table := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(table, "KEY\tSCHEDULE")
	for _, a := range assignments {
		fmt.Fprintf(table, "%s\t%s\n", a.Key, a.Schedule)
	}
	return table.Flush()
}

// spreadFiles balances the manifests in opts.files and writes them back,
// or prints the result.
func spreadFiles(out, stderr io.Writer, opts spreadOptions) error {
	switch opts.output {
	case "", "table", "json", "yaml", "json-map":
	default:
		return cli.BadInput("-o %q: with -f, must be table, json, yaml or json-map (or unset, to write the files)", opts.output)
	}
	files, err := readManifests(opts.files)
	if err != nil {
		return err
	}
	if opts.runDuration < 0 || opts.runDuration > 24*time.Hour {
		return cli.BadInput("--run-duration %s: must be above 0 and at most 24h", opts.runDuration)
	}
	if opts.limit < 0 {
		return cli.BadInput("--limit %d: must be a concurrency group's maxActive, at least 1", opts.limit)
	}
	result, err := spread.Manifests(files, spread.ManifestOptions{All: opts.all, Namespace: opts.namespace, Now: cli.Now(), Read: manifestSchedule, RunDuration: opts.runDuration})
	if err != nil {
		return cli.Input(err)
	}
	if err := printSpreadFiles(out, opts.output, result); err != nil {
		return err
	}
	return checkInFlight(stderr, result, opts)
}

// printSpreadFiles prints the result as -o asks, or writes the changed
// files and prints a table.
func printSpreadFiles(out io.Writer, output string, result *spread.ManifestResult) error {
	switch output {
	case "json":
		return cli.WriteJSON(out, result.Schedules)
	case "yaml":
		return cli.WriteYAML(out, result.Schedules)
	case "json-map":
		schedules := make(map[string]string, len(result.Schedules))
		for _, s := range result.Schedules {
			schedules[s.Key] = s.After
		}
		return cli.WriteJSON(out, schedules)
	case "":
		for _, f := range result.Changed {
			if err := writeInPlace(f); err != nil {
				return err
			}
		}
	}
	table := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(table, "KEY\tKIND\tFILE\tSCHEDULE\tWAS")
	for _, s := range result.Schedules {
		was := ""
		if s.After != s.Before {
			was = s.Before
		}
		fmt.Fprintf(table, "%s\t%s\t%s\t%s\t%s\n", s.Key, s.Kind, s.Path, s.After, was)
	}
	return table.Flush()
}

// checkInFlight reports, when runs are counted in flight or a limit is
// given, the busiest minute (on stderr, so that -o output stays clean),
// and fails if it holds more runs than the limit.
func checkInFlight(stderr io.Writer, result *spread.ManifestResult, opts spreadOptions) error {
	inFlight := opts.runDuration > 0 || slices.ContainsFunc(result.Schedules, func(s spread.ManifestSchedule) bool { return s.RunMinutes > 1 })
	if !inFlight && opts.limit == 0 {
		return nil
	}
	what := "starts"
	if inFlight {
		what = "runs in flight"
	}
	at := time.Duration(result.PeakMinute) * time.Minute
	fmt.Fprintf(stderr, "busiest minute: %d %s at %02d:%02d UTC (no placement can have fewer than %d)\n",
		result.Peak, what, int(at.Hours()), result.PeakMinute%60, result.Ideal)
	if opts.limit > 0 && result.Peak > int64(opts.limit) {
		return fmt.Errorf("the busiest minute has %d %s, above --limit %d: runs will wait in the concurrency group", result.Peak, what, opts.limit)
	}
	return nil
}

// readManifests reads the YAML files named, and those under the
// directories named.
func readManifests(paths []string) ([]spread.ManifestFile, error) {
	var files []spread.ManifestFile
	for _, root := range paths {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			isYAML := strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")
			if d.IsDir() || (path != root && !isYAML) {
				return nil
			}
			content, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files = append(files, spread.ManifestFile{Path: path, Content: content})
			return nil
		})
		if err != nil {
			return nil, cli.BadInput("-f %s: %v", root, err)
		}
	}
	if len(files) == 0 {
		return nil, cli.BadInput("-f %s: no .yaml or .yml files", strings.Join(paths, ","))
	}
	return files, nil
}

// writeInPlace replaces a file's content, keeping its permissions.
func writeInPlace(f spread.ManifestFile) error {
	info, err := os.Stat(f.Path)
	if err != nil {
		return err
	}
	return os.WriteFile(f.Path, f.Content, info.Mode().Perm())
}

// manifestSchedule reads a manifest's schedule as the controller reads its
// kind (v1alpha1.ScheduleParser), except that a CronJob's may hold H too:
// ontime spread replaces it with values the CronJob controller can read.
func manifestSchedule(kind, key, timeZone, dstPolicy string) (cron.Parser, error) {
	parser, err := v1alpha1.ScheduleParser(kind, key, timeZone, dstPolicy)
	parser.Dialect = cron.Extended
	return parser, err
}
