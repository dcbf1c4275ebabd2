// Package dmesg is `debugflow-step dmesg`.
package dmesg

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdDmesg is the dmesg verb and its one subcommand, snapshot, whose flags are the tags of
// steps.DmesgOptions.
func NewCmdDmesg(env *steps.Env) *cobra.Command {
	parent := &cobra.Command{
		Use:   "dmesg",
		Short: "Kernel log snapshots",
		Args:  verb.NoArgs,
	}
	parent.AddCommand(verb.New(verb.Verb[steps.DmesgOptions]{
		Use:   "snapshot --name NAME",
		Short: "Save dmesg_NAME.log and print how many lines are new since the previous snapshot",
		Example: `  debugflow-step dmesg snapshot --out /tmp/repro --name before_rerun
  # tests: read a file instead of the kernel log
  debugflow-step dmesg snapshot --out /tmp/repro --name t1 --source ./kern.log`,
		Run: func(cmd *cobra.Command, o *steps.DmesgOptions, args []string) error {
			if o.Name == "" {
				return verb.Usagef("--name is required")
			}
			return steps.RunDmesgSnapshot(cmd.Context(), env, *o)
		},
	}))
	return parent
}
