// Package refinfo is `debugflow-step ref-info`.
package refinfo

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdRefInfo is the ref-info verb; its flags are the tags of steps.RefInfoOptions.
func NewCmdRefInfo(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.RefInfoOptions]{
		Use:   "ref-info",
		Short: "Write ref.json: which ref, commit and runner this job of an experiment measured",
		Example: `  # in a job of the experiment workflow, after the checkout
  debugflow-step ref-info --out /tmp/repro --name "$REF_NAME" --ref "$REF" --runner "$RUNNER" \
    --round "$ROUND" --rounds "$ROUNDS"`,
		Run: func(cmd *cobra.Command, o *steps.RefInfoOptions, args []string) error {
			return steps.RunRefInfo(cmd.Context(), env, *o)
		},
	})
}
