// Package verdict is `debugflow-step verdict`.
package verdict

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdVerdict is the verdict verb; its flags are the tags of steps.VerdictOptions.
func NewCmdVerdict(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.VerdictOptions]{
		Use:   "verdict",
		Short: "Exit with the reproducer's pytest exit code (6 when the setup failed, 1 when it never ran)",
		Example: `  # last step of the job: red when the bug reproduced
  debugflow-step verdict --out /tmp/repro`,
		Run: func(cmd *cobra.Command, o *steps.VerdictOptions, args []string) error {
			return steps.RunVerdict(env, *o)
		},
	})
}
