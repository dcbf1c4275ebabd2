package download

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
)

// downloadCmd is the command as debugflow's root adds it.
func downloadCmd(f *ghcmd.Factory) *cobra.Command { return NewCmdDownload(f, nil) }
