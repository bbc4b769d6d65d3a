package clustercmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

// NewPauseCommand is ontime pause, the command of a pause container: it
// sleeps until SIGTERM or SIGINT.
func NewPauseCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "pause",
		Short: "Sleep until SIGTERM or SIGINT, then exit 0 (a pod's pause container)",
		// An image's command, not a person's: kept out of --help.
		Hidden: true,
		Long: `Sleep until the process receives SIGTERM or SIGINT, then exit 0: what a
pause container does. An image of the ontime binary whose command is
"pause" is a pause image built without pulling anything; the local
cluster's real node (hack/real-node.sh) uses one as containerd's sandbox
image and as the placeholders' image.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The root command's context ends on SIGTERM and SIGINT.
			fmt.Fprintln(cmd.OutOrStdout(), "pausing until SIGTERM or SIGINT")
			<-cmd.Context().Done()
			return nil
		},
	}
}
