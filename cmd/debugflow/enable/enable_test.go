package enable

import (
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/siblingstest"
	"github.com/debugflow/debugflow/internal/generate/siblings"
)

// TestEnable: the flags fill siblings.Options, --keep (debugflow's main adds its own) and
// stray arguments are refused, a dry run goes through siblings.Enable, the help says what
// enable does.
func TestEnable(t *testing.T) {
	siblingstest.Check(t, siblingstest.Command[EnableOptions]{
		New:     NewCmdEnable,
		Options: func(o *EnableOptions) siblings.Options { return o.Options },
		Flags: []siblingstest.FlagCase{
			{Name: "enable", Args: []string{"--dir", "wf", "--dry-run"}, Want: siblings.Options{Dir: "wf", DryRun: true}},
			{Name: "enable --all", Args: []string{"--all"}, Want: siblings.Options{Dir: siblings.DefaultDir, All: true}},
		},
		Rejected: [][]string{{"stray"}, {"--keep", "x"}},
		HelpWants: []string{"Examples:", "debugflow enable", "--dry-run", "--dir", "nothing changes", siblings.ManifestName,
			"--all", "debugflow enable --all", "left disabled (not disabled by debugflow)", "nothing to enable", "record is stale"},
		RunWant: "nothing to enable",
	})
}
