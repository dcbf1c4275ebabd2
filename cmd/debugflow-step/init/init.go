// Package initcmd is `debugflow-step init`.
package initcmd

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdInit is the init verb; its flags are the tags of steps.InitOptions.
func NewCmdInit(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.InitOptions]{
		Use:   "init",
		Short: "Make the job's evidence folder, fresh and its own, and hand it to the later steps as $" + steps.EvidenceEnv,
		Example: `  # first step of the job: a folder under the runner's own temporary folder
  debugflow-step init --root "$RUNNER_TEMP" --link /tmp/repro
  # a folder of your choice, emptied: new, empty or an earlier evidence folder (else exit 2)
  debugflow-step init --out ./evidence`,
		Run: func(cmd *cobra.Command, o *steps.InitOptions, args []string) error {
			_, err := steps.RunInit(env, *o)
			return err
		},
	})
}
