package main

import (
	"github.com/debugflow/debugflow/cmd/internal/factory"

	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/internal/version"
)

// addVersion gives the root command --version and adds `debugflow version`.
func addVersion(root *cobra.Command, f *factory.Factory) {
	stdout := f.Stdout()
	info := version.Get()
	root.Version = info.String()
	root.SetVersionTemplate(info.Text("debugflow"))
	var asJSON bool
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
			if asJSON {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			_, err := fmt.Fprint(stdout, info.Details("debugflow"))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build as JSON")
	root.AddCommand(cmd)
}
