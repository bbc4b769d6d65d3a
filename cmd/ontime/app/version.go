package app

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/ontime-dev/ontime/cmd/ontime/app/cli"
)

// version is set at build time:
// go build -ldflags "-X github.com/ontime-dev/ontime/cmd/ontime/app.version=v0.1.0".
var version = "dev"

func newVersionCommand() *cobra.Command {
	var output cli.Output
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the ontime version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.Check(); err != nil {
				return err
			}
			info := versionInfo{Version: version, Revision: buildRevision(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
			if output.Structured() {
				return output.Write(cmd.OutOrStdout(), info)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "ontime %s (%s, %s)\n", info.Version, info.Revision, info.Platform)
			return err
		},
	}
	output.Bind(cmd, "text", "json", "yaml")
	return cmd
}

// versionInfo is what ontime version prints.
type versionInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Platform string `json:"platform"`
	Go       string `json:"go"`
}

// buildRevision returns the VCS revision the binary was built from, when the
// Go toolchain recorded it.
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return runtime.Version()
	}
	revision, modified := "", false
	for _, setting := range info.Settings {
		switch setting.Key {
		case "vcs.revision":
			revision = setting.Value
		case "vcs.modified":
			modified = setting.Value == "true"
		}
	}
	if revision == "" {
		return info.GoVersion
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if modified {
		revision += "-dirty"
	}
	return revision + ", " + info.GoVersion
}
