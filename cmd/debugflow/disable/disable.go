// Package disable is `debugflow disable`: rename the other workflows of a debug branch to *.disabled. The behaviour is
// siblings.Disable; this package is its flags and help (debugflow's main adds what depends on
// the spec).
package disable

import (
	"github.com/debugflow/debugflow/cmd/debugflow/internal/cmdutil"
	"github.com/spf13/cobra"
	"path/filepath"

	"github.com/debugflow/debugflow/cmd/internal/factory"
	"github.com/debugflow/debugflow/internal/generate/siblings"
)

// DisableOptions are the parsed flags of one disable.
type DisableOptions struct {
	siblings.Options
}

// NewCmdDisable returns `debugflow disable`. runF replaces the behaviour (tests check the flag
// parsing with it); nil runs siblings.Disable.
func NewCmdDisable(f *factory.Factory, runF func(*DisableOptions) error) *cobra.Command {
	opts := &DisableOptions{}
	cmd := &cobra.Command{
		Use:   "disable [--keep GLOB]... [flags]",
		Short: "Rename the other workflows to *.disabled so only the debug workflow runs",
		Long: `Rename every *.yml and *.yaml file in the workflows directory to <name>.disabled,
except the files whose names match a --keep glob (the debug workflow). GitHub
does not run files with other extensions, so a push of the debug branch runs
only the kept workflows. Undo with "debugflow enable".

The original names of the renamed workflows are recorded in the manifest
` + siblings.ManifestName + ` in the workflows directory, one per line with a fingerprint
of the file. "debugflow enable" renames exactly those back, so workflows the
repository had already disabled (old.yml.disabled) stay disabled. Running
disable again adds what it renames to the manifest; the entries recorded
earlier stay while they still describe the tree (a stale entry is dropped and
said so). A symbolic link is renamed itself, its target unchanged.

Every file is checked before anything is renamed: if a target already exists,
or a name is a directory or cannot be read, nothing changes and every conflict
is listed (exit status 1). Running it again changes nothing and says so.
Inside a Git work tree, tracked files are moved with "git mv" and the manifest
is staged with "git add", so the next commit carries both. --dry-run prints
the plan and writes nothing, not even the manifest.

Ctrl-C (or SIGTERM) undoes what the run did and exits 130. The manifest is
written before the first rename, so after any other interruption (SIGKILL, a
crash) running disable again finishes the run and enable undoes it.`,
		Example: `  # keep only the debug workflow, and commit it with the renames
  debugflow disable --keep debug-cuda.yml
  git add .github/workflows/debug-cuda.yml && git commit -m "debug branch: only the debug workflow runs"

  # see what would happen
  debugflow disable --keep 'debug-*.yml' --dry-run

  # what enable will rename back
  cat .github/workflows/` + siblings.ManifestName + `

  # a workflows directory elsewhere
  debugflow disable --dir path/to/repo/.github/workflows --keep debug-cuda.yml`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: false,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = f.Stdout()
			for _, k := range opts.Keep {
				// A bad glob is a typo in the command line: exit 2, before anything is read.
				if _, err := filepath.Match(k, ""); err != nil {
					return cmdutil.UsageErrorf("--keep %q: %v (a glob: *, ?, [abc]; quote it for the shell)", k, err)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			_, err := siblings.Disable(cmd.Context(), opts.Options)
			return err
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", siblings.DefaultDir, "workflows directory")
	cmd.Flags().StringArrayVar(&opts.Keep, "keep", nil, "leave workflows whose file name matches `GLOB` enabled (repeatable)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan; rename and write nothing")
	return cmd
}
