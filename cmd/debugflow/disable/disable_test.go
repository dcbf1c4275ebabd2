package disable

import (
	"testing"

	"github.com/debugflow/debugflow/cmd/debugflow/internal/siblingstest"
	"github.com/debugflow/debugflow/internal/generate/siblings"
)

// TestDisable: the flags fill siblings.Options, --all (enable's) and stray arguments are
// refused, a dry run renames through siblings.Disable, the help says what disable does.
func TestDisable(t *testing.T) {
	siblingstest.Check(t, siblingstest.Command[DisableOptions]{
		New:     NewCmdDisable,
		Options: func(o *DisableOptions) siblings.Options { return o.Options },
		Flags: []siblingstest.FlagCase{
			{Name: "defaults", Want: siblings.Options{Dir: siblings.DefaultDir}},
			{Name: "all flags", Args: []string{"--dir", "x/wf", "--keep", "debug.yml", "--keep", "debug-*.yaml", "--dry-run"},
				Want: siblings.Options{Dir: "x/wf", Keep: []string{"debug.yml", "debug-*.yaml"}, DryRun: true}},
			{Name: "keep with a comma stays one glob", Args: []string{"--keep", "{a,b}.yml"},
				Want: siblings.Options{Dir: siblings.DefaultDir, Keep: []string{"{a,b}.yml"}}},
		},
		Rejected:  [][]string{{"stray"}, {"--all"}, {"--keep", "["}}, // disable has no --all; "[" is no glob
		HelpWants: []string{"Examples:", "debugflow disable", "--dry-run", "--dir", "nothing changes", siblings.ManifestName, "git add", "stay disabled"},
		RunWant:   "1 would rename",
	})
}
