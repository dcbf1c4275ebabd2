// Package summary is `debugflow-step summary`.
package summary

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdSummary is the summary verb; its flags are the tags of steps.SummaryOptions.
func NewCmdSummary(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.SummaryOptions]{
		Use:     "summary",
		Short:   "Write the verdict Markdown to $GITHUB_STEP_SUMMARY (stdout when unset) and DIR/summary.md",
		Example: `  debugflow-step summary --out /tmp/repro --artifact debug_cuda_repro_artifacts`,
		Run: func(cmd *cobra.Command, o *steps.SummaryOptions, args []string) error {
			return steps.RunSummary(env, *o)
		},
	})
}
