// Package xid is `debugflow-step xid`.
package xid

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow-step/internal/verb"
	"github.com/debugflow/debugflow/steps"
)

// NewCmdXid is the xid verb; its flags are the tags of steps.XidOptions.
func NewCmdXid(env *steps.Env) *cobra.Command {
	return verb.New(verb.Verb[steps.XidOptions]{
		Use:     "xid",
		Short:   "Take the final dmesg snapshot and write xid_summary.txt",
		Example: `  debugflow-step xid --out /tmp/repro`,
		Run: func(cmd *cobra.Command, o *steps.XidOptions, args []string) error {
			_, err := steps.RunXid(cmd.Context(), env, *o)
			return err
		},
	})
}
