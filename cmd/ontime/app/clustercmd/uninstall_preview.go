package clustercmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// scheduledJobKind is the kind in the owner references of a ScheduledJob's
// Jobs and in its warm-up pods' owner-kind label.
const scheduledJobKind = "ScheduledJob"

// NewUninstallPreviewCommand is ontime uninstall-preview: what uninstalling would delete.
func NewUninstallPreviewCommand() *cobra.Command {
	var cluster cli.ClusterFlags
	var output cli.Output
	cmd := &cobra.Command{
		Use:   "uninstall-preview",
		Short: "List what deleting the ScheduledJob CRD would delete with it",
		Long: `List what deleting the ScheduledJob CRD (the last step of uninstalling
ontime) would delete with it: every ScheduledJob in the cluster and,
through their owner references, their Jobs (running ones kill their pods)
and their warm-up pods. It changes nothing. Before deleting the CRD,
suspend the ScheduledJobs and let the running Jobs finish, or convert the
ScheduledJobs to CronJobs (ontime convert --to cronjob); docs/install.md
gives the whole order.`,
		Example: `  ontime uninstall-preview
  ontime uninstall-preview -o json | jq '.runningJobs'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.Check(); err != nil {
				return err
			}
			c, _, err := cluster.Client()
			if err != nil {
				return err
			}
			preview, err := previewUninstall(cmd.Context(), c)
			if err != nil {
				return err
			}
			if output.Structured() {
				return output.Write(cmd.OutOrStdout(), preview)
			}
			return printUninstallPreview(cmd.OutOrStdout(), preview)
		},
	}
	cluster.Bind(cmd, "", "")
	output.Bind(cmd, "table", "json", "yaml")
	return cmd
}

// uninstallPreview is what deleting the ScheduledJob CRD deletes.
type uninstallPreview struct {
	ScheduledJobs []ownedObjects `json:"scheduledJobs"`
	// Jobs and RunningJobs are "namespace/name", over every ScheduledJob.
	Jobs        int      `json:"jobs"`
	RunningJobs []string `json:"runningJobs"`
	WarmUpPods  int      `json:"warmUpPods"`
}

// ownedObjects are one ScheduledJob's Jobs and warm-up pods.
type ownedObjects struct {
	Namespace   string   `json:"namespace"`
	Name        string   `json:"name"`
	Jobs        []string `json:"jobs"`
	RunningJobs []string `json:"runningJobs"`
	WarmUpPods  []string `json:"warmUpPods"`
}

// previewUninstall lists every ScheduledJob with the Jobs it controls (what
// the garbage collector deletes with it) and its warm-up pods.
func previewUninstall(ctx context.Context, c client.Client) (uninstallPreview, error) {
	var sjs v1alpha1.ScheduledJobList
	if err := c.List(ctx, &sjs); err != nil {
		return uninstallPreview{}, fmt.Errorf("listing ScheduledJobs: %w", err)
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs); err != nil {
		return uninstallPreview{}, fmt.Errorf("listing Jobs: %w", err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.MatchingLabels{v1alpha1.OwnerKindLabel: scheduledJobKind}); err != nil {
		return uninstallPreview{}, fmt.Errorf("listing warm-up pods: %w", err)
	}
	byOwner := map[types.UID]*ownedObjects{}
	preview := uninstallPreview{ScheduledJobs: make([]ownedObjects, len(sjs.Items)), RunningJobs: []string{}}
	for i, sj := range sjs.Items {
		preview.ScheduledJobs[i] = ownedObjects{Namespace: sj.Namespace, Name: sj.Name, Jobs: []string{}, RunningJobs: []string{}, WarmUpPods: []string{}}
		byOwner[sj.UID] = &preview.ScheduledJobs[i]
	}
	for _, job := range jobs.Items {
		owner := controllerScheduledJob(job.OwnerReferences, byOwner)
		if owner == nil {
			continue
		}
		owner.Jobs = append(owner.Jobs, job.Name)
		preview.Jobs++
		if _, finished := v1alpha1.JobFinished(&job); !finished {
			owner.RunningJobs = append(owner.RunningJobs, job.Name)
			preview.RunningJobs = append(preview.RunningJobs, job.Namespace+"/"+job.Name)
		}
	}
	for _, pod := range pods.Items {
		if owner := byOwner[types.UID(pod.Labels[v1alpha1.OwnerUIDLabel])]; owner != nil {
			owner.WarmUpPods = append(owner.WarmUpPods, pod.Name)
			preview.WarmUpPods++
		}
	}
	slices.Sort(preview.RunningJobs)
	return preview, nil
}

// controllerScheduledJob is the ScheduledJob among owners that controls an
// object, or nil.
func controllerScheduledJob(owners []metav1.OwnerReference, byOwner map[types.UID]*ownedObjects) *ownedObjects {
	for _, ref := range owners {
		if ref.Kind == scheduledJobKind && ref.Controller != nil && *ref.Controller {
			return byOwner[ref.UID]
		}
	}
	return nil
}

func printUninstallPreview(out io.Writer, preview uninstallPreview) error {
	if len(preview.ScheduledJobs) == 0 {
		_, err := fmt.Fprintln(out, "No ScheduledJob in the cluster: deleting the CRD deletes nothing else.")
		return err
	}
	fmt.Fprintf(out, "Deleting the ScheduledJob CRD deletes %d ScheduledJobs and, with them, %d Jobs (%d running: their pods are killed) and %d warm-up pods.\n\n",
		len(preview.ScheduledJobs), preview.Jobs, len(preview.RunningJobs), preview.WarmUpPods)
	table := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(table, "NAMESPACE\tSCHEDULEDJOB\tJOBS\tRUNNING\tWARM-UP PODS")
	for _, sj := range preview.ScheduledJobs {
		fmt.Fprintf(table, "%s\t%s\t%d\t%d\t%d\n", sj.Namespace, sj.Name, len(sj.Jobs), len(sj.RunningJobs), len(sj.WarmUpPods))
	}
	if err := table.Flush(); err != nil {
		return err
	}
	if len(preview.RunningJobs) > 0 {
		fmt.Fprintln(out, "\nRunning Jobs:")
		for _, job := range preview.RunningJobs {
			fmt.Fprintln(out, "  "+job)
		}
	}
	// The garbage collector cannot resolve the owner of a Job whose
	// owner's kind has gone: Jobs still there when the CRD goes stay.
	fmt.Fprintln(out, "\nTo remove them, delete the ScheduledJobs before the CRD (kubectl delete sj --all -A --cascade=foreground): Jobs still there when the CRD goes are left behind.")
	_, err := fmt.Fprintln(out, "To keep the workloads, suspend the ScheduledJobs and let running Jobs finish, or convert them first (ontime convert --to cronjob); docs/install.md#uninstalling.")
	return err
}
