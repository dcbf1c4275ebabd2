// Package export is `debugflow-step export`.
package export

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdExport is the export verb; its flags are the tags of steps.ExportOptions.
func NewCmdExport(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.ExportOptions]{
		Use:   "export --name NAME --command CMD [--path SUBDIR]",
		Short: "Set a variable for the later steps from a command's output ($GITHUB_ENV, $GITHUB_PATH)",
		Example: `  # LLVM_DIR for the later steps, and $LLVM_DIR/bin on their PATH
  debugflow-step export --name LLVM_DIR --path bin --command 'python download_llvm.py | tail -n 1'
  debugflow-step export --name BUILD_DIR --command 'ls -d "$PWD"/_skbuild/*/cmake-build | head -n 1'`,
		Run: func(cmd *cobra.Command, o *steps.ExportOptions, args []string) error {
			return steps.RunExport(cmd.Context(), env, *o)
		},
	})
}
