// Package version is `debugflow version`: this build's version, revision and the step binary
// checksums it knows.
package version

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/version"
)

// VersionOptions are the flags of `debugflow version`.
type VersionOptions struct {
	JSON   bool
	Info   version.Info // this build
	Stdout io.Writer
}

// NewCmdVersion returns `debugflow version`; runF nil runs runVersion. The root's --version
// prints the same build (version.Get).
func NewCmdVersion(f *factory.Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{Info: version.Get(), Stdout: f.Stdout()}
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print debugflow's version, revision and the step binary checksums it knows",
		Long: `Print the version of this debugflow: the module version (a release such as v0.2.0, a
Go pseudo-version for a build from a checkout, or (devel)), the VCS revision and whether the
tree was modified, the Go toolchain and platform. A release build also lists the SHA-256 of
its debugflow-step release archives, which generated workflows pin (step_binary.delivery:
release). debugflow-step --version prints the same version line for the same build.`,
		Example: `  debugflow version
  debugflow --version
  debugflow version --json | jq -r .version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runVersion(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the build as JSON")
	return cmd
}

func runVersion(opts *VersionOptions) error {
	if opts.JSON {
		enc := json.NewEncoder(opts.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(opts.Info)
	}
	_, err := fmt.Fprint(opts.Stdout, opts.Info.Details("debugflow"))
	return err
}
