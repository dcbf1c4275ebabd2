package main

import (
	"fmt"

	"github.com/debugflow/debugflow/siblings"
	"github.com/spf13/cobra"
)

// addSiblingCmds wires disable and enable; disable always keeps the spec's own workflow.
func addSiblingCmds(root *cobra.Command) {
	disable := siblings.NewCmdDisable()
	disable.PreRunE = func(cmd *cobra.Command, args []string) error {
		specPath, _ := cmd.Flags().GetString("spec")
		s, _, err := loadSpec(specPath)
		if err != nil {
			return err
		}
		// --keep is a string array: Set appends to the user's globs.
		if err := cmd.Flags().Set("keep", s.Workflow.File); err != nil {
			return fmt.Errorf("keeping %s: %w", s.Workflow.File, err)
		}
		return nil
	}
	disable.Long += "\n\nThe workflow of the spec (--spec, ./debugflow.yaml or the default) is always kept."
	enable := siblings.NewCmdEnable()
	enableRemovesBundle(enable)
	root.AddCommand(disable, enable)
}
