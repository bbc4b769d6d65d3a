package schedulecmd

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
	"github.com/ontime-dev/ontime/pkg/cron"
)

// scheduleFlags are the flags that say how to read a schedule.
type scheduleFlags struct {
	timeZone  string
	dstPolicy string
	hashKey   string
	strict    bool
}

func (f *scheduleFlags) register(cmd *cobra.Command, withStrict bool) {
	cmd.Flags().StringVar(&f.timeZone, "time-zone", "UTC", "IANA time zone the schedule runs in, such as Europe/Amsterdam")
	cmd.Flags().StringVar(&f.dstPolicy, "dst-policy", "cron", `what a daylight-saving change does to the schedule: "cron" (ISC cron) or "kubernetes" (robfig/cron, skip or run twice)`)
	cmd.Flags().StringVar(&f.hashKey, "hash-key", "", "key that seeds H fields, such as namespace/name")
	if withStrict {
		cmd.Flags().BoolVar(&f.strict, "strict", false, "accept only what a batch/v1 CronJob accepts (no H, L, W, # or 7)")
	}
}

// parse parses the schedule (the arguments joined by spaces, so that an
// unquoted "@every 1h" works) with the flags.
func (f *scheduleFlags) parse(args []string) (*cron.Spec, error) {
	loc, err := cron.LoadLocation(f.timeZone)
	switch {
	case errors.Is(err, cron.ErrLocalZone):
		return nil, cli.BadInput("--time-zone %q: %v", f.timeZone, err)
	case err != nil || f.timeZone == "":
		return nil, cli.BadInput("--time-zone %q: not an IANA time zone name (such as UTC or Europe/Amsterdam)", f.timeZone)
	}
	policy, err := cron.ParseDSTPolicy(f.dstPolicy)
	if err != nil {
		return nil, cli.BadInput("--dst-policy %q: must be cron or kubernetes", f.dstPolicy)
	}
	parser := cron.Parser{Dialect: cron.Extended, Location: loc, DSTPolicy: policy, HashKey: f.hashKey}
	if f.strict {
		parser.Dialect = cron.Kubernetes
	}
	spec, err := parser.Parse(strings.Join(args, " "))
	if err != nil {
		return nil, cli.Input(err)
	}
	return spec, nil
}

func parseFrom(from string) (time.Time, error) {
	if from == "" {
		return cli.Now(), nil
	}
	t, err := time.Parse(time.RFC3339, from)
	if err != nil {
		return time.Time{}, cli.BadInput("--from %q: not an RFC 3339 time such as 2026-03-08T01:30:00-05:00", from)
	}
	return t, nil
}

// activations returns up to n activations after from; fewer only if the
// schedule stops (possible only under the kubernetes DST policy).
func activations(spec *cron.Spec, from time.Time, n int) []time.Time {
	var times []time.Time
	for at := from; len(times) < n; {
		if at = spec.Next(at); at.IsZero() {
			break
		}
		times = append(times, at)
	}
	return times
}

// printTimes prints runs, and with a lead when warm-up for each begins.
func printTimes(w io.Writer, times []time.Time, lead time.Duration, output *cli.Output) error {
	type run struct {
		Run    string `json:"run"`
		WarmUp string `json:"warmUp"`
	}
	formatted := make([]string, len(times))
	runs := make([]run, len(times))
	for i, t := range times {
		formatted[i] = t.Format(time.RFC3339)
		runs[i] = run{Run: formatted[i], WarmUp: warmUpStart(t, lead).Format(time.RFC3339)}
	}
	switch {
	case output.Structured() && lead > 0:
		return output.Write(w, runs)
	case output.Structured():
		return output.Write(w, formatted)
	}
	for _, r := range runs {
		if lead > 0 {
			fmt.Fprintf(w, "%s  warm-up from %s\n", r.Run, r.WarmUp)
		} else {
			fmt.Fprintln(w, r.Run)
		}
	}
	return nil
}

// warmUpStart is when warm-up for a run at t begins: lead earlier in
// elapsed time, shown in the run's zone.
func warmUpStart(t time.Time, lead time.Duration) time.Time {
	return t.Add(-lead).In(t.Location())
}

// checkLead accepts no lead, or one spec.warmUp.lead accepts.
func checkLead(lead time.Duration) error {
	if lead != 0 && (lead < v1alpha1.MinWarmUpLead || lead > v1alpha1.MaxWarmUpLead) {
		return cli.BadInput("--lead %s: must be from %s to %s", lead, v1alpha1.MinWarmUpLead, v1alpha1.MaxWarmUpLead)
	}
	return nil
}
