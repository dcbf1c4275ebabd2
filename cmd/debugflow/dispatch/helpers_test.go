package dispatch

import (
	"github.com/spf13/cobra"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd"
	"github.com/debugflow/debugflow/cmd/debugflow/internal/ghcmd/ghcmdtest"
)

// The shared fakes under the names the tests had in package ghrun.
const (
	testToken = ghcmdtest.Token
	wfFile    = ghcmdtest.WorkflowFile
)

var (
	fixedNow     = ghcmdtest.FixedNow
	newServer    = ghcmdtest.NewServer
	newHarness   = ghcmdtest.NewHarness
	evidenceZip  = ghcmdtest.EvidenceZip
	makeZip      = ghcmdtest.MakeZip
	ghtestRun    = ghcmdtest.FinishedRun
	itoa64       = ghcmdtest.Itoa64
	testWorkflow = ghcmdtest.Workflow
	inputNames   = ghcmdtest.InputNames
)

type (
	harness  = ghcmdtest.Harness
	zipEntry = ghcmdtest.ZipEntry
)

// dispatchCmd is the command as debugflow's root adds it.
func dispatchCmd(f *ghcmd.Factory) *cobra.Command { return NewCmdDispatch(f, nil) }
