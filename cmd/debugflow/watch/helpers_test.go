package watch

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
)

// watchCmd is the command as debugflow's root adds it.
func watchCmd(f *ghcmd.Factory) *cobra.Command { return NewCmdWatch(f, nil) }
