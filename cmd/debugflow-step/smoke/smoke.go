// Package smoke is `debugflow-step smoke`.
package smoke

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdSmoke is the smoke verb; its flags are the tags of steps.SmokeOptions.
func NewCmdSmoke(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.SmokeOptions]{
		Use:   "smoke --command CMD [--log FILE]",
		Short: "Check the build before the sweep; on failure stop the job with the reason in the step summary",
		Example: `  debugflow-step smoke --out /tmp/repro --log cuda_init.log \
    --command 'python -c "import quadrants as qd; qd.init(arch=qd.cuda, enable_fallback=False)"'`,
		Run: func(cmd *cobra.Command, o *steps.SmokeOptions, args []string) error {
			return steps.RunSmoke(cmd.Context(), env, *o)
		},
	})
}
