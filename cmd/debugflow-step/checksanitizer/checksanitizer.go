// Package checksanitizer is `debugflow-step check-sanitizer`.
package checksanitizer

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdCheckSanitizer is the check-sanitizer verb; its flags are the tags of steps.CheckSanitizerOptions.
func NewCmdCheckSanitizer(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.CheckSanitizerOptions]{
		Use:   "check-sanitizer",
		Short: "Fail fast when compute-sanitizer is missing; print its version",
		Example: `  # right after the step that installs nvidia-cuda-toolkit
  debugflow-step check-sanitizer`,
		Run: func(cmd *cobra.Command, o *steps.CheckSanitizerOptions, args []string) error {
			return steps.RunCheckSanitizer(cmd.Context(), env, *o)
		},
	})
}
