package dispatch

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
)

// dispatchCmd is the command as debugflow's root adds it.
func dispatchCmd(f *ghcmd.Factory) *cobra.Command { return NewCmdDispatch(f, nil) }
