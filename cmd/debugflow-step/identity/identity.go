// Package identity is `debugflow-step identity`.
package identity

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdIdentity is the identity verb; its flags are the tags of steps.IdentityOptions.
func NewCmdIdentity(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.IdentityOptions]{
		Use:   "identity",
		Short: "Write system_identity.txt and take the dmesg snapshot \"start\"",
		Example: `  # first step of the job, before anything is installed
  debugflow-step identity --out /tmp/repro --python python
  # after the install and build steps: add the sanitizer version and the installed packages
  debugflow-step identity --out /tmp/repro --python python --after-build`,
		Run: func(cmd *cobra.Command, o *steps.IdentityOptions, args []string) error {
			return steps.RunIdentity(cmd.Context(), env, *o)
		},
	})
}
