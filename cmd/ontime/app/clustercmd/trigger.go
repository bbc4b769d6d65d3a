package clustercmd

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// NewTriggerCommand is ontime trigger: a ScheduledJob's run, now.
func NewTriggerCommand() *cobra.Command {
	var cluster cli.ClusterFlags
	var output cli.Output
	var waitFor bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "trigger sj/NAME",
		Short: "Run a ScheduledJob now",
		Long: `Run a ScheduledJob now, as if its schedule had fired: the controller creates
the Job at once, obeys concurrencyPolicy (Forbid refuses while a Job is
active; Replace deletes the active Jobs first), lists it in status.active
and applies the history limits. It works while the ScheduledJob is
suspended. The request is the annotation ontime.dev/trigger, which the
controller removes when it has handled it; asking twice makes two runs,
handling one request twice (after a crash) makes one.`,
		Example: `  ontime trigger sj/nightly-report -n reports --wait
  kubectl logs -f $(ontime trigger sj/nightly-report -n reports --wait -o name)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, key, err := cluster.ScheduledJob(args[0])
			if err != nil {
				return err
			}
			if err := output.Check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			value, jobName, err := requestRun(ctx, c, key)
			if err != nil {
				return err
			}
			result := triggerResult{ScheduledJob: key.Name, Namespace: key.Namespace, Request: value, Job: jobName}
			out := cmd.OutOrStdout()
			// For people, each step as it happens; -o name prints the
			// Job alone, for kubectl (kubectl logs $(ontime trigger … -o name)).
			text := output.Format == "text"
			if text {
				fmt.Fprintf(out, "scheduledjob.ontime.dev/%s triggered (request %s); its job is %s\n", key.Name, value, jobName)
			}
			if waitFor {
				if err := waitForRun(ctx, c, key, value, jobName, timeout); err != nil {
					return err
				}
				result.Started = true
				if text {
					fmt.Fprintf(out, "job.batch/%s started\n", jobName)
				}
			}
			switch {
			case output.Structured():
				return output.Write(out, result)
			case output.Format == "name":
				fmt.Fprintf(out, "job.batch/%s\n", jobName)
			}
			return nil
		},
	}
	cluster.Bind(cmd, "", "namespace of the ScheduledJob (default: the kubeconfig context's)")
	cmd.ValidArgsFunction = cli.CompleteScheduledJobs(&cluster)
	cmd.Flags().BoolVar(&waitFor, "wait", false, "wait until the controller has started the Job or refused the run")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long --wait waits")
	output.Bind(cmd, "text", "name", "json", "yaml")
	return cmd
}

// triggerResult is what trigger prints with -o json or yaml.
type triggerResult struct {
	ScheduledJob string `json:"scheduledJob"`
	Namespace    string `json:"namespace"`
	// Request is the trigger annotation's value.
	Request string `json:"request"`
	// Job is the run's Job; Started, with --wait, that it exists.
	Job     string `json:"job"`
	Started bool   `json:"started,omitempty"`
}

// requestRun sets the trigger annotation to the request time.
func requestRun(ctx context.Context, c client.Client, key types.NamespacedName) (value, jobName string, err error) {
	sj := &v1alpha1.ScheduledJob{}
	if err := c.Get(ctx, key, sj); err != nil {
		if apierrors.IsNotFound(err) {
			return "", "", cli.BadInput("scheduledjob %s not found in namespace %s", key.Name, key.Namespace)
		}
		return "", "", err
	}
	if sj.DecodeError != "" {
		return "", "", fmt.Errorf("scheduledjob %s cannot be decoded, so the controller would not run it: %s; fix it with kubectl edit", key.Name, sj.DecodeError)
	}
	value = cli.Now().UTC().Format(time.RFC3339Nano)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{v1alpha1.TriggerAnnotation: value}}})
	if err := c.Patch(ctx, sj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return "", "", fmt.Errorf("requesting a run: %w", err)
	}
	return value, sj.TriggeredJobName(value), nil
}

// waitForRun waits until the controller has handled the request (removed
// or replaced the annotation), then reports whether the Job exists.
func waitForRun(ctx context.Context, c client.Client, key types.NamespacedName, value, jobName string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		sj := &v1alpha1.ScheduledJob{}
		if err := c.Get(ctx, key, sj); err != nil {
			return false, err
		}
		return sj.Annotations[v1alpha1.TriggerAnnotation] != value, nil
	})
	if err != nil {
		return fmt.Errorf("the controller did not handle the request within %v (is it running?): %w", timeout, err)
	}
	job := &batchv1.Job{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: jobName}, job); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the controller refused the run (concurrencyPolicy Forbid with a Job active?); see kubectl describe sj/%s -n %s", key.Name, key.Namespace)
		}
		return err
	}
	return nil
}
