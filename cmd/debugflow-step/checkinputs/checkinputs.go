// Package checkinputs is `debugflow-step check-inputs`.
package checkinputs

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdCheckInputs is the check-inputs verb; its flags are the tags of steps.CheckInputsOptions.
func NewCmdCheckInputs(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.CheckInputsOptions]{
		Use:   "check-inputs",
		Short: "Check the workflow inputs the later steps parse, before anything is installed or built",
		Example: `  debugflow-step check-inputs --count "$REPRODUCE_COUNT" --count-input reproduce_count \
    --tmate-timeout-minutes "$TMATE_TIMEOUT_MINUTES" --tmate-timeout-input tmate_timeout_minutes`,
		Run: func(cmd *cobra.Command, o *steps.CheckInputsOptions, args []string) error {
			return steps.RunCheckInputs(env, *o)
		},
	})
}
